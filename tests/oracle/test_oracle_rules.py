"""The oracle's expectations from ground truth alone, on hand-built event logs, and its import boundary."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.judge import Observation, expected_bet, expected_rounds, judge
from harness.judge.expect import ExpectedRound
from harness.records import BetRecordRow, RoundEvent
from simulator.events import BowlLifted, Reshake, ReshakeReason, Revealed, RoundEnded, RoundStatus, ShakeSkipped

# Typed from RULES.md (PAY-1..PAY-10): odds and the red counts that win; Big/Small push on two reds.
HAND_ODDS = {
    "four_red": (Fraction(14), {4}),
    "three_red": (Fraction(14, 5), {3}),
    "two_red": (Fraction(3, 2), {2}),
    "one_red": (Fraction(14, 5), {1}),
    "four_white": (Fraction(14), {0}),
    "four_of_a_kind": (Fraction(13, 2), {0, 4}),
    "odd": (Fraction(24, 25), {1, 3}),
    "even": (Fraction(24, 25), {0, 2, 4}),
    "big": (Fraction(24, 25), {3, 4}),
    "small": (Fraction(24, 25), {0, 1}),
}
FACES = {0: "WWWW", 1: "WWWR", 2: "WWRR", 3: "WRRR", 4: "RRRR"}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(HAND_ODDS)), st.integers(0, 4), st.integers(1, 400).map(lambda k: k * 50))
def test_every_bet_settles_as_the_rules_say(bet: str, reds: int, stake: int) -> None:
    odds, wins = HAND_ODDS[bet]
    rnd = ExpectedRound(1, "settled", "GP-3", FACES[reds], 0)
    got = expected_bet(rnd, bet, stake)
    if reds in wins:
        assert (got.result, Fraction(got.returned)) == ("win", stake * (1 + odds))
    elif bet in ("big", "small") and reds == 2:
        assert (got.result, got.returned) == ("push", stake)
    else:
        assert (got.result, got.returned) == ("lose", 0)


@pytest.mark.parametrize("status", ["void", "cancelled"])
def test_void_and_cancelled_rounds_refund_every_stake(status: str) -> None:
    rnd = ExpectedRound(1, status, "SH-4a", "", 0)
    assert (expected_bet(rnd, "four_red", 750).result, expected_bet(rnd, "four_red", 750).returned) == ("refund", 750)


def test_the_table_verdict_and_reshakes_come_from_ground_truth() -> None:
    truth = [
        Revealed(1.0, 1, "RSWW", False),
        Reshake(1.0, 1, ReshakeReason.STANDING, 1),
        Revealed(2.0, 1, "RRWW", True),
        RoundEnded(2.5, 1, RoundStatus.SETTLED, None, "RRWW", 2, 1),
        RoundEnded(4.0, 2, RoundStatus.VOID, "SH-5", None, None, 0),
    ]
    got = expected_rounds(truth, cancelled_by_supervisor=[2, 3])
    assert got[1] == ExpectedRound(1, "settled", "GP-3", "RRWW", 1, True)
    assert got[2] == ExpectedRound(2, "void", "SH-5", "", 0)  # the table's verdict wins over a late cancel
    assert got[3] == ExpectedRound(3, "cancelled", "ERR-3", "", 0)


def _row(bet_id: str, bet: str, wagered: int, result: str, returned: int, status: str = "settled") -> BetRecordRow:
    return BetRecordRow(bet_id, "7", "p1", bet, wagered, result, returned, status, "RRRW", 0, 0)


def test_judge_reports_a_missing_reshake_and_a_wrong_payout() -> None:
    truth = [Reshake(1.0, 1, ReshakeReason.DROP, 1), RoundEnded(2.0, 1, RoundStatus.SETTLED, None, "RRRW", 3, 1)]
    obs = Observation(
        truth=truth,
        rounds={"7": 1},
        server_events=[RoundEvent("7", "opened", 0.0), RoundEvent("7", "settled", 2.0, faces="RRRW")],
        records={"p1": [_row("70", "three_red", 100, "win", 380), _row("71", "odd", 100, "win", 190)]},
        balances={"p1": 1370},
        opening={"p1": 1000},
    )
    verdict = judge(obs)
    # odd on 3 reds: 100 + 96 = 196 (the server paid 190); balance 1000 - 200 + 380 + 196 = 1376.
    assert [str(d) for d in verdict.differences] == [
        "round 7 [SH-2]: re-shakes: expected 1, server 0",
        "round 7 bet 71 [PAY-7]: returned for p1 odd 100: expected 196, server 190",
        "account [GLI 2.8.2]: balance of p1: expected 1376, server 1370",
    ]


def test_a_round_the_server_ends_while_the_table_still_plays_is_one_difference() -> None:
    obs = Observation(
        truth=[Revealed(1.0, 1, "RRWW", False)],  # the table saw round 1 but has no verdict yet
        rounds={"5": 1},
        server_events=[RoundEvent("5", "opened", 0.0), RoundEvent("5", "void", 1.0, clause="SH-4b")],
        records={"p1": [BetRecordRow("9", "5", "p1", "big", 200, "refund", 200, "void", "", 1000, 1000)]},
        balances={"p1": 1000},
        opening={"p1": 1000},
    )
    (diff,) = judge(obs).differences
    assert str(diff) == (
        "round 5 [SH-4b]: round ended by the server while the table was still playing it: "
        "expected the table's verdict, server void (SH-4b)"
    )


def test_a_round_the_table_never_saw_must_be_returned_in_full() -> None:
    obs = Observation(
        truth=[],
        rounds={},
        server_events=[RoundEvent("3", "opened", 0.0), RoundEvent("3", "settled", 1.0, faces="RRRR")],
        records={"p1": [BetRecordRow("4", "3", "p1", "four_red", 100, "win", 1500, "settled", "RRRR", 500, 1900)]},
        balances={"p1": 1900},
        opening={"p1": 500},
    )
    assert [str(d) for d in judge(obs).differences] == [
        "round 3 [NET-1]: round status: expected void or cancelled, server settled on RRRR",
        "round 3 bet 4 [NET-1]: result of p1 four_red 100: expected refund, server win",
        "round 3 bet 4 [NET-1]: returned for p1 four_red 100: expected 100, server 1500",
        "account [GLI 2.8.2]: balance of p1: expected 500, server 1900",
    ]


def test_a_round_the_server_settles_without_ever_reporting_it_open_is_judged_as_never_started() -> None:
    # A phantom round: no OPEN reached the table's lamp and the server's events start with the settlement.
    obs = Observation(
        truth=[RoundEnded(9.0, 1, RoundStatus.SETTLED, None, "RWWW", 1, 0)],
        rounds={"1": 1},
        server_events=[
            RoundEvent("1", "opened", 0.0),
            RoundEvent("1", "settled", 9.0, faces="RWWW"),
            RoundEvent("77", "settled", 9.5, faces="RRRR"),
        ],
        records={},
        balances={},
        opening={},
    )
    verdict = judge(obs)
    assert [str(d) for d in verdict.differences] == [
        "round 77 [NET-1]: round status: expected void or cancelled, server settled on RRRR",
    ]
    assert verdict.rounds_checked == 2


def _late_lamp(touched: bool = False, faces: str = "RWRR", server_end: RoundEvent | None = None) -> Observation:
    """Seed 211 of the heavy fault campaign, by hand: the server closed betting at 4.070 s; its lamp, on a slow line,
    still showed betting open when the dealer lifted at 4.161 s, so the table voided the round SH-4b."""
    truth = [
        BowlLifted(4.161, 1, True, touched, 2 if touched else None),
        Revealed(4.161, 1, faces, False),
        RoundEnded(4.161, 1, RoundStatus.VOID, "SH-4b", None, None, 0),
    ]
    end = server_end or RoundEvent("1", "settled", 4.4, faces=faces)
    return Observation(
        truth=truth,
        rounds={"1": 1},
        server_events=[RoundEvent("1", "opened", 3.07), RoundEvent("1", "closed", 4.07), end],
        records={},
        balances={},
        opening={},
        server_clock_is_sim=True,
    )


def test_a_lift_after_the_servers_close_is_not_early_even_if_the_late_lamp_still_showed_betting_open() -> None:
    assert judge(_late_lamp()).passed
    # The same round from a server whose clock the bench cannot map: the lamp is all the table knows.
    unmapped = replace(_late_lamp(), server_clock_is_sim=False)
    assert [str(d) for d in judge(unmapped).differences] == [
        "round 1 [SH-4b]: round status: expected void (SH-4b), server settled on RWRR"
    ]


def test_a_server_that_voids_such_a_lift_as_early_is_told_it_closed_before_the_lift() -> None:
    voided = _late_lamp(server_end=RoundEvent("1", "void", 4.2, clause="SH-4b"))
    assert [str(d) for d in judge(voided).differences] == [
        "round 1 [SH-4b]: round status: expected settled on RWRR, server void (SH-4b)"
    ]


def test_after_the_servers_close_a_touched_lift_is_sh5_and_a_standing_token_keeps_the_tables_verdict() -> None:
    touched = _late_lamp(touched=True, server_end=RoundEvent("1", "void", 4.2, clause="SH-5"))
    assert judge(touched).passed
    standing = _late_lamp(faces="RSWR", server_end=RoundEvent("1", "void", 4.2, clause="SH-4b"))
    assert judge(standing).passed


def test_a_balance_the_server_did_not_show_is_a_difference_not_a_silent_skip() -> None:
    obs = Observation(
        truth=[RoundEnded(2.0, 1, RoundStatus.SETTLED, None, "RRRW", 3, 0)],
        rounds={"7": 1},
        server_events=[RoundEvent("7", "opened", 0.0), RoundEvent("7", "settled", 2.0, faces="RRRW")],
        records={"p1": [_row("70", "three_red", 100, "win", 380)], "p2": []},
        balances={"p2": 500},
        opening={"p1": 1000, "p2": 400},
    )
    assert [str(d) for d in judge(obs).differences] == [
        "account [GLI 2.8.2]: balance of p1: expected 1280, server not observed",
        "account [GLI 2.8.2]: balance of p2: expected 400, server 500",
    ]


def test_bets_in_a_round_the_table_never_played_are_flagged_even_without_round_events() -> None:
    # The server took and settled a bet in round 12; it never reported the round, and the table never saw it open.
    obs = Observation(
        truth=[],
        rounds={},
        server_events=[],
        records={"p1": [BetRecordRow("4", "12", "p1", "odd", 100, "win", 196, "settled", "RRRW", 500, 596)]},
        balances={"p1": 596},
        opening={"p1": 500},
    )
    verdict = judge(obs)
    assert [str(d) for d in verdict.differences][:3] == [
        "round 12 [NET-1]: round end: expected void or cancelled (the table never played it), server no end reported",
        "round 12 bet 4 [NET-1]: result of p1 odd 100: expected refund, server win",
        "round 12 bet 4 [NET-1]: returned for p1 odd 100: expected 100, server 196",
    ]
    assert verdict.rounds_checked == 1


def test_after_the_servers_close_a_forgotten_shake_is_sh4a_whatever_the_lift_showed() -> None:
    truth = [
        ShakeSkipped(1.0, 1),
        BowlLifted(4.161, 1, True, True, 2),
        Revealed(4.161, 1, "RWRR", False),
        RoundEnded(4.161, 1, RoundStatus.VOID, "SH-4b", None, None, 0),
    ]
    obs = replace(_late_lamp(server_end=RoundEvent("1", "void", 4.07, clause="SH-4a")), truth=truth)
    assert judge(obs).passed


def test_a_lift_after_the_announced_end_of_betting_is_not_early_though_the_close_is_recorded_later() -> None:
    # Seed 9 of the chaotic gate, round 47: the server's betting period ends at 902.59999 (closes_at, bets refused
    # from then on); its close is recorded at its next tick, 902.605; the dealer, whose lamp showed the deadline
    # 902.605, lifted at 902.6024: after the betting period, so the server rightly settles.
    obs = replace(
        _late_lamp(),
        truth=[
            BowlLifted(902.6024, 1, True, False, None),
            Revealed(902.6024, 1, "RWRW", False),
            RoundEnded(902.6024, 1, RoundStatus.VOID, "SH-4b", None, None, 0),
        ],
        server_events=[
            RoundEvent("1", "opened", 887.59999, raw={"data": {"closes_at": 902.59999, "betting_s": 15.0}}),
            RoundEvent("1", "closed", 902.605),
            RoundEvent("1", "settled", 902.605, faces="RWRW"),
        ],
    )
    assert judge(obs).passed
    unannounced = replace(obs, server_events=[replace(e, raw=None) for e in obs.server_events])
    assert [str(d) for d in judge(unannounced).differences] == [
        "round 1 [SH-4b]: round status: expected void (SH-4b), server settled on RWRW"
    ]
