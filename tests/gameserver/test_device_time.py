"""Device time in the engine (protocol 1.2): a ``BOWL OFF`` that arrives after the close but happened during
betting voids SH-4b (the heavy-chaos finding of docs/faults.md), before any other rule but after the round
tag; held reads use their device time. Hand-built reports; the round opens at t=1000 and closes at 1015."""

from __future__ import annotations

from gameserver.events import EventKind, ReportKind, TableReport
from gameserver.model import EngineConfig
from tests.gameserver.gs_helpers import Table

R = ReportKind
K = EventKind
CLOSES_AT = 1015.0  # Table's clock starts at 1000.0; EngineConfig's betting_s is 15


def send(
    t: Table,
    kind: ReportKind,
    happened_at: float | None = None,
    faces: str | None = None,
    touch: bool = False,
    round_tag: str | None = None,
) -> None:
    t.engine.report(TableReport(kind, "test", faces=faces, touch=touch, round_tag=round_tag, happened_at=happened_at))
    t.flush()


def shaken_and_closed(t: Table) -> int:
    """A bet of 1000 on two_red, a complete shake, betting closed at 1015 (clock 1015.001)."""
    bet = t.bet("alice", "two_red", 1000)
    t.shake()
    t.close_betting()
    return bet


def test_a_lift_that_happened_before_the_close_and_arrives_after_it_voids_sh4b() -> None:
    t = Table().open_round()
    bet = shaken_and_closed(t)
    t.advance(0.1)  # the bowl's report arrives at 1015.101
    send(t, R.BOWL_OFF, happened_at=1014.5)
    voided = t.last(K.ROUND_VOIDED)
    assert voided.data["clause"] == "SH-4b"
    assert voided.data["reason"] == "bowl lifted before betting closed (device time)"
    assert [(b["bet_id"], b["result"], b["returned"]) for b in voided.data["bets"]] == [(bet, "refund", 1000)]
    assert t.engine.wallets["alice"] == 100_000
    send(t, R.RESULT, faces="RWRR")  # the read that follows is for no round
    assert K.ROUND_SETTLED not in t.kinds()


def test_the_heavy_chaos_case_read_first_then_the_late_lift() -> None:
    """docs/faults.md: lift at 5.689, close at 5.935, RESULT received 5.96, BOWL OFF 6.06 — shifted to 1000."""
    t = Table().open_round()
    shaken_and_closed(t)
    t.advance(0.02)
    send(t, R.RESULT, faces="RWRR")  # arrives after the close, no device time: held for the lift
    assert t.last(K.REPORT_HELD).data["why"] == "awaiting_lift"
    t.advance(0.1)
    send(t, R.BOWL_OFF, happened_at=1014.754)
    assert t.last(K.ROUND_VOIDED).data["reason"] == "bowl lifted before betting closed (device time)"
    assert K.ROUND_SETTLED not in t.kinds()


def test_a_lift_that_happened_at_or_after_the_close_is_an_ordinary_lift() -> None:
    t = Table().open_round()
    shaken_and_closed(t)
    t.advance(0.1)
    send(t, R.BOWL_OFF, happened_at=CLOSES_AT)  # not before the close
    send(t, R.RESULT, faces="RRWW")
    assert t.last(K.ROUND_SETTLED).data["faces"] == "RRWW"
    assert K.ROUND_VOIDED not in t.kinds()


def test_without_device_time_a_late_lift_keeps_todays_behaviour() -> None:  # protocol 1.0/1.1 devices
    t = Table().open_round()
    shaken_and_closed(t)
    t.advance(0.1)
    send(t, R.BOWL_OFF)
    send(t, R.RESULT, faces="WWWR")
    assert t.last(K.ROUND_SETTLED).data["faces"] == "WWWR"


def test_a_lift_dated_before_the_round_opened_is_not_this_rounds_sh4b() -> None:
    t = Table().open_round()
    shaken_and_closed(t)
    send(t, R.BOWL_OFF, happened_at=999.0)  # before OPEN at 1000: not a lift during this round's betting
    assert t.last(K.BOWL_LIFTED).round_id == 1
    assert K.ROUND_VOIDED not in t.kinds()


def test_the_device_time_rule_comes_before_the_touch_and_shake_rules() -> None:
    touched = Table().open_round()
    shaken_and_closed(touched)
    send(touched, R.BOWL_OFF, happened_at=1010.0, touch=True)  # SH-5 too, but SH-4b wins
    assert touched.last(K.ROUND_VOIDED).data["clause"] == "SH-4b"
    shaking = Table().open_round()
    shaking.send(R.SHAKE_START)
    shaking.close_betting()  # a shake in progress: a lift would be held for SHAKER END
    send(shaking, R.BOWL_OFF, happened_at=1014.0)
    assert K.REPORT_HELD not in shaking.kinds()
    assert shaking.last(K.ROUND_VOIDED).data["clause"] == "SH-4b"


def test_the_round_tag_rule_comes_first() -> None:
    t = Table().open_round()
    shaken_and_closed(t)
    send(t, R.BOWL_OFF, happened_at=1014.0, round_tag="7")
    assert t.engine.ignored.sample[-1]["why"] == "other_round"
    assert t.engine.active is not None and K.ROUND_VOIDED not in t.kinds()


def test_a_timed_lift_held_during_a_pause_voids_on_resume() -> None:
    t = Table().open_round()
    bet = shaken_and_closed(t)
    t.send(R.PROBLEM)
    send(t, R.BOWL_OFF, happened_at=1014.9)
    assert t.last(K.REPORT_HELD).data["why"] == "paused"
    assert K.ROUND_VOIDED not in t.kinds()
    t.advance(5.0)
    t.engine.resume()
    t.flush()
    voided = t.last(K.ROUND_VOIDED)
    assert voided.data["clause"] == "SH-4b" and voided.data["bets"][0]["bet_id"] == bet


def test_a_held_read_dated_before_the_close_makes_an_untimed_late_lift_sh4b() -> None:
    t = Table().open_round()
    shaken_and_closed(t)
    t.advance(0.2)
    send(t, R.RESULT, happened_at=1014.9, faces="RWWW")  # read during betting, received at 1015.201
    send(t, R.BOWL_OFF)  # the lift's report has no device time
    assert t.last(K.ROUND_VOIDED).data["reason"] == "tokens read before betting closed (the lift was reported late)"


def test_a_held_read_dated_after_the_close_lets_the_lift_settle() -> None:
    t = Table().open_round()
    shaken_and_closed(t)
    t.advance(0.2)
    send(t, R.RESULT, happened_at=1015.1, faces="RWWW")
    send(t, R.BOWL_OFF)
    assert t.last(K.ROUND_SETTLED).data["faces"] == "RWWW"


def test_an_untimed_lift_during_a_shake_keeps_todays_hold_and_expiry() -> None:
    """Only a timed lift skips the hold; an untimed one waits for SHAKER END and, when the window ends
    first, is applied as a lift during a shake (SH-4a), as before revision 1.2."""
    t = Table(EngineConfig(auto_open=False, reorder_grace_s=0.5)).open_round()
    t.send(R.SHAKE_START)
    t.close_betting()
    send(t, R.BOWL_OFF)  # untimed: held for SHAKER END
    assert t.last(K.REPORT_HELD).data["why"] == "awaiting_shake_end"
    t.advance(0.6)
    assert t.last(K.ROUND_VOIDED).data["clause"] == "SH-4a"


# ------------------------------------------------------------------ stretch: a late SHAKER START (SH-4a)
def timed_shaker_line(t: Table) -> None:
    """A shaker report with device time in an earlier round teaches the engine that the shaker line is timed."""
    t.engine.report(TableReport(R.SHAKE_END, "test", happened_at=999.0))
    t.flush()


def test_at_the_close_a_timed_shaker_line_gets_the_grace_window_for_a_start_dated_before_it() -> None:
    t = Table().open_round()
    timed_shaker_line(t)
    bet = t.bet("alice", "two_red", 1000)
    t.send(R.BOWL_ON)
    t.close_betting()  # no START has arrived: with a timed shaker line, not void yet
    assert K.BETTING_CLOSED in t.kinds() and K.ROUND_VOIDED not in t.kinds()
    t.advance(0.3)  # 1015.301, inside the 0.5 s window
    send(t, R.SHAKE_START, happened_at=1014.0)  # the dealer did start shaking during betting
    send(t, R.SHAKE_END, happened_at=1015.2)
    t.advance(1.0)  # past the window: nothing more happens
    assert K.ROUND_VOIDED not in t.kinds()
    send(t, R.BOWL_OFF, happened_at=1016.0)
    send(t, R.RESULT, faces="RRWW")
    settled = t.last(K.ROUND_SETTLED)
    assert [(b["bet_id"], b["result"], b["returned"]) for b in settled.data["bets"]] == [(bet, "win", 2500)]


def test_a_start_dated_at_or_after_the_close_voids_sh4a_at_once() -> None:
    t = Table().open_round()
    timed_shaker_line(t)
    t.close_betting()
    t.advance(0.1)
    send(t, R.SHAKE_START, happened_at=CLOSES_AT)
    voided = t.last(K.ROUND_VOIDED)
    assert (voided.data["clause"], voided.data["reason"]) == (
        "SH-4a",
        "no shake started before betting closed (device time)",
    )


def test_no_start_within_the_window_voids_sh4a_when_it_ends() -> None:
    t = Table().open_round()
    timed_shaker_line(t)
    t.close_betting()  # 1015.001
    t.advance(0.49)  # 1015.491: the window ends at 1015.5
    assert K.ROUND_VOIDED not in t.kinds()
    t.advance(0.01)
    voided = t.last(K.ROUND_VOIDED)
    assert (voided.data["clause"], voided.data["reason"]) == ("SH-4a", "no shake started before betting closed")


def test_without_device_time_on_the_shaker_line_sh4a_is_judged_at_the_close_as_before() -> None:
    t = Table().open_round()
    t.send(R.SHAKE_END)  # an untimed shaker report: the line is untimed
    t.close_betting()
    assert t.last(K.ROUND_VOIDED).data["clause"] == "SH-4a"
    assert t.kinds()[-2:] == [K.BETTING_CLOSED, K.ROUND_VOIDED]
