"""Game-server adapters: the interface (:mod:`harness.bench.adapters.base`), what an adapter may optionally do
(:mod:`harness.bench.adapters.capabilities`), the reference server's in-process and HTTP/WebSocket adapters,
:func:`load_adapter` for a lab's own class named by dotted path, and a test double that rewrites what any adapter
reports (:mod:`harness.bench.adapters.rewriting`)."""

from harness.bench.adapters.base import *  # noqa: F403
from harness.bench.adapters.base import __all__ as _interface
from harness.bench.adapters.capabilities import *  # noqa: F403
from harness.bench.adapters.capabilities import __all__ as _capabilities
from harness.bench.adapters.loader import load_adapter

__all__ = [*_interface, *(name for name in _capabilities if name not in _interface), "load_adapter"]
