"""The server's own notion of a player's connection (gameserver/players.py) and the bet record it serves: the
in-process adapter reaches both exactly as the HTTP server's event stream and ``GET /v1/players/{id}/bets`` do."""

from __future__ import annotations

from pathlib import Path

import simpy

from gameserver.engine import RoundEngine
from gameserver.ledger import InMemoryLedger
from gameserver.model import EngineConfig
from gameserver.players import Sessions, bet_record
from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.records import PlayerSpec


def test_sessions_count_each_players_connections_and_change_nothing_in_the_game() -> None:
    engine = RoundEngine(EngineConfig(auto_open=False), lambda: 0.0)
    engine.open_wallet("alice", 1_000)
    engine.open_round()
    engine.place_bet("alice", "a-1", "big", 500)
    engine.drain()
    sessions = Sessions()
    sessions.opened(engine, "alice")
    sessions.opened(engine, "alice")
    sessions.closed(engine, "alice")
    assert sessions.connected("alice") and sessions.players() == ["alice"]
    sessions.closed(engine, "alice")
    sessions.closed(engine, "alice")  # one more close than opens: no-op
    assert not sessions.connected("alice") and sessions.players() == []
    assert engine.drain() == [] and engine.wallets["alice"] == 500
    assert engine.active is not None and len(engine.active.bets) == 1


def test_in_process_adapter_opens_and_closes_the_servers_sessions(tmp_path: Path) -> None:
    env = simpy.Environment()
    setup = ServerSetup((PlayerSpec("alice", 10_000),), {}, env, tmp_path, 30.0, 0.05, 60.0, 3, 30.0, 3.0)
    adapter = InProcessAdapter({})
    adapter.start(setup)
    server = adapter._sessions  # the server's own object, as the HTTP API holds one
    adapter.connect("alice")
    adapter.connect("alice")  # already connected: one session
    assert server.players() == ["alice"]
    adapter.supervise("open")
    assert adapter.place_bet("alice", "a-1", "big", 1_000, lose_reply=True).accepted
    assert server.players() == []  # the lost reply dropped the connection, and the server learnt of it
    adapter.connect("alice")
    adapter.disconnect("alice")
    assert server.players() == []
    adapter.kill_server()
    adapter.restart_server()
    assert adapter._sessions.players() == []  # a new process: nobody connected


def test_bet_record_is_the_api_record_of_the_ledger() -> None:
    engine = RoundEngine(EngineConfig(auto_open=False), lambda: 0.0)
    ledger = InMemoryLedger()
    engine.open_wallet("alice", 1_000)
    engine.open_round()
    engine.place_bet("alice", "a-1", "odd", 200)
    ledger.append(engine.drain())
    (row,) = bet_record(ledger, "alice")
    assert (row["result"], row["round_status"], row["outcome"], row["reds"]) == ("pending", "in_progress", "", None)
    assert (row["balance_before"], row["balance_after"], row["wagered"]) == (1_000, 800, 200)
    assert bet_record(ledger, "alice", 2) == [] and bet_record(ledger, None) == [row]
