"""Alias kept for labs: :mod:`harness.bench.adapters.loader`."""

from harness.bench.adapters.loader import load_adapter

__all__ = ["load_adapter"]
