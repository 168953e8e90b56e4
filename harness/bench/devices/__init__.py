"""Emulated table devices (bowl sensor, shaker, result reader, lamp, dealer console) driven by the simulator's
ground-truth events and speaking the wire protocol over any transport."""
