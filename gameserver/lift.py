"""What a lift of the bowl establishes (RULES.md "Precedence of void causes", PROC-2): the void cause it decides, or
none when the round goes on to the read."""

from __future__ import annotations

from gameserver import ordering
from gameserver.events import TableReport
from gameserver.model import Phase, RoundRecord


def lift_void(r: RoundRecord, report: TableReport) -> tuple[str, str] | None:
    """The void ``(clause, reason)`` a ``BOWL OFF`` decides for round ``r`` (not yet lifted), or None. In order:
    a lift during betting (SH-4b); a read received before the close that waits for this lift (SH-4b: the tokens were
    seen during betting); a bowl the sensor never reported on the plate since the tokens were placed or the last lift
    (SH-4a: no shake under the bowl, established at the close; the sensor's ON and OFF share one line, in order);
    no shake started at all (SH-4a, established at the close, so before a touch on this later lift); a touch
    (SH-5); a shake left incomplete (SH-4a)."""
    if r.phase is Phase.BETTING:
        return "SH-4b", "bowl lifted before betting closed"
    if any(h.why == ordering.AWAITING_LIFT and ordering.happened(h) < r.closes_at for h in r.held):
        return "SH-4b", "tokens read before betting closed (the lift was reported late)"
    if not r.covered:
        return "SH-4a", "bowl lifted but never reported on the plate"
    if not r.ever_shaken:
        return "SH-4a", "no shake started before betting closed (a touch on the later lift does not decide)"
    if report.touch:
        return "SH-5", f"bowl touched a token while lifted ({report.detail or '-'})"
    if not r.shaken:
        return "SH-4a", "bowl lifted without a complete shake"
    return None
