"""Round tags (docs/protocol.md §6): a device report tagged with another round than the one in progress is
ignored, so a frame held up past the end of its round cannot settle, void or shake the next one (the
harness's finding `fixtures/faults/finding-stale-result.yaml`). Untagged reports keep the time rule."""

from __future__ import annotations

from gameserver.events import EventKind, ReportKind, TableReport
from gameserver.gateway import to_report
from gameserver.protocol import Frame, encode, parse
from tests.gameserver.gs_helpers import Table

R = ReportKind


def tagged(t: Table, kind: ReportKind, tag: str, faces: str | None = None, touch: bool = False) -> None:
    t.engine.report(TableReport(kind, "test", faces=faces, touch=touch, round_tag=tag))
    t.flush()


def second_round_shaken_and_closed() -> tuple[Table, int]:
    """Round 1 is cancelled before its reveal; round 2 is open with a bet, shaken, betting closed."""
    t = Table().open_round()
    t.shake()
    t.engine.cancel("server restart stand-in")
    t.flush()
    t.open_round()
    bet = t.bet("alice", "two_red", 1000)
    t.shake()
    t.close_betting()
    return t, bet


def test_a_stale_read_tagged_with_the_previous_round_does_not_settle_the_next() -> None:
    t, bet = second_round_shaken_and_closed()
    tagged(t, R.BOWL_OFF, "1")
    tagged(t, R.RESULT, "1", faces="WRRW")  # round 1's reveal, delivered late
    assert [s["why"] for s in t.engine.ignored.sample] == ["other_round"] * 2
    assert EventKind.REPORT_IGNORED not in t.kinds()  # counted, not logged
    assert t.engine.active is not None and not t.engine.active.lifted
    tagged(t, R.BOWL_OFF, "2")
    tagged(t, R.RESULT, "2", faces="WRWW")
    settled = t.last(EventKind.ROUND_SETTLED)
    assert settled.round_id == 2 and settled.data["faces"] == "WRWW"
    assert [(b["bet_id"], b["result"], b["returned"]) for b in settled.data["bets"]] == [(bet, "lose", 0)]


def test_a_stale_lift_does_not_void_the_next_round() -> None:  # not SH-4b
    t = Table().open_round()
    t.engine.cancel("")
    t.flush()
    t.open_round()
    tagged(t, R.BOWL_OFF, "1", touch=True)
    assert EventKind.ROUND_VOIDED not in t.kinds()
    assert t.engine.active is not None


def test_a_stale_resolved_does_not_resume_another_rounds_pause() -> None:  # ERR-2 belongs to its round
    t = Table().open_round()
    t.engine.cancel("")
    t.flush()
    t.open_round()
    t.send(R.PROBLEM)
    tagged(t, R.RESOLVED, "1")
    assert t.engine.active is not None and t.engine.active.paused_reason is not None
    tagged(t, R.RESOLVED, "2")
    assert t.engine.active.paused_reason is None


def test_untagged_reports_still_apply_to_the_round_in_progress() -> None:  # protocol v1 devices
    t, _bet = second_round_shaken_and_closed()
    t.reveal("RRWW")
    assert t.last(EventKind.ROUND_SETTLED).round_id == 2


def test_the_gateway_carries_a_frames_round_tag_to_the_engine() -> None:
    frame = parse(encode(3, "BOWL", "OFF", (("touch", "0"), ("token", "-"), ("round", "R000017"))))
    assert isinstance(frame, Frame) and frame.round_tag == "R000017"
    report = to_report("bowl", frame)
    assert report == TableReport(R.BOWL_OFF, "bowl", detail="token -", round_tag="R000017")
    plain = parse(encode(3, "BOWL", "OFF", (("touch", "0"), ("token", "-"))))
    assert isinstance(plain, Frame)
    assert to_report("bowl", plain) == TableReport(R.BOWL_OFF, "bowl", detail="token -")
