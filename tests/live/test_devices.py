"""``xocdia-hil devices``: round state changes as they happen, the feed, ``--json``, and SIGTERM's cleanup."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.feed import FeedKind, read_feed


def test_devices_prints_round_states_and_records_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "devices.jsonl"
    argv = ["devices", "--lamp", "fixed", "--no-ack", "--duration", "1.5", "--record", str(record)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(r"round 1: opened\n.*round 1: closed\n.*round 1: settled [RW]{4}\n", out)
    events = read_feed(record.read_text(encoding="utf-8").splitlines())
    assert events[0].kind == FeedKind.BENCH and events[0].data["bench"] == "devices"
    assert any(e.kind == FeedKind.FRAME and e.data["dir"] == "tx" for e in events)
    assert main([*argv[:-2], "-q"]) == 0
    assert "round 1" not in capsys.readouterr().out
    assert main([*argv[:-2], "--json"]) == 0
    first, last = capsys.readouterr().out.strip().splitlines()
    assert set(json.loads(first)["ports"]) == {"bowl", "shaker", "reader", "lamp", "console"}
    assert json.loads(last)["rounds_ended"] >= 1


def test_sigterm_removes_the_ports_folder(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "devices", "--lamp", "fixed", "--no-ack", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # BOWL /tmp/xocdia-devices-XXXX/bowl -> /dev/pts/N
    folder = Path(line.split()[1]).parent
    assert folder.is_dir()
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert "stopped after" in proc.stdout.read()
    assert not folder.exists()
