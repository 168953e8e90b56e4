"""Alias kept for bench files: :class:`harness.bench.adapters.reference_http.HttpAdapter`."""

from harness.bench.adapters.reference_http import HttpAdapter

__all__ = ["HttpAdapter"]
