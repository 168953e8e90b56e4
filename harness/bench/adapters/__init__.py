"""Game-server adapters: the interface (:mod:`harness.bench.adapters.base`), the reference server's in-process
and HTTP/WebSocket adapters, :func:`load_adapter` for a lab's own class named by dotted path, and a test double that
rewrites what any adapter reports (:mod:`harness.bench.adapters.rewriting`)."""

from harness.bench.adapters.base import *  # noqa: F403
from harness.bench.adapters.base import __all__ as _interface
from harness.bench.adapters.loader import load_adapter

__all__ = [*_interface, "load_adapter"]
