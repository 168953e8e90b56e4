"""The in-memory ledger's indexed queries return what filtering the whole ledger returns, in bet id order."""

from __future__ import annotations

from gameserver.ledger import InMemoryLedger
from tests.gameserver.gs_helpers import Table
from tests.gameserver.test_ledger import played


def test_queries_by_player_round_and_seq_match_a_scan_of_everything() -> None:
    events = played(Table())
    ledger = InMemoryLedger()
    ledger.append(events)
    every = ledger.bets()
    assert [b.bet_id for b, _ in every] == sorted(b.bet_id for b, _ in every)
    assert len(every) == 3
    for player in ("alice", "bob", "nobody"):
        assert ledger.bets(player) == [x for x in every if x[0].player_id == player]
        for rnd in (1, 2, 3):
            want = [x for x in every if x[0].player_id == player and x[0].round_id == rnd]
            assert ledger.bets(player, rnd) == want
    for rnd in (1, 2, 3):
        assert ledger.bets(round_id=rnd) == [x for x in every if x[0].round_id == rnd]
        assert ledger.rounds(rnd) == [r for r in ledger.rounds() if r.round_id == rnd]
    for after in (0, 1, len(events) // 2, events[-1].seq, events[-1].seq + 5):
        for limit in (1, 3, 1000):
            assert ledger.events(after, limit) == [e for e in events if e.seq > after][:limit]
            assert ledger.events(after, limit, 2) == [e for e in events if e.seq > after and e.round_id == 2][:limit]
