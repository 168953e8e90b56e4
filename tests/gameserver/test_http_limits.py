"""HTTP limits on a real server process over loopback sockets: an oversized head is 431 unread, slow heads and
bodies are timed out, idle connections never lock a served client out, and RSS stays flat under both probes."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.gs_process import PLAYERS, ServerProcess, write_config

TOKEN = PLAYERS["alice"][0]
HTTP = {"header_timeout_s": 2.0, "body_timeout_s": 2.0, "keep_alive_s": 2}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    config = write_config(tmp_path / "c.yaml", {"http": HTTP}, betting_s=600)
    proc = ServerProcess(tmp_path / "l.db", ["--config", str(config)]).start()
    yield proc
    proc.stop()


def rss_mb(server: ServerProcess) -> float:
    assert server.proc is not None
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def connect(server: ServerProcess) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=10)
    return sock


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (bounded by the socket's timeout)."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def served(server: ServerProcess) -> bool:
    return server.call("GET", "/v1/players/alice/balance", TOKEN)[0] == 200


def test_a_64k_header_gets_431_without_the_body_being_read(server: ServerProcess) -> None:
    before = rss_mb(server)
    socks = []
    for _ in range(8):
        sock = connect(server)
        head = b"POST /v1/bets HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 64 * 1024 + b"\r\n"
        sock.sendall(head + b"Content-Length: 10000000\r\n\r\n")
        socks.append(sock)
    for sock in socks:
        reply = answer(sock)
        assert reply.startswith(b"HTTP/1.1 431 "), reply[:80]
        assert b"connection: close" in reply
        sock.close()
    assert served(server)
    assert rss_mb(server) - before < 50


def test_slow_heads_are_closed_within_the_header_timeout_while_a_client_is_served(server: ServerProcess) -> None:
    before = rss_mb(server)
    slow = [connect(server) for _ in range(200)]
    for sock in slow:
        sock.sendall(b"GET /health HTTP/1.1\r\nX-Slow: ")  # a valid head, never finished
    started = time.monotonic()
    closed: set[int] = set()
    while len(closed) < len(slow) and time.monotonic() - started < HTTP["header_timeout_s"] + 4:
        assert served(server)  # a normal client is served throughout
        for i, sock in enumerate(slow):
            if i in closed:
                continue
            try:
                sock.send(b"a")
                sock.setblocking(False)
                data = sock.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            finally:
                sock.setblocking(True)
            if data == b"" or data.startswith(b"HTTP/1.1 408"):
                closed.add(i)
        time.sleep(0.5)
    assert len(closed) == len(slow), f"{len(slow) - len(closed)} slow connections still open"
    assert time.monotonic() - started < HTTP["header_timeout_s"] + 4
    assert rss_mb(server) - before < 50
    for sock in slow:
        sock.close()


def test_a_slow_body_is_timed_out_with_408_and_places_no_bet(server: ServerProcess) -> None:
    sock = connect(server)
    sock.sendall(
        b"POST /v1/bets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Length: 80\r\n\r\n{"
    )  # fmt: skip
    started = time.monotonic()
    reply = answer(sock)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:80]
    assert time.monotonic() - started < HTTP["body_timeout_s"] + 3
    assert server.call("GET", "/v1/players/alice/bets", TOKEN)[1]["bets"] == []


def test_an_idle_keep_alive_connection_is_closed(server: ServerProcess) -> None:
    sock = connect(server)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    started = time.monotonic()
    reply = answer(sock)  # the response, then the close after keep_alive_s idle
    sock.close()
    assert reply.startswith(b"HTTP/1.1 200 ")
    assert HTTP["keep_alive_s"] - 0.5 < time.monotonic() - started < HTTP["keep_alive_s"] + 3


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[Callable[[dict[str, int]], ServerProcess]]:
    started: list[ServerProcess] = []

    def start(http: dict[str, int]) -> ServerProcess:
        config = write_config(tmp_path / f"c{len(started)}.yaml", {"http": http}, betting_s=600)
        proc = ServerProcess(tmp_path / f"l{len(started)}.db", ["--config", str(config)])
        started.append(proc)
        return proc.start()

    yield start
    for proc in started:
        proc.stop()


def test_idle_connections_over_the_caps_make_room_for_a_served_client(
    capped: Callable[[dict[str, int]], ServerProcess],
) -> None:
    server = capped({"max_connections": 30, "max_connections_per_client": 10})
    idle = [connect(server) for _ in range(40)]  # never send a byte
    time.sleep(0.3)
    for _ in range(5):
        assert served(server)
    still_open = 0
    for sock in idle:
        sock.setblocking(False)
        try:
            still_open += sock.recv(1) != b""
        except BlockingIOError:
            still_open += 1
        except OSError:
            pass
        sock.close()
    assert still_open <= 10


def test_limits_in_the_config_are_checked_naming_the_field(tmp_path: Path) -> None:
    import subprocess
    import sys

    config = write_config(tmp_path / "c.yaml", {"http": {"header_timeout_s": 0}})
    cmd = [sys.executable, "-m", "gameserver.cli", "--db", str(tmp_path / "l.db"), "--port", "0", "--config"]
    result = subprocess.run([*cmd, str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"xocdia-server: error: {config}.http.header_timeout_s: must be a number of seconds 0.1..3600; got 0"
    )


def test_a_websocket_message_over_the_limit_closes_the_stream(server: ServerProcess) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect as ws_connect

    url = f"ws://{server.host}:{server.port}/v1/stream"
    with ws_connect(url, additional_headers={"Authorization": f"Bearer {TOKEN}"}, open_timeout=10) as ws:
        assert '"hello"' in str(ws.recv(timeout=10))
        ws.send("x" * 1000)  # within the limit: the stream stays open
        ws.send("x" * (64 * 1024 + 1))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
