"""The serial trace is bounded (a size cap with rotation, real files), its config is checked naming the field, and a
device line whose thread dies is failed by the gateway with its cause logged."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest

from gameserver.config import ConfigError, parse_config
from gameserver.events import ReportKind, TableReport
from gameserver.gateway import DeviceGateway, open_serial
from gameserver.protocol import encode
from gameserver.trace_file import RotatingTrace


def test_the_trace_rotates_at_its_cap_and_keeps_at_most_keep_old_files(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = '{"t": 1.0, "device": "bowl", "dir": "rx", "bytes": "' + "x" * 60 + '"}\n'
    with RotatingTrace(path, max_bytes=1000, keep=2) as trace:
        for _ in range(200):
            trace.write(line)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["t.jsonl", "t.jsonl.1", "t.jsonl.2"]
    for name in files:
        size = (tmp_path / name).stat().st_size
        assert 0 < size <= 1000 and size % len(line) == 0  # whole records only
    assert sum((tmp_path / n).stat().st_size for n in files) <= 3 * 1000


def test_keep_0_starts_the_trace_afresh(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("old\n" * 300)  # an earlier run's trace, past the cap
    with RotatingTrace(path, max_bytes=1000, keep=0) as trace:
        trace.write("new\n")
    assert path.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        ({"max_bytes": 10}, "c.trace.max_bytes: must be a whole number 4096..2**40; got 10"),
        ({"keep": -1}, "c.trace.keep: must be a whole number 0..100; got -1"),
        ({"files": 3}, "c.trace.files: unknown key; allowed: max_bytes, keep"),
    ],
)
def test_the_trace_config_names_the_field(trace: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"trace": trace}, "c")
    assert str(err.value) == message


def test_defaults_bound_the_trace() -> None:
    config = parse_config({}, "c")
    assert config.trace_max_bytes == 16 * 1024 * 1024 and config.trace_keep == 4


def test_a_line_thread_that_dies_fails_the_line_with_its_cause_logged(caplog: pytest.LogCaptureFixture) -> None:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    failed: list[tuple[str, str]] = []

    def submit(report: TableReport) -> None:
        if report.kind is ReportKind.BOWL_ON:
            raise RuntimeError("engine exploded")

    gateway = DeviceGateway(
        {"bowl": open_serial("bowl", os.ttyname(slave))}, submit, accept_untagged=True,
        failed=lambda part, why: failed.append((part, why)),
    )  # fmt: skip
    caplog.set_level(logging.ERROR, logger="gameserver.gateway")
    gateway.start()
    try:
        os.write(master, encode(1, "BOWL", "HELLO", (("id", "B-1"), ("proto", "1"), ("fw", "t"))))
        os.write(master, encode(2, "BOWL", "ON"))
        deadline = time.monotonic() + 10
        while not failed and time.monotonic() < deadline:
            time.sleep(0.02)
        assert failed == [("device bowl", "thread died: RuntimeError('engine exploded')")]
        assert gateway.failures() == {"device bowl": "thread died: RuntimeError('engine exploded')"}
        died = [r for r in caplog.records if r.getMessage() == "device bowl: thread died"]
        assert died and died[0].exc_info is not None and "engine exploded" in str(died[0].exc_info[1])
    finally:
        gateway.stop()
        os.close(master)
        os.close(slave)


def test_a_write_the_disk_takes_only_part_of_raises_and_counts_what_reached_the_file(tmp_path: Path) -> None:
    """A file-size limit (a disk filling up) lets an unbuffered write take only the bytes that fit: the trace
    writes the rest, which raises, so the gateway learns of the failure at the first record that did not fit."""
    script = (
        "import os, resource, sys\n"
        "from gameserver.trace_file import RotatingTrace\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1050, 1050))\n"
        "trace = RotatingTrace(sys.argv[1], max_bytes=10**6)\n"
        "for i in range(40):\n"
        "    try:\n"
        "        trace.write('x' * 54 + '\\n')\n"
        "    except OSError:\n"
        "        print(i, trace._size, os.path.getsize(sys.argv[1])); break\n"
    )
    path = tmp_path / "serial.trace"
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    record, counted, on_disk = map(int, done.stdout.split())
    assert record == 1050 // 55  # the first record that did not fit whole
    assert counted == on_disk == 1050
