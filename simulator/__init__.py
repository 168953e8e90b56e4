"""A seeded SimPy model of the Xoc Dia table: tokens, shaker and bowl, dealer, players and their networks.

Pure: no sockets, no serial, no wall clock. Everything it knows is emitted as ground-truth events
(:mod:`simulator.events`).
"""
