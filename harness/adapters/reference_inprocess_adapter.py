"""Alias kept for bench files: :class:`harness.bench.adapters.reference_inprocess.InProcessAdapter`."""

from harness.bench.adapters.reference_inprocess import InProcessAdapter

__all__ = ["InProcessAdapter"]
