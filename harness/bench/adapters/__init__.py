"""Game-server adapters: the interface (:mod:`harness.bench.adapters.base`), the reference server's in-process
and HTTP/WebSocket adapters, :func:`load_adapter` for a lab's own class named by dotted path, and a test double that
rewrites what any adapter reports (:mod:`harness.bench.adapters.rewriting`)."""

from harness.bench.adapters.base import (
    AdapterError,
    BetRecordRow,
    BetReply,
    GameServerAdapter,
    PlayerSpec,
    RoundEvent,
    ServerSetup,
)
from harness.bench.adapters.loader import load_adapter

__all__ = [
    "AdapterError",
    "BetRecordRow",
    "BetReply",
    "GameServerAdapter",
    "PlayerSpec",
    "RoundEvent",
    "ServerSetup",
    "load_adapter",
]
