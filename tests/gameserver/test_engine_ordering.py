"""Where device lines race (docs/benches.md): SH-3 wins over an overlap, what the table does during a pause is
applied on resume, and small cross-line reordering is absorbed by the reorder grace window
(gameserver/ordering.py). Payouts derived by hand from RULES.md's paytable."""

from __future__ import annotations

import pytest

from gameserver.events import EventKind, ReportKind
from gameserver.model import EngineConfig
from tests.gameserver.gs_helpers import Table

R = ReportKind


def opened(config: EngineConfig | None = None) -> Table:
    return Table(config).open_round()


def settled_lines(t: Table) -> dict[int, tuple[str, int]]:
    return {line["bet_id"]: (line["result"], line["returned"]) for line in t.last(EventKind.ROUND_SETTLED).data["bets"]}


# ------------------------------------------------------------------ 1. SH-3 wins over SH-1
def test_standing_token_with_overlap_in_one_reveal_reshakes() -> None:  # SH-3 over SH-1
    t = opened()
    a = t.bet("alice", "two_red", 1000)
    t.shake()
    t.close_betting()
    t.send(R.BOWL_OFF)
    t.send(R.RESULT, faces="RSUW", overlap=True)
    assert t.last(EventKind.RESHAKE).data == {"reason": "standing", "count": 1, "clause": "SH-3"}
    assert EventKind.READ_OVERLAP not in t.kinds()
    t.shake()
    t.reveal("RWRW")
    assert settled_lines(t) == {a: ("win", 1000 + 1500)}  # two_red pays 1.5
    assert t.last(EventKind.ROUND_SETTLED).data["reshakes"] == 1


def test_standing_token_in_a_rearranged_read_reshakes() -> None:  # SH-3 after SH-1
    t = opened()
    t.shake()
    t.close_betting()
    t.send(R.BOWL_OFF)
    t.send(R.RESULT, faces="RUWW", overlap=True)
    t.send(R.REARRANGED, faces="RSWW")
    assert t.last(EventKind.RESHAKE).data["reason"] == "standing"
    assert t.engine.active is not None


def test_standing_and_unreadable_without_overlap_reshakes_not_pauses() -> None:  # SH-3 over ERR-1
    t = opened()
    t.shake()
    t.close_betting()
    t.reveal("SUWW")
    assert t.last(EventKind.RESHAKE).data["reason"] == "standing"
    assert EventKind.ROUND_PAUSED not in t.kinds()


# ------------------------------------------------------------------ 2. the table during a pause
def test_shake_during_a_pause_counts_after_resume() -> None:  # ERR-1, ERR-2, not SH-4a
    t = opened()
    a = t.bet("alice", "four_red", 1000)
    t.send(R.PROBLEM)
    t.shake()  # the dealer shakes while the supervisor is coming
    assert EventKind.SHAKE_DETECTED not in t.kinds()
    assert [e.data["why"] for e in t.log if e.kind is EventKind.REPORT_HELD] == ["paused"] * 3
    t.advance(2.0)
    t.send(R.RESOLVED)
    assert EventKind.SHAKE_DETECTED in t.kinds()
    t.close_betting()
    assert EventKind.ROUND_VOIDED not in t.kinds()
    t.reveal("RRRR")
    assert settled_lines(t) == {a: ("win", 1000 + 14_000)}  # four_red pays 14


def test_supervisor_resume_also_applies_what_happened_during_the_pause() -> None:  # ERR-2
    t = opened()
    t.engine.pause("check the camera")
    t.flush()
    t.send(R.SHAKE_START)
    t.send(R.DROP)  # a drop during the pause: SH-2 once the round resumes
    t.engine.resume()
    t.flush()
    assert t.last(EventKind.RESHAKE).data == {"reason": "drop", "count": 1, "clause": "SH-2"}
    assert t.kinds().index(EventKind.ROUND_RESUMED) < t.kinds().index(EventKind.RESHAKE)


def test_a_read_replayed_on_resume_that_pauses_again_keeps_the_rest_held() -> None:  # ERR-1 twice
    t = opened()
    t.shake()
    t.close_betting()
    t.send(R.BOWL_OFF)
    t.engine.pause("")
    t.flush()
    t.send(R.RESULT, faces="RUWW")  # unreadable, no overlap: pauses again when replayed
    t.send(R.RESULT, faces="RRWW")  # the reader's second try
    t.engine.resume()
    t.flush()
    assert t.last(EventKind.ROUND_PAUSED).data["reason"].startswith("unreadable_result")
    t.send(R.RESOLVED)
    assert t.last(EventKind.ROUND_SETTLED).data["faces"] == "RRWW"


def test_pause_timeout_drops_what_was_held() -> None:  # ERR-3
    t = opened(EngineConfig(auto_open=False, pause_timeout_s=10))
    a = t.bet("bob", "odd", 500)
    t.send(R.PROBLEM)
    t.shake()
    t.advance(10.0)
    cancelled = t.last(EventKind.ROUND_CANCELLED)
    assert [(b["bet_id"], b["returned"]) for b in cancelled.data["bets"]] == [(a, 500)]
    assert EventKind.SHAKE_DETECTED not in t.kinds()


# ------------------------------------------------------------------ 3. cross-line reordering
def test_result_overtaking_the_lift_is_applied_when_the_lift_arrives() -> None:
    t = opened()
    a = t.bet("alice", "small", 2000)
    t.shake()
    t.close_betting()
    t.send(R.RESULT, faces="WRWW")  # reader line faster than the bowl line
    assert t.last(EventKind.REPORT_HELD).data["why"] == "awaiting_lift"
    t.advance(0.3)
    t.send(R.BOWL_OFF)
    assert settled_lines(t) == {a: ("win", 2000 + 1920)}  # small pays 0.96


def test_reshake_start_overtaking_the_standing_read_is_kept() -> None:  # SH-3, not SH-4a
    t = opened()
    a = t.bet("bob", "one_red", 1000)
    t.shake()
    t.close_betting()
    t.send(R.BOWL_OFF)
    t.send(R.BOWL_ON)  # the bowl goes back on for the re-shake (protocol §7)
    t.send(R.SHAKE_START)  # the re-shake begins; the read asking for it is still on the reader's line
    t.advance(0.1)
    t.send(R.SHAKE_END)
    t.send(R.RESULT, faces="RWSW")
    assert t.last(EventKind.RESHAKE).data["reason"] == "standing"
    assert t.kinds()[-1] is EventKind.SHAKE_DETECTED  # the held shake applied after the re-shake
    t.reveal("WWWR")
    assert settled_lines(t) == {a: ("win", 1000 + 2800)}  # one_red pays 2.8


def test_lift_overtaking_the_shake_end_waits_for_it() -> None:
    t = opened()
    a = t.bet("alice", "even", 1000)
    t.send(R.BOWL_ON)
    t.send(R.SHAKE_START)
    t.close_betting()
    t.send(R.BOWL_OFF)
    assert t.last(EventKind.REPORT_HELD).data["why"] == "awaiting_shake_end"
    t.send(R.SHAKE_END)
    assert EventKind.BOWL_LIFTED in t.kinds()
    t.send(R.RESULT, faces="RRRR")
    assert settled_lines(t) == {a: ("win", 1000 + 960)}  # even pays 0.96


def test_a_read_before_the_lift_is_ignored_once_the_grace_window_ends() -> None:
    t = opened(EngineConfig(auto_open=False, reorder_grace_s=0.5))
    t.shake()
    t.close_betting()
    t.send(R.RESULT, faces="RRRR")
    t.advance(0.5)
    assert t.engine.ignored.sample[-1]["faces"] == "RRRR"
    t.send(R.BOWL_OFF)
    assert EventKind.ROUND_SETTLED not in t.kinds()
    t.send(R.RESULT, faces="WWWW")
    assert t.last(EventKind.ROUND_SETTLED).data["faces"] == "WWWW"


def test_a_lift_during_a_shake_that_never_ends_voids_after_the_window() -> None:  # SH-4a
    t = opened(EngineConfig(auto_open=False, reorder_grace_s=0.5))
    t.send(R.SHAKE_START)
    t.close_betting()
    t.send(R.BOWL_OFF)
    t.advance(0.4)
    assert t.engine.active is not None
    t.advance(0.1)
    assert t.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-4a"


def test_a_read_waiting_for_a_held_lift_waits_on_until_the_lift_applies() -> None:
    # an addressed bus polls the reader before the bowl: the read arrives first, then the lift, held behind a
    # stray shake start that never ends; the read's own window ends first, yet the lift it waits for has come
    t = opened(EngineConfig(auto_open=False, reorder_grace_s=0.5))
    a = t.bet("alice", "two_red", 1000)
    t.shake()
    t.close_betting()
    t.send(R.SHAKE_START)
    t.send(R.RESULT, faces="WWRR")
    t.advance(0.04)
    t.send(R.BOWL_OFF)
    lifted_at = t.clock.t
    assert t.last(EventKind.REPORT_HELD).data["why"] == "awaiting_shake_end"
    t.advance(0.47)  # past the read's window, inside the lift's
    assert t.engine.active is not None
    assert not t.engine.ignored.sample
    assert t.engine.next_deadline() == pytest.approx(lifted_at + 0.5)  # the lift's window, not the read's
    t.advance(0.03)
    assert settled_lines(t) == {a: ("win", 1000 + 1500)}  # two_red pays 1.5


def test_a_zero_grace_window_applies_reports_in_arrival_order() -> None:
    t = opened(EngineConfig(auto_open=False, reorder_grace_s=0.0))
    t.shake()
    t.close_betting()
    t.send(R.RESULT, faces="RRRR")
    t.send(R.BOWL_OFF)  # the held read expires first (window 0), then the lift applies
    assert EventKind.ROUND_SETTLED not in t.kinds()
    assert t.engine.ignored.sample[-1]["faces"] == "RRRR"


def test_a_lift_during_betting_is_never_held() -> None:  # SH-4b
    t = opened()
    t.send(R.SHAKE_START)
    t.send(R.BOWL_OFF)
    assert t.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-4b"


def test_a_read_before_the_close_makes_a_late_reported_lift_early() -> None:  # SH-4b
    # the bowl's line was slow: the reader saw the tokens during betting, the lift's report came after the close
    t = opened()
    a = t.bet("alice", "odd", 1000)
    t.shake()
    r = t.engine.active
    assert r is not None
    t.advance(r.closes_at - t.clock.t - 0.2)
    t.send(R.RESULT, faces="RWWW")
    t.advance(0.3)  # betting closes while the read waits for the lift
    t.send(R.BOWL_OFF)
    voided = t.last(EventKind.ROUND_VOIDED)
    assert voided.data["clause"] == "SH-4b"
    assert [(b["bet_id"], b["returned"]) for b in voided.data["bets"]] == [(a, 1000)]
