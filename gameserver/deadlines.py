"""When the engine's clock alone can next change a round in progress (see ``RoundEngine.next_deadline``)."""

from __future__ import annotations

import math

from gameserver import ordering
from gameserver.model import EngineConfig, Phase, RoundRecord


def round_deadline(r: RoundRecord, config: EngineConfig) -> float | None:
    """The earliest time at which a tick may change the round ``r`` in progress (close betting, void SH-4a,
    pause on no result, cancel a pause, apply a held report); None when only a report or a call can."""
    if r.paused_reason is not None:
        assert r.paused_at is not None
        return r.paused_at + config.pause_timeout_s
    # hot path: asked on every service step; the earliest of the candidates, kept as min() keeps it (first wins)
    due: float | None = None
    if r.held and (expiry := ordering.expiry(r, config.reorder_grace_s)) is not None:
        due = expiry[1]
    if r.phase is Phase.BETTING and (due is None or r.closes_at < due):
        due = r.closes_at
    if r.shake_due is not None and (due is None or r.shake_due < due):
        due = r.shake_due
    if r.phase is Phase.CLOSED:
        since = r.awaiting_since
        if since is not None:
            if due is None or since + config.result_timeout_s < due:
                due = since + config.result_timeout_s
        elif config.result_timeout_s <= 0 and (due is None or -math.inf < due):
            due = -math.inf
    return due
