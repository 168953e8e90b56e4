"""A line's dialect options (docs/dialects/) reach a real ``xocdia-server`` through its config: checked at start with
an error naming the field and the allowed values, reported per line in ``/health``, and in force on the wire (a
``min_confidence`` above the reader's confidence makes the server refuse its re-read)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gameserver.config import ConfigError, parse_config
from gameserver.dialects import make_line
from gameserver.dialects.bus import BusLine
from tests.support.gs_process import ServerProcess, write_config


def _reader_object(**fields: Any) -> bytes:
    return json.dumps({"v": 1, "src": "READER", **fields}, separators=(",", ":")).encode() + b"\n"


class _ServerAnswers:
    """The reader's end of its TCP line: reads the server's objects, skipping heartbeats."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buf = b""

    def next(self) -> dict[str, Any]:
        while True:
            while b"\n" not in self.buf:
                chunk = self.conn.recv(4096)
                assert chunk, "the server closed the reader's line"
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            obj: dict[str, Any] = json.loads(line)
            if obj["type"] != "hb":
                return obj


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP port the server connects to as ``socket://`` (the reader's line)."""
    sock = socket.create_server(("127.0.0.1", 0))
    sock.settimeout(15)
    yield sock
    sock.close()


def test_min_confidence_reaches_the_server_and_decides_what_it_refuses(tmp_path: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    reader = {"url": f"socket://127.0.0.1:{port}", "dialect": "xocdia-jsonl", "options": {"min_confidence": 0.9}}
    config = write_config(tmp_path / "c.yaml", {"devices": {"reader": reader}}, auto_open=False)
    server = ServerProcess(tmp_path / "ledger.db", ["--config", str(config)]).start()
    try:
        conn, _ = listener.accept()
        conn.settimeout(15)
        with conn:
            answers = _ServerAnswers(conn)
            conn.sendall(b"\n" + _reader_object(type="hello", seq=1, id="cam1", proto=1, fw="t1"))
            assert answers.next() == {"v": 1, "src": "SRV", "type": "ack", "of": 1}
            unsure = {"type": "rearranged", "faces": "RWRW", "confidence": [0.8] * 4, "round": "1"}
            conn.sendall(_reader_object(seq=2, **unsure))  # sure enough for the default 0.5, not for 0.9
            assert answers.next() == {"v": 1, "src": "SRV", "type": "nak", "of": 2, "reason": "field"}
            sure = {**unsure, "confidence": [0.95] * 4}
            conn.sendall(_reader_object(seq=3, **sure))
            assert answers.next() == {"v": 1, "src": "SRV", "type": "ack", "of": 3}
            status, health = server.call("GET", "/health")
        assert status == 200
        assert health["devices"]["reader"]["dialect"] == "xocdia-jsonl"
        assert health["devices"]["reader"]["options"] == {"min_confidence": 0.9}
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("device", "message"),
    [
        (
            {"url": "loop://", "dialect": "xocdia-bus", "options": {"poll_interval_s": 0}},
            "devices.bus.options.poll_interval_s: must be a number of seconds 0.001..10; got 0",
        ),
        (
            {"url": "loop://", "options": {"min_confidence": 0.9}},
            "devices.bus.options.min_confidence: unknown option for dialect xocdia-ascii; allowed: none",
        ),
    ],
)
def test_a_bad_option_stops_the_server_naming_the_field_and_the_allowed_values(
    tmp_path: Path, device: dict[str, Any], message: str
) -> None:
    config = write_config(tmp_path / "c.yaml", {"devices": {"bus": device}})
    argv = ["--db", str(tmp_path / "l.db"), "--port", "0", "--config", str(config)]
    done = subprocess.run(
        [sys.executable, "-m", "gameserver.cli", *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"xocdia-server: error: {config}.{message}"


def test_config_checks_options_against_the_line_s_dialect() -> None:
    parsed = parse_config(
        {
            "dialect": "xocdia-bus",
            "devices": {"bus": {"url": "loop://", "options": {"poll_interval_s": 0.2, "retries": 0}}},
        }
    )
    assert parsed.device_options == {"bus": {"poll_interval_s": 0.2, "retries": 0}}
    for options, allowed in (
        ({"retries": 1.5}, "config.devices.bus.options.retries: must be a whole number 0..10; got 1.5"),
        (
            {"poll": 1},
            "config.devices.bus.options.poll: unknown option for dialect xocdia-bus; allowed: poll_interval_s,",
        ),
        ("fast", "config.devices.bus.options: must be a mapping of xocdia-bus options"),
    ):
        with pytest.raises(ConfigError) as err:
            parse_config({"devices": {"bus": {"url": "loop://", "dialect": "xocdia-bus", "options": options}}})
        assert str(err.value).startswith(allowed)


def test_a_line_is_built_with_its_options_and_the_defaults_for_the_rest() -> None:
    line = make_line("xocdia-bus", "bus", None, 0.0, 3.0, {"poll_interval_s": 0.25})
    assert isinstance(line, BusLine)
    assert (line.interval, line.timeout, line.retries) == (0.25, 0.02, 2)
