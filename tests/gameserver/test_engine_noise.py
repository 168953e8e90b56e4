"""A noisy line grows neither the event log nor memory: ignored reports are counted with a bounded sample, and
one line may hold at most ``MAX_HELD_PER_LINE`` reports in a round (the rest are ignored ``hold_full``), while
another line's held reports are still applied on resume."""

from __future__ import annotations

from gameserver.events import EventKind, ReportKind, TableReport
from gameserver.noise import SAMPLE
from gameserver.ordering import MAX_HELD_PER_LINE
from tests.gameserver.gs_helpers import Table


def test_reports_during_a_pause_are_held_up_to_a_bound_per_line() -> None:
    t = Table().open_round()
    t.shake()
    t.engine.pause("check")
    t.flush()
    for _ in range(10_000):
        t.engine.report(TableReport(ReportKind.BOWL_ON, "noisy"))
    t.engine.report(TableReport(ReportKind.BOWL_OFF, "bowl"))  # another line: held as usual (SH-4b on resume)
    events = t.flush()
    assert [e.kind for e in events].count(EventKind.REPORT_HELD) == MAX_HELD_PER_LINE + 1
    r = t.engine.active
    assert r is not None and len(r.held) == MAX_HELD_PER_LINE + 1
    assert t.engine.ignored.counts[("noisy", "bowl_on", "hold_full")] == 10_000 - MAX_HELD_PER_LINE
    assert len(t.engine.ignored.sample) == SAMPLE
    t.engine.resume()
    t.flush()
    assert t.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-4b"


def test_ignored_reports_add_no_event() -> None:
    t = Table()
    for _ in range(1000):
        t.send(ReportKind.RESULT, faces="RRRR")  # no round in progress
    assert EventKind.REPORT_IGNORED not in t.kinds() and len(t.log) == 2  # the two wallets only
    assert t.engine.ignored.to_json()["counts"] == {"test": {"result": {"no_round": 1000}}}
