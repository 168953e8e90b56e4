"""The adapter interface against the real reference server: loading by dotted path, the HTTP/WebSocket adapter
on a real ``xocdia-server`` process, and clear errors when a server cannot be started."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
import simpy

from gameserver.model import Phase
from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.loader import load_adapter
from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.errors import AdapterError
from harness.records import PlayerSpec
from harness.wire.dialects.ascii.dialect import AsciiDialect
from harness.wire.dialects.base import LineSpec
from harness.wire.messages import Source


def _setup(tmp_path: Path) -> ServerSetup:
    return ServerSetup(
        players=(PlayerSpec("alice", 10_000), PlayerSpec("bob", 50)),
        devices={},
        env=simpy.Environment(),
        workdir=tmp_path,
        betting_s=30.0,
        round_gap_s=0.05,
        pause_timeout_s=60.0,
        reshake_cap=3,
        result_timeout_s=30.0,
        heartbeat_s=3.0,
    )


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("nodots", "expected 'package.module:ClassName'"),
        ("harness.nowhere:X", "cannot import harness.nowhere"),
        ("harness.bench.adapters.base:PlayerSpec", "PlayerSpec is not a GameServerAdapter subclass"),
    ],
)
def test_load_adapter_names_what_is_wrong(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_adapter(path, {})


def test_load_adapter_builds_the_named_class() -> None:
    adapter = load_adapter("harness.bench.adapters.reference_inprocess:InProcessAdapter", {"x": 1})
    assert isinstance(adapter, InProcessAdapter) and adapter.options == {"x": 1}


def test_http_adapter_on_a_real_server_process(tmp_path: Path) -> None:
    adapter = HttpAdapter({})
    adapter.start(_setup(tmp_path))
    with adapter:
        with pytest.raises(AdapterError, match="not_connected"):
            adapter.place_bet("alice", "a-1", "big", 100)
        adapter.connect("alice")
        closed = adapter.place_bet("alice", "a-1", "big", 100)
        assert (closed.accepted, closed.code) == (False, "betting_closed")  # no round is open yet
        adapter.supervise("open")
        ok = adapter.place_bet("alice", "a-2", "big", 1_000)
        assert (ok.accepted, ok.balance_before, ok.balance_after, ok.round_id) == (True, 10_000, 9_000, "1")
        adapter.connect("bob")
        poor = adapter.place_bet("bob", "b-1", "small", 100)
        assert (poor.accepted, poor.code) == (False, "insufficient_balance")
        with pytest.raises(AdapterError) as err:
            adapter.supervise("resume")
        assert err.value.code == "not_paused"
        adapter.supervise("cancel", "test")
        kinds = [(e.round_id, e.kind, e.clause) for e in adapter.round_events()]
        assert kinds == [("1", "opened", ""), ("1", "cancelled", "ERR-3")]
        (row,) = adapter.bet_record("alice")
        assert (row.bet_type, row.wagered, row.result, row.returned, row.round_status) == (
            "big",
            1000,
            "refund",
            1000,
            "cancelled",
        )
        assert adapter.balance("alice") == 10_000
        adapter.disconnect("alice")
        with pytest.raises(AdapterError, match="not_connected"):
            adapter.place_bet("alice", "a-3", "big", 100)
    adapter.stop()  # idempotent


def test_http_adapter_reports_a_server_that_cannot_start(tmp_path: Path) -> None:
    adapter = HttpAdapter({"command": ["xocdia-server", "--port", "70000"]})
    with pytest.raises(AdapterError) as err:
        adapter.start(_setup(tmp_path))
    assert err.value.code == "start_failed" and "port" in err.value.message


def test_http_adapter_reports_a_missing_program(tmp_path: Path) -> None:
    adapter = HttpAdapter({"command": ["no-such-xocdia-server"]})
    with pytest.raises(AdapterError, match="start_failed: cannot run 'no-such-xocdia-server'"):
        adapter.start(_setup(tmp_path))


def test_http_adapter_refuses_a_dialect_the_server_process_does_not_speak(tmp_path: Path) -> None:
    class Acme(AsciiDialect):  # the ASCII dialect under a name the server does not know
        name = "acme"

    line = LineSpec("bowl", (Source.BOWL,), "serial", Acme())
    setup = dataclasses.replace(_setup(tmp_path), devices={"bowl": "/dev/null"}, lines={"bowl": line})
    with pytest.raises(AdapterError) as err:
        HttpAdapter({}).start(setup)
    assert str(err.value) == (
        "start_failed: devices.dialect: the reference server process speaks xocdia-ascii, xocdia-bus, xocdia-jsonl;"
        " got 'acme' on line bowl (a lab's dialect certifies on the in-process bench)"
    )


def test_in_process_adapter_refuses_url_devices(tmp_path: Path) -> None:
    setup = dataclasses.replace(_setup(tmp_path), devices={"bowl": "/dev/ttyUSB0"})
    with pytest.raises(AdapterError, match="device bowl: the in-process server needs a transport object"):
        InProcessAdapter({}).start(setup)


# ---------------------------------------------------------------------- kill -9 and restart (fault injection)
UNREACHABLE_CALLS = [
    ("connect", ("alice",)),
    ("place_bet", ("alice", "a-9", "big", 100)),
    ("supervise", ("open",)),
    ("round_events", ()),
    ("bet_record", ("alice",)),
    ("balance", ("alice",)),
]


def test_in_process_kill_keeps_only_the_ledger_and_restart_cancels_the_round(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    adapter = InProcessAdapter({})
    adapter.start(setup)
    adapter.connect("alice")
    adapter.supervise("open")
    assert adapter.place_bet("alice", "a-1", "big", 1_000).accepted
    setup.env.run(until=1.0)
    dead = adapter.engine
    adapter.kill_server()
    assert not adapter.server_up
    for name, call_args in UNREACHABLE_CALLS:
        with pytest.raises(AdapterError) as err:
            getattr(adapter, name)(*call_args)
        assert err.value.code == "unreachable", name
    adapter.disconnect("alice")  # still allowed
    setup.env.run(until=60.0)  # betting_s is 30: a serviced engine would have closed betting by now
    assert dead.active is not None and dead.active.phase is Phase.BETTING
    adapter.restart_server()
    assert adapter.server_up and adapter.engine is not dead
    events = [(e.round_id, e.kind, e.clause) for e in adapter.round_events()]
    assert events == [("1", "opened", ""), ("1", "cancelled", "ERR-3")]
    (row,) = adapter.bet_record("alice")
    assert (row.result, row.returned, row.round_status) == ("refund", 1_000, "cancelled")
    assert adapter.balance("alice") == 10_000
    with pytest.raises(AdapterError, match="not_connected"):  # sessions did not survive the kill
        adapter.place_bet("alice", "a-2", "big", 100)
    adapter.restart_server()  # up: nothing happens
    assert len(adapter.round_events()) == 2
    adapter.connect("alice")
    adapter.supervise("open")
    assert adapter.place_bet("alice", "a-3", "big", 100).round_id == "2"


def test_in_process_restart_before_start_is_refused() -> None:
    adapter = InProcessAdapter({})
    adapter.kill_server()
    with pytest.raises(AdapterError) as err:
        adapter.restart_server()
    assert err.value.code == "not_started"


def test_http_kill_and_restart_on_the_same_database(tmp_path: Path) -> None:
    adapter = HttpAdapter({})
    assert not adapter.server_up
    adapter.restart_server()  # never killed: nothing to restart
    assert not adapter.server_up
    adapter.start(_setup(tmp_path))
    with adapter:
        host, port = adapter.address
        assert adapter.server_up and port > 0 and adapter.player_address("alice") == (host, port)
        adapter.connect("alice")
        adapter.supervise("open")
        assert adapter.place_bet("alice", "a-1", "big", 1_000).accepted
        adapter.kill_server()
        assert not adapter.server_up
        with pytest.raises(AdapterError, match="not_connected"):  # the kill dropped the player's stream
            adapter.place_bet("alice", "a-2", "big", 100)
        with pytest.raises(AdapterError) as err:
            adapter.balance("alice")
        assert err.value.code == "unreachable"
        adapter.restart_server()
        assert adapter.server_up and adapter.address[1] > 0
        events = [(e.round_id, e.kind, e.clause) for e in adapter.round_events()]
        assert events == [("1", "opened", ""), ("1", "cancelled", "ERR-3")]
        (row,) = adapter.bet_record("alice")
        assert (row.result, row.returned, row.round_status) == ("refund", 1_000, "cancelled")
        assert adapter.balance("alice") == 10_000
        address = adapter.address
        adapter.restart_server()  # up: nothing happens
        assert adapter.address == address
        adapter.connect("alice")
        assert adapter.place_bet("alice", "a-3", "big", 100).code == "betting_closed"  # no round open
    assert not adapter.server_up
    adapter.stop()  # idempotent


@pytest.mark.parametrize(
    "make",
    [lambda: InProcessAdapter({}), lambda: InProcessAdapter({"api": "http"}), lambda: HttpAdapter({})],
    ids=["in-process-direct", "in-process-http", "http-process"],
)
def test_one_rounds_bets_are_every_players_rows_of_that_round(
    tmp_path: Path, make: Callable[[], InProcessAdapter | HttpAdapter]
) -> None:
    """``round_bet_record`` (RoundRecords) serves every player's rows of the round asked, as each player's bet record
    has them, and nothing for a round the server does not know."""
    setup = dataclasses.replace(_setup(tmp_path), players=(PlayerSpec("alice", 10_000), PlayerSpec("bob", 5_000)))
    adapter = make()
    adapter.start(setup)
    with adapter:
        for player in ("alice", "bob"):
            adapter.connect(player)
        adapter.supervise("open")
        assert adapter.place_bet("alice", "a-1", "big", 1_000).accepted
        assert adapter.place_bet("bob", "b-1", "odd", 200).accepted
        assert adapter.place_bet("alice", "a-2", "four_red", 100).accepted
        adapter.supervise("cancel", "test")
        adapter.supervise("open")
        assert adapter.place_bet("bob", "b-2", "small", 300).round_id == "2"
        every = sorted((*adapter.bet_record("alice"), *adapter.bet_record("bob")), key=lambda r: int(r.bet_id))
        first = adapter.round_bet_record("1")
        assert first == [row for row in every if row.round_id == "1"]
        assert [(r.player_id, r.client_bet_id) for r in first] == [("alice", "a-1"), ("bob", "b-1"), ("alice", "a-2")]
        assert adapter.round_bet_record("2") == [row for row in every if row.round_id == "2"] and len(every) == 4
        assert adapter.round_bet_record("7") == [] and adapter.round_bet_record("r-1") == []
