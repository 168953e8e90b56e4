"""On the local HIL bench (a real xocdia-server process, pty device lines, players over HTTP/WS): the fault
proxy's latency, blackhole, reset and disconnect on real sockets, and kill -9 restarts that lose nothing."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator

import pytest

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.faults.fault_adapters import FaultableHttpAdapter
from harness.faults.injector import run_schedule
from harness.faults.prepare import prepare_bench
from harness.faults.proxy import FaultProxy
from tests.faults.faults_helpers import Make, bet_ops, fault

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def proxied() -> Iterator[FaultProxy]:
    with Rig.build(prepare_bench(load_bench("local-hil"), 1), {"p1": 1000}) as rig:
        assert isinstance(rig.adapter, FaultableHttpAdapter)
        proxy = rig.adapter.player_proxy("p1")
        assert proxy is not None
        yield proxy


def _health(port: int, timeout: float = 5.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status
    finally:
        conn.close()


def test_requests_pass_through_a_healthy_proxy(proxied: FaultProxy) -> None:
    proxied.heal()
    assert _health(proxied.port) == 200


def test_latency_delays_the_answer(proxied: FaultProxy) -> None:
    proxied.heal()
    proxied.set(latency=0.3)
    try:
        start = time.monotonic()
        assert _health(proxied.port) == 200
        assert time.monotonic() - start >= 0.6  # the request and the answer each wait 0.3 s
    finally:
        proxied.heal()


def test_blackhole_swallows_the_request(proxied: FaultProxy) -> None:
    proxied.heal()
    proxied.set(blackhole=True)
    before = proxied.swallowed
    try:
        with pytest.raises(TimeoutError):
            _health(proxied.port, timeout=0.5)
        assert proxied.swallowed > before
    finally:
        proxied.heal()


def test_reset_aborts_an_open_connection_with_rst(proxied: FaultProxy) -> None:
    proxied.heal()
    with socket.create_connection(("127.0.0.1", proxied.port), timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = http.client.HTTPResponse(sock)  # reads the whole answer, however the proxy chunked it
        answer.begin()
        assert answer.status == 200
        answer.read()
        assert not answer.will_close  # the connection stays open: what follows can only be the proxy's RST
        proxied.reset()
        with pytest.raises(ConnectionResetError):
            sock.recv(4096)


def test_reset_replies_lets_the_request_through_and_cuts_the_answer(proxied: FaultProxy) -> None:
    proxied.heal()
    proxied.set(reset_replies=True)
    before = proxied.replies_reset
    try:
        with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
            _health(proxied.port)
        assert proxied.replies_reset == before + 1
    finally:
        proxied.heal()
    assert _health(proxied.port) == 200


def test_down_refuses_new_connections_until_healed(proxied: FaultProxy) -> None:
    proxied.set(down=True)
    try:
        with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
            _health(proxied.port)
    finally:
        proxied.heal()
    assert _health(proxied.port) == 200


def test_kill_restart_and_disconnect_lose_nothing(make_schedule: Make) -> None:
    schedule = make_schedule(
        fault("server_kill", at={"round": 1, "phase": "shaking"}, duration=0.3),
        fault("player_disconnect", target="p2", at={"round": 2, "phase": "betting_open"}, duration=0.8),
        fault("player_reset", target="p1", at={"round": 3, "phase": "betting_open"}, duration=2.0),
        rounds=3,
        bets_per_round=1,
        targets={"devices": []},
    )
    result = run_schedule(load_bench("local-hil"), schedule)
    assert result.passed and not result.aborted, result.report.lines()
    assert result.final is not None
    end1 = next(e for e in result.final.events if e.round_id == "1" and e.ends_round)
    assert (end1.kind, end1.reason) == ("cancelled", "server restart")
    assert all(r.result == "refund" for rows in result.final.records.values() for r in rows if r.round_id == "1")
    p2_round2 = [op for op in bet_ops(result.history, "p2") if op.t > 1.0 and op.type != "ok"]
    assert [op.detail for op in p2_round2] == ["disconnected: not sent"]
    p1_cut = [op for op in bet_ops(result.history, "p1") if op.type == "unknown"]
    assert [op.detail for op in p1_cut] == ["unreachable"]  # the proxy turned the answer into an RST
