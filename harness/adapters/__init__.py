"""Alias kept for labs: the adapter interface lives in :mod:`harness.bench.adapters`. Bench files and lab code
that name ``harness.adapters...`` keep working; new code imports from ``harness.bench.adapters``."""

from harness.bench.adapters import *  # noqa: F403
from harness.bench.adapters import __all__ as __all__
