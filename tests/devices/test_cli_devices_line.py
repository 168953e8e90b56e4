"""``xocdia-hil devices --line``: the devices send at the line speed asked for, and a bad one is refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BYTE_S_9600_8N1 = 10 / 9600  # start bit, 8 data bits, stop bit


def test_frames_take_the_time_the_line_needs(tmp_path: Path) -> None:
    trace = tmp_path / "t"
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "devices", "--lamp", "fixed", "--no-ack", "--duration", "1",
         "--line", "9600", "--seed", "1", "--trace", str(trace)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in Path(f"{trace}.jsonl").read_text("utf-8").splitlines()]
    spans = [(r["port"], len(bytes.fromhex(r["hex"])), r["last"] - r["first"]) for r in rows if "first" in r]
    assert len(spans) >= 5  # every device's HELLO at least
    for port, size, took in spans:
        need = size * BYTE_S_9600_8N1
        assert 0.9 * need <= took <= 1.1 * need, (port, size, took, need)


def test_a_bad_line_is_one_line_and_exit_2() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "devices", "--line", "9600:9Q1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--line: expected BAUD or BAUD:8N1" in proc.stderr and "bytesize: must be one of 5, 6, 7, 8" in proc.stderr
