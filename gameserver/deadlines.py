"""When the engine's clock alone can next change a round in progress (see ``RoundEngine.next_deadline``)."""

from __future__ import annotations

import math

from gameserver.model import EngineConfig, Phase, RoundRecord


def round_deadline(r: RoundRecord, config: EngineConfig) -> float | None:
    """The earliest time at which a tick may change the round ``r`` in progress (close betting, void SH-4a,
    pause on no result, cancel a pause, apply a held report); None when only a report or a call can."""
    if r.paused_reason is not None:
        assert r.paused_at is not None
        return r.paused_at + config.pause_timeout_s
    times = []
    if r.held:
        times.append(r.held[0].at + config.reorder_grace_s)
    if r.phase is Phase.BETTING:
        times.append(r.closes_at)
    if r.shake_due is not None:
        times.append(r.shake_due)
    if r.phase is Phase.CLOSED:
        since = r.awaiting_since
        if since is not None:
            times.append(since + config.result_timeout_s)
        elif config.result_timeout_s <= 0:
            times.append(-math.inf)
    return min(times) if times else None
