"""The random crowd's players keep betting from their seat's wallets however many times a seat is taken again, and
every crowd bet is counted: accepted, refused by code, failed by code; failed bets or bets that stop being accepted
are named as the run's problems."""

from __future__ import annotations

import gc

import pytest

from harness.bench import rig as rig_module
from harness.bench.config import load_bench
from harness.bench.crowd import STALL_ROUNDS, CrowdTally, seat_wallet
from harness.bench.rig import Rig
from harness.records import BetReply
from simulator.events import PlayerJoined


def _reply(accepted: bool, code: str = "") -> BetReply:
    return BetReply("p01.1", "p01.1-1", "red", 100, accepted, True, code=code)


def test_a_seats_later_players_come_back_as_its_regulars() -> None:
    assert [seat_wallet(f"p03.{k}", 5) for k in (1, 5, 6, 7, 11)] == ["p03.1", "p03.5", "p03.1", "p03.2", "p03.1"]
    assert seat_wallet("alice", 5) == "alice"
    assert seat_wallet("p03.2", 0) == "p03.2"


def test_a_long_run_keeps_its_returning_players_wallets() -> None:
    players = {f"p0{seat}.1": 100_000 for seat in (1, 2, 3)}
    with Rig.build(load_bench("in-process"), players, crowd=3, seed=1, wallets_per_seat=1) as rig:
        for _ in range(15):
            rig.play_to_end(rig.open_round())
        joined = [e.player for e in rig.truth if isinstance(e, PlayerJoined)]
        assert any(not p.endswith(".1") for p in joined)  # a seat was taken again within the run
        tally = rig.crowd_tally
        assert tally.sent > 0
        assert (tally.accepted, dict(tally.failed)) == (tally.sent, {})
        assert tally.problems() == []


def test_bets_from_players_without_a_wallet_are_counted_as_failed_and_stop_the_run_passing() -> None:
    with Rig.build(load_bench("in-process"), {}, crowd=2, seed=1) as rig:
        for _ in range(2 * STALL_ROUNDS):
            rig.play_to_end(rig.open_round())
        tally = rig.crowd_tally
        assert tally.sent > 0
        assert tally.failed["unknown_player"] + sum(tally.refused.values()) == tally.sent
        problems = tally.problems()
        assert any("failed" in p for p in problems)
        assert any(p.startswith("no crowd bet was accepted") for p in problems)


def test_a_stall_is_the_last_rounds_with_bets_and_none_accepted() -> None:
    tally = CrowdTally()
    tally.replied("1", _reply(True))
    for rid in range(2, 2 + STALL_ROUNDS - 1):
        tally.replied(str(rid), _reply(False, "betting_closed"))
        tally.replied(str(rid), _reply(False, "betting_closed"))
    assert tally.problems() == []  # one round short of a stall
    tally.replied("99", _reply(False, "insufficient_funds"))
    assert tally.problems() == [
        f"crowd bets stopped being accepted after round 1: none of {STALL_ROUNDS} rounds since took one"
    ]
    tally.replied("100", _reply(True))
    assert tally.problems() == []
    assert tally.to_json() == {
        "sent": 2 * STALL_ROUNDS + 1,
        "accepted": 2,
        "refused": {"betting_closed": 2 * (STALL_ROUNDS - 1), "insufficient_funds": 1},
        "failed": {},
    }


def test_a_long_runs_heap_is_frozen_as_it_goes_and_given_back_at_close(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rig_module, "HEAP_ROUNDS", 2)
    before = gc.get_freeze_count()
    with Rig.build(load_bench("in-process"), {"p01.1": 100_000}, crowd=1, seed=1, wallets_per_seat=1) as rig:
        rig.play_to_end(rig.open_round())
        assert gc.get_freeze_count() == before
        rig.play_to_end(rig.open_round())
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == 0
