"""``xocdia-hil bench check B``, and ``certify`` running it first: on a bench whose server is down or whose lines do
not open, one line per problem and exit 2 within seconds, before any scenario; a ready bench says so and lists its
adapter's capabilities. Real processes, real sockets on the loopback."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

LINES = ("bowl", "shaker", "reader", "lamp", "console")


def _cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@contextlib.contextmanager
def _silent_server() -> Iterator[int]:
    """A loopback port that accepts connections and never answers (a hung server)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield s.getsockname()[1]


def _bench(tmp_path: Path, server_port: int, line_port: int) -> Path:
    raw = {
        "name": "lab-down",
        "server": {"kind": "url", "url": f"http://127.0.0.1:{server_port}"},
        "devices": {"transport": "url", "urls": {name: f"socket://127.0.0.1:{line_port}" for name in LINES}},
    }
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_a_bench_whose_server_is_down_is_one_line_per_problem_and_exit_2(tmp_path: Path) -> None:
    port = _closed_port()
    bench = _bench(tmp_path, port, port)
    started = time.monotonic()
    done = _cli("bench", "check", str(bench), cwd=tmp_path)
    took = time.monotonic() - started
    assert done.returncode == 2, done.stdout + done.stderr
    problems = done.stderr.splitlines()
    assert problems[0] == f"bench lab-down: server http://127.0.0.1:{port}: not reachable (Connection refused)"
    assert [p.split(":")[1].strip() for p in problems[1:]] == [f"line {n} (socket" for n in LINES], problems
    assert "Traceback" not in done.stderr and took < 10, took


def test_a_server_that_never_answers_is_reported_within_the_timeout(tmp_path: Path) -> None:
    with _silent_server() as port:
        bench = _bench(tmp_path, port, _closed_port())
        started = time.monotonic()
        done = _cli("bench", "check", str(bench), "--timeout", "1", "--json", cwd=tmp_path)
        took = time.monotonic() - started
    report = json.loads(done.stdout)
    assert done.returncode == 2 and not report["ready"]
    assert any(p.startswith(f"bench lab-down: server http://127.0.0.1:{port}: ") for p in report["problems"])
    assert len(report["problems"]) == 1 + len(LINES) and took < 10, (took, report)


def test_a_ready_bench_lists_its_adapter_capabilities(tmp_path: Path) -> None:
    done = _cli("bench", "check", "in-process", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "adapter capabilities: CrashPoints, EventWatching, NoiseReporting, Restartable" in done.stdout
    assert done.stdout.rstrip().endswith("bench in-process: ready")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "check", "no-such-bench"], "cannot read bench no-such-bench: No such file or directory; shipped"),
        (["bench", "check", "in-process", "--timeout", "0"], "--timeout 0: must be a number of seconds > 0"),
        (["bench"], "the following arguments are required: ACTION"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_certify_checks_the_bench_first_and_runs_nothing_on_one_that_is_down(tmp_path: Path) -> None:
    port = _closed_port()
    bench = _bench(tmp_path, port, port)
    started = time.monotonic()
    done = _cli("certify", "--bench", str(bench), "--tags", "clause:GP-3", "--report", "r", cwd=tmp_path)
    took = time.monotonic() - started
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert (
        lines[0]
        == f"xocdia-hil certify: bench lab-down: server http://127.0.0.1:{port}: not reachable (Connection refused)"
    )
    assert len(lines) == 2 + len(LINES) and lines[-1].endswith("is not ready (xocdia-hil bench check); nothing was run")
    assert done.stdout == "" and not (tmp_path / "r").exists() and took < 15, took
