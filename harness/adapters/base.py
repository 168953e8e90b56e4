"""Alias kept for labs: :mod:`harness.bench.adapters.base` (the adapter interface and the records it uses)."""

from harness.bench.adapters.base import *  # noqa: F403
from harness.bench.adapters.base import __all__ as __all__
