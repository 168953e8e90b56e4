"""``xocdia-hil devices`` as a user runs it: a subprocess that prints pty paths a pyserial reader opens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import serial

from harness.wire.frame_errors import BadFrame
from harness.wire.text import FrameDecoder
from harness.wire.trace import read_trace

CLI = [sys.executable, "-m", "harness.cli", "devices"]


def test_devices_prints_paths_that_a_serial_reader_opens(tmp_path: Path) -> None:
    trace = tmp_path / "run"
    cmd = [*CLI, "--lamp", "fixed", "--no-ack", "--duration", "2", "--seed", "4", "--trace", str(trace)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(6)]
        paths = dict(line.split()[:2] for line in lines[:5])
        assert sorted(paths) == ["BOWL", "CONSOLE", "LAMP", "READER", "SHAKER"]
        assert "serial.tools.miniterm" in lines[5]
        with serial.Serial(paths["READER"], 115200, timeout=0.1) as port:
            decoder, types = FrameDecoder(), []
            for _ in range(30):  # 3 s at most
                types += [f.message.TYPE for f in decoder.feed(port.read(512)) if not isinstance(f, BadFrame)]
                if "RESULT" in types:
                    break
        assert "RESULT" in types  # the table runs rounds on its own and the camera reports them
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=5)
    assert proc.returncode == 0, err
    assert "rounds ended at the table" in out
    records = read_trace((trace.with_suffix(".jsonl")).read_text().splitlines())
    assert {r.port for r in records} == {"BOWL", "SHAKER", "READER", "LAMP", "CONSOLE"}
    assert "READER   tx  $1 1 READER HELLO" in trace.with_suffix(".txt").read_text()


@pytest.mark.parametrize(("revision", "has_at"), [("1.1", False), ("1.2", True)])
def test_revision_chooses_whether_reports_carry_the_event_time(revision: str, has_at: bool) -> None:
    # With the fixed lamp no server names the rounds, so no revision tags them; 1.2 still dates every report.
    cmd = [*CLI, "--lamp", "fixed", "--no-ack", "--duration", "3", "--seed", "4", "--revision", revision]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        paths = dict(proc.stdout.readline().split()[:2] for _ in range(5))
        raw = b""
        with serial.Serial(paths["READER"], 115200, timeout=0.1) as port:
            for _ in range(40):  # 4 s at most
                raw += port.read(512)
                if b" RESULT " in raw:
                    break
        result = next(line for line in raw.split(b"\n") if b" RESULT " in line)
        assert (b" at=" in result) == has_at, result
        assert b" round=" not in result
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)


def test_an_unknown_revision_is_refused_naming_the_choices() -> None:
    proc = subprocess.run([*CLI, "--revision", "2.0"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "--revision" in proc.stderr and "'1.0', '1.1', '1.2'" in proc.stderr


def test_bad_transport_is_one_line_and_exit_2() -> None:
    proc = subprocess.run([*CLI, "--transport", "usb"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "expected pty (default), rfc2217:PORT or socket:PORT" in proc.stderr and "'usb'" in proc.stderr


def test_unknown_profile_is_named() -> None:
    proc = subprocess.run([*CLI, "--profile", "nosuch", "--duration", "1"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "unknown profile 'nosuch'" in proc.stderr


def test_trace_into_a_missing_folder_is_refused_before_the_run(tmp_path: Path) -> None:
    trace = tmp_path / "missing" / "run"
    proc = subprocess.run([*CLI, "--trace", str(trace), "--duration", "1"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr == f"xocdia-hil: error: --trace {trace}: folder {trace.parent} does not exist\n"
    assert proc.stdout == ""  # refused before any port was opened


def _free_base_port() -> int:
    """A base port with five free ports after it (checked by binding them)."""
    import socket

    for base in range(23000, 60000, 97):
        socks = []
        try:
            for i in range(5):
                s = socket.socket()
                s.bind(("127.0.0.1", base + i))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no five consecutive free ports")


def test_rfc2217_transport_serves_each_device_to_a_pyserial_rfc2217_client() -> None:
    base = _free_base_port()
    cmd = [*CLI, "--transport", f"rfc2217:{base}", "--lamp", "fixed", "--no-ack", "--duration", "2.5"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(6)]
        urls = dict(line.split()[:2] for line in lines[:5])
        assert urls["BOWL"] == f"rfc2217://127.0.0.1:{base}"
        assert urls["CONSOLE"] == f"rfc2217://127.0.0.1:{base + 4}"
        with serial.serial_for_url(urls["BOWL"], timeout=0.1) as port:
            decoder, types = FrameDecoder(), []
            for _ in range(20):
                types += [f.message.TYPE for f in decoder.feed(port.read(512)) if not isinstance(f, BadFrame)]
                if "ON" in types:
                    break
        # the bowl's reports reach the client (its HELLO, sent at connect, may be flushed by the client's
        # open(): with --no-ack nothing retransmits it)
        assert "ON" in types
        _out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=5)
    assert proc.returncode == 0, err
