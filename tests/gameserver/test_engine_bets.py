"""Bet validation, idempotency, corrections and restart recovery in the round engine."""

from __future__ import annotations

import pytest

from gameserver.engine import RoundEngine
from gameserver.events import EventKind
from gameserver.ledger import InMemoryLedger
from gameserver.model import EngineConfig, Phase, Rejection
from tests.gameserver.gs_helpers import Table


def opened(betting_s: float = 15.0) -> Table:
    return Table(EngineConfig(auto_open=False, betting_s=betting_s)).open_round()


@pytest.mark.parametrize(
    ("bet_type", "stake", "code"),
    [
        ("five_red", 100, "unknown_bet_type"),
        ("odd", 150, "stake_not_chip_multiple"),
        ("odd", 0, "stake_below_minimum"),
        ("odd", 1_000_100, "stake_above_maximum"),
        ("odd", 100_100, "insufficient_balance"),
    ],
)
def test_bad_bets_are_rejected_and_change_nothing(bet_type: str, stake: int, code: str) -> None:
    t = opened()
    before = (dict(t.engine.wallets), len(t.log))
    with pytest.raises(Rejection) as exc:
        t.engine.place_bet("alice", "c1", bet_type, stake)
    assert exc.value.code == code
    assert (dict(t.engine.wallets), len(t.log) + len(t.flush())) == before


def test_stake_equal_to_the_whole_balance_is_accepted_and_never_goes_negative() -> None:
    t = Table(EngineConfig(auto_open=False), {"carol": 300})
    t.engine.open_round()
    t.bet("carol", "odd", 300)
    assert t.engine.wallets["carol"] == 0
    with pytest.raises(Rejection, match="exceeds the balance 0"):
        t.engine.place_bet("carol", "c2", "odd", 100)


def test_bet_after_close_wrong_round_and_unknown_player() -> None:
    t = opened()
    with pytest.raises(Rejection) as wrong:
        t.engine.place_bet("alice", "c1", "odd", 100, round_id=7)
    assert wrong.value.code == "wrong_round"
    with pytest.raises(Rejection) as unknown:
        t.engine.place_bet("mallory", "c1", "odd", 100)
    assert unknown.value.code == "unknown_player"
    t.close_betting()
    with pytest.raises(Rejection) as late:
        t.engine.place_bet("alice", "c2", "odd", 100)
    assert late.value.code == "betting_closed"


def test_bet_exactly_at_the_deadline_is_late() -> None:
    t = opened(betting_s=10.0)
    t.clock.t += 10.0
    with pytest.raises(Rejection, match="no round is taking bets"):
        t.engine.place_bet("alice", "c1", "odd", 100)


def test_idempotent_replay_returns_the_same_ack_and_conflict_is_refused() -> None:
    t = opened()
    first, replayed = t.engine.place_bet("alice", "same", "odd", 500)
    assert not replayed
    t.flush()
    again, replayed = t.engine.place_bet("alice", "same", "odd", 500)
    assert replayed and again == first and t.flush() == []
    assert t.engine.wallets["alice"] == 99_500
    with pytest.raises(Rejection) as exc:
        t.engine.place_bet("alice", "same", "odd", 600)
    assert exc.value.code == "idempotency_conflict"
    other, replayed = t.engine.place_bet("bob", "same", "odd", 600)  # ids are per player
    assert not replayed and other.bet_id != first.bet_id


def test_correction_resettles_the_last_round_visibly() -> None:  # GLI 4.18.5
    t = opened()
    a = t.bet("alice", "four_red", 1000)
    b = t.bet("bob", "three_red", 1000)
    t.shake()
    t.close_betting()
    t.reveal("RRRW")  # misread: alice loses, bob wins 3800
    assert t.engine.wallets == {"alice": 99_000, "bob": 102_800}
    t.engine.correct(1, "RRRR")
    t.flush()
    event = t.last(EventKind.ROUND_CORRECTED)
    assert event.significant and event.data["old_faces"] == "RRRW"
    deltas = {line["bet_id"]: line["delta"] for line in event.data["bets"]}
    assert deltas == {a: 15_000, b: -3_800}
    assert t.engine.wallets == {"alice": 114_000, "bob": 99_000}


def test_correction_that_would_overdraw_is_refused() -> None:
    t = Table(EngineConfig(auto_open=False), {"alice": 1000, "bob": 0})
    t.engine.open_round()
    t.bet("alice", "four_red", 1000)
    t.shake()
    t.close_betting()
    t.reveal("RRRR")
    assert t.engine.wallets["alice"] == 15_000
    t.advance(1)
    t.engine.open_round()
    t.bet("alice", "odd", 15_000)  # alice stakes all her winnings in the next round
    with pytest.raises(Rejection) as exc:
        t.engine.correct(1, "RRRW")
    assert exc.value.code == "correction_would_overdraw"
    assert t.engine.wallets["alice"] == 0


@pytest.mark.parametrize(
    ("round_id", "faces", "code"),
    [(2, "RRRR", "not_correctable"), (1, "RRXR", "invalid_faces"), (1, "RWWW", "correction_unchanged")],
)
def test_bad_corrections(round_id: int, faces: str, code: str) -> None:
    t = opened()
    t.shake()
    t.close_betting()
    t.reveal("RWWW")
    with pytest.raises(Rejection) as exc:
        t.engine.correct(round_id, faces)
    assert exc.value.code == code


@pytest.mark.parametrize("action", ["pause", "resume", "cancel"])
def test_supervisor_actions_without_a_round_are_refused(action: str) -> None:
    t = Table()
    with pytest.raises(Rejection) as exc:
        getattr(t.engine, action)(*([] if action == "resume" else ["why"]))
    assert exc.value.code == "no_active_round"


def test_restart_cancels_the_open_round_and_refunds_exactly_once() -> None:
    t = opened()
    ledger = InMemoryLedger()
    t.bet("alice", "odd", 1000)
    t.bet("bob", "even", 2000)
    ledger.append(t.log)
    snap = ledger.snapshot()
    assert snap.open_round is not None and len(snap.open_round.bets) == 2
    engine = RoundEngine(EngineConfig(auto_open=False), t.clock, snap)
    engine.recover_after_restart()
    ledger.append(engine.drain())
    assert ledger.wallets == {"alice": 100_000, "bob": 100_000}
    assert [r.phase for r in ledger.rounds()] == [Phase.CANCELLED]
    again = RoundEngine(EngineConfig(auto_open=False), t.clock, ledger.snapshot())
    again.recover_after_restart()
    assert again.drain() == []  # a second restart finds nothing to refund
    with pytest.raises(Rejection) as exc:  # idempotency survives the restart
        again.place_bet("alice", next(b for b, _ in ledger.bets("alice")).client_bet_id, "odd", 500)
    assert exc.value.code == "idempotency_conflict"
