"""Ending a round (gameserver/settlement.py): settlement lines, refunds, the round record and the event it names.

Every amount is written out by hand from RULES.md's odds (PAY-1..PAY-10): a win returns stake + stake × odds.
"""

from __future__ import annotations

import pytest

from gameserver.bets import BetResult, BetType
from gameserver.events import EventKind, ReportKind, TableReport
from gameserver.model import BetAck, BetRecord, HeldReport, Phase, RoundRecord
from gameserver.settlement import close_round, settle_pending


def bet(bet_id: int, player: str, bet_type: BetType, stake: int) -> BetRecord:
    """A confirmed, pending bet of round 7 (balances before/after are not read by settlement)."""
    ack = BetAck(bet_id, f"c{bet_id}", player, 7, bet_type, stake, 1000.0, 0, 0)
    return BetRecord(ack, f"{bet_type}|{stake}|")


def round_with(bets: list[BetRecord], faces: str | None = None) -> RoundRecord:
    """Round 7, closed, paused, with one held report: what closing it must clear."""
    r = RoundRecord(7, 1000.0, 1015.0, phase=Phase.CLOSED, faces=faces, reshakes=2, bets=bets)
    r.paused_reason, r.paused_at = "supervisor", 1020.0
    r.held.append(HeldReport(TableReport(ReportKind.SHAKE_START, "shaker"), 1020.5, "paused"))
    return r


def test_three_reds_pays_winners_in_bet_order_and_each_line_has_the_balance_after_it() -> None:
    bets = [
        bet(1, "alice", BetType.ODD, 1000),  # odd pays 0.96: 1000 + 960
        bet(2, "bob", BetType.FOUR_RED, 200),  # loses on 3 reds
        bet(3, "alice", BetType.BIG, 500),  # big pays 0.96: 500 + 480
        bet(4, "bob", BetType.THREE_RED, 250),  # three_red pays 2.8: 250 + 700
    ]
    wallets = {"alice": 10_000, "bob": 5_000}
    lines = settle_pending(bets, 3, wallets)
    assert lines == [
        {"bet_id": 1, "player_id": "alice", "result": "win", "returned": 1960, "balance_after": 11_960},
        {"bet_id": 2, "player_id": "bob", "result": "lose", "returned": 0, "balance_after": 5_000},
        {"bet_id": 3, "player_id": "alice", "result": "win", "returned": 980, "balance_after": 12_940},
        {"bet_id": 4, "player_id": "bob", "result": "win", "returned": 950, "balance_after": 5_950},
    ]
    assert wallets == {"alice": 12_940, "bob": 5_950}
    assert [(b.result, b.returned) for b in bets] == [
        (BetResult.WIN, 1960),
        (BetResult.LOSE, 0),
        (BetResult.WIN, 980),
        (BetResult.WIN, 950),
    ]


def test_two_reds_push_big_and_small_and_pay_two_red() -> None:
    bets = [
        bet(1, "alice", BetType.BIG, 1000),
        bet(2, "alice", BetType.SMALL, 300),
        bet(3, "alice", BetType.TWO_RED, 200),
    ]
    wallets = {"alice": 0}
    lines = settle_pending(bets, 2, wallets)
    # push returns the stake; two_red pays 1.5: 200 + 300
    assert [(ln["result"], ln["returned"], ln["balance_after"]) for ln in lines] == [
        ("push", 1000, 1000),
        ("push", 300, 1300),
        ("win", 500, 1800),
    ]


def test_no_outcome_refunds_every_stake_and_skips_bets_already_ended() -> None:
    done = bet(1, "alice", BetType.ODD, 1000)
    done.result, done.returned = BetResult.WIN, 1960
    bets = [done, bet(2, "alice", BetType.FOUR_WHITE, 400), bet(3, "bob", BetType.EVEN, 100)]
    wallets = {"alice": 600, "bob": 0}
    lines = settle_pending(bets, None, wallets)
    assert lines == [
        {"bet_id": 2, "player_id": "alice", "result": "refund", "returned": 400, "balance_after": 1000},
        {"bet_id": 3, "player_id": "bob", "result": "refund", "returned": 100, "balance_after": 100},
    ]
    assert (done.result, done.returned) == (BetResult.WIN, 1960)
    assert settle_pending(bets, None, wallets) == []  # a bet gets exactly one outcome
    assert wallets == {"alice": 1000, "bob": 100}


@pytest.mark.parametrize(
    ("bets", "reds", "error"),
    [
        ([bet(1, "alice", BetType.ODD, 1000)], 5, ValueError),
        ([], -1, ValueError),  # refused even with nothing to settle
        # the second stake pays 120 × 24/25 = 115.2: fractional, so the first bet must not be paid either
        ([bet(1, "alice", BetType.ODD, 1000), bet(2, "alice", BetType.ODD, 120)], 1, ValueError),
        ([bet(1, "alice", BetType.ODD, 1000), bet(2, "mallory", BetType.ODD, 100)], None, KeyError),
    ],
)
def test_a_bad_outcome_stake_or_player_changes_nothing(
    bets: list[BetRecord], reds: int | None, error: type[Exception]
) -> None:
    wallets = {"alice": 700}
    with pytest.raises(error):
        settle_pending(bets, reds, wallets)
    assert wallets == {"alice": 700}
    assert all((b.result, b.returned) == (BetResult.PENDING, 0) for b in bets)


def test_close_settled_round_names_round_settled_and_clears_pause_and_held_reports() -> None:
    r = round_with([bet(1, "alice", BetType.FOUR_OF_A_KIND, 200)], faces="RRRR")  # pays 6.5: 200 + 1300
    wallets = {"alice": 0}
    kind, data = close_round(r, Phase.SETTLED, "", "", 1030.0, wallets)
    assert kind is EventKind.ROUND_SETTLED
    assert list(data) == ["faces", "reds", "reshakes", "bets"]  # the event JSON's key order in the ledger
    line = {"bet_id": 1, "player_id": "alice", "result": "win", "returned": 1500, "balance_after": 1500}
    assert data == {"faces": "RRRR", "reds": 4, "reshakes": 2, "bets": [line]}
    assert (r.phase, r.ended_at, r.paused_reason, r.held) == (Phase.SETTLED, 1030.0, None, [])
    assert r.paused_at == 1020.0  # left as it was: only the pause reason marks a pause
    assert wallets == {"alice": 1500}


@pytest.mark.parametrize(
    ("phase", "kind", "clause", "reason"),
    [
        (Phase.VOID, EventKind.ROUND_VOIDED, "SH-5", "bowl touched a token while lifted (-)"),
        (Phase.CANCELLED, EventKind.ROUND_CANCELLED, "ERR-3", "server restart"),
    ],
)
def test_void_and_cancel_refund_and_name_their_event(phase: Phase, kind: EventKind, clause: str, reason: str) -> None:
    r = round_with([bet(1, "alice", BetType.ONE_RED, 300)], faces="RWWW")  # faces are ignored: refund
    wallets = {"alice": 50}
    got_kind, data = close_round(r, phase, clause, reason, 1030.0, wallets)
    assert got_kind is kind
    assert list(data) == ["clause", "reason", "reshakes", "bets"]
    line = {"bet_id": 1, "player_id": "alice", "result": "refund", "returned": 300, "balance_after": 350}
    assert data == {"clause": clause, "reason": reason, "reshakes": 2, "bets": [line]}
    assert (r.phase, r.ended_at, r.paused_reason, r.held) == (phase, 1030.0, None, [])


def test_settled_without_faces_refunds() -> None:
    r = round_with([bet(1, "alice", BetType.EVEN, 100)])
    wallets = {"alice": 0}
    kind, data = close_round(r, Phase.SETTLED, "", "", 1030.0, wallets)
    assert (kind, data["faces"], data["reds"], data["bets"][0]["result"]) == (
        EventKind.ROUND_SETTLED,
        None,
        None,
        "refund",
    )
    assert wallets == {"alice": 100}


@pytest.mark.parametrize(("phase", "faces"), [(Phase.CLOSED, "RRWW"), (Phase.BETTING, None), (Phase.SETTLED, "RRSW")])
def test_close_refuses_a_phase_that_is_not_an_end_or_unreadable_faces(phase: Phase, faces: str | None) -> None:
    r = round_with([bet(1, "alice", BetType.ODD, 100)], faces=faces)
    wallets = {"alice": 0}
    with pytest.raises(ValueError):
        close_round(r, phase, "", "", 1030.0, wallets)
    assert (r.phase, r.ended_at, r.paused_reason, len(r.held)) == (Phase.CLOSED, None, "supervisor", 1)
    assert (r.bets[0].result, wallets) == (BetResult.PENDING, {"alice": 0})
