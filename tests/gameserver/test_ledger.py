"""The SQLite ledger on real files: durability across reopen, the exactly-once guard, and agreement with the
in-memory projection on a scripted game."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gameserver.events import Event, EventKind, ReportKind
from gameserver.ledger import InMemoryLedger
from gameserver.sqlite_ledger import LedgerError, SqliteLedger
from tests.gameserver.gs_helpers import Table


def played(table: Table) -> list[Event]:
    e = table.engine
    e.open_round()
    table.flush()
    table.bet("alice", "four_of_a_kind", 1000)
    table.bet("bob", "small", 2000)
    table.shake()
    table.close_betting()
    table.reveal("WWWW")
    table.advance(5)
    e.open_round()
    table.flush()
    table.bet("bob", "even", 500)
    table.send(ReportKind.BOWL_OFF)  # SH-4b void
    return table.log


def test_sqlite_matches_the_in_memory_projection_and_survives_reopen(tmp_path: Path) -> None:
    events = played(Table())
    memory = InMemoryLedger()
    memory.append(events)
    path = tmp_path / "l.db"
    ledger = SqliteLedger(path)
    ledger.append(events)
    ledger.close()
    reopened = SqliteLedger(path)
    try:
        assert reopened.rounds() == memory.rounds()
        assert reopened.bets() == memory.bets()
        assert reopened.events() == memory.events()
        assert reopened.events(round_id=2) == memory.events(round_id=2) != []
        assert [e.round_id for e in reopened.events(round_id=2)] == [2] * len(reopened.events(round_id=2))
        assert reopened.rounds(2) == memory.rounds(2) == [memory.rounds()[1]]
        assert reopened.rounds(7) == []
        assert reopened.balance("alice") == 100_000 - 1000 + 7500
        assert reopened.balance("bob") == 100_000 - 2000 + 3920
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        kinds = [r[0] for r in db.execute("SELECT kind FROM significant_events")]
        assert kinds == ["round_voided"]
        db.close()
    finally:
        reopened.close()


def test_a_second_settlement_of_the_same_bet_is_refused_and_rolled_back(tmp_path: Path) -> None:
    events = played(Table())
    ledger = SqliteLedger(tmp_path / "l.db")
    try:
        ledger.append(events)
        settled = next(e for e in events if e.kind is EventKind.ROUND_SETTLED)
        replay = Event(events[-1].seq + 1, settled.at, settled.kind, settled.round_id, settled.data)
        with pytest.raises(LedgerError, match="cannot be round_settled"):
            ledger.append([replay])
        assert ledger.events(after=events[-1].seq) == []  # nothing of the failed batch was kept
        assert ledger.balance("alice") == 100_000 - 1000 + 7500
    finally:
        ledger.close()
