"""Benches: bench files (:mod:`harness.bench.config`) and the rig that wires one up (:mod:`harness.bench.rig`)."""
