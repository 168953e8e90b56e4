"""Cross-line ordering: which table reports the engine holds back instead of applying them on arrival.

Each device has its own line, and the lines are independent: a frame can arrive before a frame another
device sent earlier (retransmission, a busy line, the reader's processing time). The engine applies a report
on arrival unless the report only makes physical sense after a report from *another* line that has not
arrived yet; then it holds the report for at most ``EngineConfig.reorder_grace_s`` (default 0.5 s):

| report | held while | because the table must first have sent |
|---|---|---|
| `READER RESULT` / `REARRANGED` | the bowl is not lifted | `BOWL OFF` (the reader sees the faces once it is off) |
| `SHAKER START` / `END` / `DROP` | the bowl is lifted | the read that asks for a re-shake (SH-3: a standing token) |
| `BOWL OFF` (betting closed) | a shake is in progress | `SHAKER END` / `DROP` (nobody lifts the bowl while shaking) |
| `BOWL ON`, `SHAKER *` | an earlier read waits for its lift | `BOWL OFF` (these are the re-shake's) |

A held report is applied as soon as the state it waits for is reached (the engine retries the held reports, in
arrival order, after every report it applies). A read waiting for a lift that has arrived but is held itself (a
``BOWL OFF`` waiting for ``SHAKER END``) waits on until that lift is applied, however its own window stands
(:func:`expiry`): what it waits for is no longer missing, only ordered, and the lift's own window bounds the wait.
Otherwise, when its grace window ends first, it is applied as if it had not been held: a read before a lift or a
shaker report while lifted is then ignored (counted in ``RoundEngine.ignored``), a lift during a shake voids SH-4a.
A lift during betting is never held (SH-4b needs no other line), and a lift that arrives after the close while a
read received before the close waits for it is SH-4b too (the reader saw the tokens during betting: the bowl was off
then, only its report was late).

Device time (protocol 1.2, ``TableReport.happened_at``) overrides arrival order where it says more: a
``BOWL OFF`` that happened during betting voids SH-4b whenever it arrives (:func:`lifted_during_betting`,
checked before any hold), and a held read counts as received before the close when its device time says so
(:func:`happened`).

Independently, while a round is paused every table report except ``CONSOLE PROBLEM``/``RESOLVED`` is held
with ``why="paused"`` and replayed, in order, when the round resumes: the table did those things (a dealer
who shakes during a pause did shake).
"""

from __future__ import annotations

from gameserver.events import ReportKind, TableReport
from gameserver.model import HeldReport, Phase, RoundRecord

PAUSED = "paused"
AWAITING_LIFT = "awaiting_lift"
AWAITING_READ = "awaiting_read"
AWAITING_SHAKE_END = "awaiting_shake_end"
#: Reports one device line may have held in a round; more are ignored (``hold_full``), so a line that keeps
#: talking during a pause grows neither memory nor the event log.
MAX_HELD_PER_LINE = 64

_READS = frozenset({ReportKind.RESULT, ReportKind.REARRANGED})
_SHAKER = frozenset({ReportKind.SHAKE_START, ReportKind.SHAKE_END, ReportKind.DROP})
#: Reports of a re-shake (the bowl put back, the shake): after a read that waits for its lift, they wait for it too.
_AFTER_A_READ = frozenset({*_SHAKER, ReportKind.BOWL_ON})


def hold_reason(r: RoundRecord, report: TableReport) -> str | None:
    """Why ``report`` cannot be applied to round ``r`` yet (one of the ``AWAITING_*`` names), or None when it
    applies now. Pure: looks at the round's state only."""
    kind = report.kind
    if kind in _READS and not r.lifted:
        return AWAITING_LIFT
    if kind in _SHAKER and r.lifted:
        return AWAITING_READ
    if kind in _AFTER_A_READ and r.held and _read_awaits_lift(r, report):
        return AWAITING_READ  # the reader saw the faces before this: the lift it waits for came first
    if kind is ReportKind.BOWL_OFF and r.phase is Phase.CLOSED and r.shaking and not r.lifted:
        return AWAITING_SHAKE_END
    return None


def _read_awaits_lift(r: RoundRecord, report: TableReport) -> bool:
    """Whether a read held for a lift not yet reported happened before ``report`` (by device time; without one,
    any such read counts: it arrived first)."""
    at = report.happened_at
    return any(h.why == AWAITING_LIFT and (at is None or happened(h) <= at) for h in r.held)


def expiry(r: RoundRecord, grace: float) -> tuple[int, float] | None:
    """The held report of round ``r`` whose grace window ends first, as its index in ``r.held`` and that time;
    None when nothing is held. A read waiting for a lift while a ``BOWL OFF`` is held has no window of its
    own: it is applied when that lift is, whose window bounds the wait."""
    best: tuple[int, float] | None = None
    chained: bool | None = None  # whether a lift is held: read once, when a read awaits one
    for i, held in enumerate(r.held):
        if held.why == AWAITING_LIFT:
            if chained is None:
                chained = any(h.report.kind is ReportKind.BOWL_OFF for h in r.held)
            if chained:
                continue
        due = held.at + grace
        if best is None or due < best[1]:
            best = (i, due)
    return best


def hold_full(r: RoundRecord, report: TableReport) -> bool:
    """True when ``report``'s line already has :data:`MAX_HELD_PER_LINE` reports held in round ``r``."""
    return sum(1 for h in r.held if h.report.device == report.device) >= MAX_HELD_PER_LINE


def lifted_during_betting(r: RoundRecord, report: TableReport) -> bool:
    """True when ``report`` is a ``BOWL OFF`` whose device time puts its fact inside round ``r``'s betting period
    (``opened_at <= happened_at < closes_at``); False when it has no device time."""
    at = report.happened_at
    return report.kind is ReportKind.BOWL_OFF and at is not None and r.opened_at <= at < r.closes_at


def happened(held: HeldReport) -> float:
    """When a held report's fact happened: its device time when it had one, else when it was received (the
    device time is never later, so it is the better bound)."""
    at = held.report.happened_at
    return held.at if at is None else min(at, held.at)
