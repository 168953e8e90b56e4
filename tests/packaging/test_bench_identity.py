"""``xocdia-hil bench check`` on a bench attached by URL reads what identifies itself at the far end of each ``url``
line: the game server's HELLO (its unit and firmware), dialled or, on a ``listen://`` line, after the server dials
in; a silent far end, or one that identifies as a device, is a problem line; a dialect that declares no identities
is said to have none. Real sockets on the loopback: the far end of each line writes the bytes the dialect's own
server end (or device end) puts on the wire."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from harness.bench.config import load_bench
from harness.cli.bench import check_bench
from harness.wire.dialects.base import EndSettings, LineSpec
from harness.wire.dialects.registry import load_dialect
from harness.wire.messages import DEVICES

LINES = ("bowl", "shaker", "reader", "lamp", "console")
SERVER_END = EndSettings(unit="0042", firmware="lab-srv-2.3")


def _spec(line: str) -> LineSpec:
    dialect = load_dialect("xocdia-ascii")
    return next(s for s in dialect.lines(list(DEVICES)) if s.name == line)


class _ServerSide:
    """The reference dialect's server end of a line, as a game server runs it: HELLO (``SRV-0042``) on open, sent
    again until acknowledged, heartbeats."""

    def __init__(self, line: str = "bowl") -> None:
        self.end = load_dialect("xocdia-ascii").server_end(_spec(line), SERVER_END, time.monotonic())

    def output(self, now: float) -> bytes:
        self.end.tick(now)
        return self.end.take_output()


class _DeviceSide:
    """The reference dialect's device end of ``line``, as a device runs it: its HELLO on open, sent again until
    acknowledged."""

    def __init__(self, line: str) -> None:
        self.end = load_dialect("xocdia-ascii").device_end(_spec(line), EndSettings())
        self.end.open(time.monotonic())

    def output(self, now: float) -> bytes:
        self.end.poll(now)
        return self.end.take_output()


class _Silent:
    def output(self, now: float) -> bytes:
        return b""


@contextlib.contextmanager
def _http() -> Iterator[int]:
    """A loopback HTTP server that answers every GET (the game server's API is up)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def _line_end(make: Callable[[], _ServerSide | _DeviceSide | _Silent]) -> Iterator[int]:
    """A loopback TCP port standing for the far end of the lines: each connection it accepts gets its own end from
    ``make``, whose output is written to it as its timers run, until the end."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    stop = threading.Event()
    held: list[tuple[socket.socket, _ServerSide | _DeviceSide | _Silent]] = []

    def serve() -> None:
        while not stop.wait(0.01):
            with contextlib.suppress(BlockingIOError):
                conn, _ = listener.accept()
                held.append((conn, make()))
            for conn, end in held:
                with contextlib.suppress(OSError):
                    conn.sendall(end.output(time.monotonic()))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(2)
        for conn, _ in held:
            conn.close()
        listener.close()


def _bench(tmp_path: Path, http_port: int, urls: dict[str, str], **devices: Any) -> Path:
    raw = {
        "name": "lab",
        "server": {"kind": "url", "url": f"http://127.0.0.1:{http_port}"},
        "devices": {"transport": "url", "urls": urls, **devices},
    }
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_each_line_prints_the_server_hello_that_identified_itself(tmp_path: Path) -> None:
    with _http() as api, _line_end(_ServerSide) as port:
        path = _bench(tmp_path, api, {name: f"socket://127.0.0.1:{port}" for name in LINES})
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", "bench", "check", str(path), "--timeout", "2"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in LINES:
        expected = f"line {name}: the server's end identified itself: SRV-0042 (protocol 1, firmware lab-srv-2.3)"
        assert expected in done.stdout.splitlines(), done.stdout
    assert done.stdout.rstrip().endswith("bench lab: ready")


def test_a_silent_far_end_is_said_within_the_timeout_and_is_no_problem(tmp_path: Path) -> None:
    # a server's end may wait for the device's HELLO before it says anything (the reference server's ASCII lines do)
    with _http() as api, _line_end(_Silent) as port:
        bench = load_bench(str(_bench(tmp_path, api, {name: f"socket://127.0.0.1:{port}" for name in LINES})))
        started = time.monotonic()
        result = check_bench(bench, 1.0)
        took = time.monotonic() - started
    assert result.ready and took < 5, (took, result.problems)
    assert sorted(result.identities) == sorted(
        f"line {name}: the far end said nothing within 1 s (a server's end that waits for the device to speak first:"
        " the line opens, its identity is not read)"
        for name in LINES
    )


def test_a_far_end_that_identifies_as_a_device_is_a_problem_line(tmp_path: Path) -> None:
    with _http() as api, _line_end(_ServerSide) as good, _line_end(lambda: _DeviceSide("shaker")) as wrong:
        urls = {name: f"socket://127.0.0.1:{good}" for name in LINES}
        urls["bowl"] = f"socket://127.0.0.1:{wrong}"  # the bowl's URL reaches a shaker's device end
        result = check_bench(load_bench(str(_bench(tmp_path, api, urls))), 2.0)
    assert result.problems == [
        f"bench lab: line bowl (socket://127.0.0.1:{wrong}): the far end identifies as SHAKER-0001 (firmware"
        " xocdia-hil-0.1), a SHAKER device, not the game server's end of the line"
    ]
    assert len(result.identities) == len(LINES) - 1 and result.identities[0].startswith("line shaker: ")


def test_a_listen_line_reads_the_hello_of_the_server_that_dials_in(tmp_path: Path) -> None:
    port = _free_port()
    stop = threading.Event()

    def dial() -> None:  # the game server dialling its controller's address until it answers, then speaking
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                    end = _ServerSide("bowl")
                    while not stop.wait(0.01):
                        conn.sendall(end.output(time.monotonic()))
                    return
            except OSError:
                time.sleep(0.05)

    with _http() as api, _line_end(_ServerSide) as others:
        urls = {name: f"socket://127.0.0.1:{others}" for name in LINES}
        urls["bowl"] = f"listen://127.0.0.1:{port}"
        bench = load_bench(str(_bench(tmp_path, api, urls)))
        dialler = threading.Thread(target=dial, daemon=True)
        dialler.start()
        result = check_bench(bench, 2.0)
        stop.set()
        dialler.join(5)
    assert result.ready, result.problems
    assert result.identities[0] == (
        "line bowl: the server's end identified itself: SRV-0042 (protocol 1, firmware lab-srv-2.3)"
    )


def test_a_listen_line_no_server_dials_is_a_problem_line(tmp_path: Path) -> None:
    port = _free_port()
    with _http() as api, _line_end(_ServerSide) as others:
        urls = {name: f"socket://127.0.0.1:{others}" for name in LINES}
        urls["bowl"] = f"listen://127.0.0.1:{port}"
        result = check_bench(load_bench(str(_bench(tmp_path, api, urls))), 1.0)
    assert result.problems == [
        f"bench lab: line bowl (listen://127.0.0.1:{port}): no connection from the server within 1 s"
    ]


def test_a_dialect_without_identities_is_said_to_declare_none(tmp_path: Path) -> None:
    with _http() as api, _line_end(_Silent) as port:
        path = _bench(
            tmp_path,
            api,
            {name: f"socket://127.0.0.1:{port}" for name in LINES},
            dialect="tests.wire.dialects.vendor_poll:VendorPollDialect",
        )
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", "bench", "check", str(path), "--timeout", "1", "--json"],
            cwd=Path(__file__).resolve().parents[2],  # the dialect module is found in the working folder
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    report = json.loads(done.stdout)
    assert report["ready"], report["problems"]
    assert report["identities"] == [
        f"line {name}: dialect vendor-poll declares no identities (no HELLO): only opened" for name in LINES
    ]
