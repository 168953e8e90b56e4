"""``xocdia-hil bench check B``, and ``certify`` running it first: on a bench whose server is down or whose lines do
not open, one line per problem and exit 2 within seconds, before any scenario; a ready bench says so and lists its
adapter's capabilities. Real processes, real sockets on the loopback."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import subprocess
import sys
import threading
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


@contextlib.contextmanager
def _answering_server() -> Iterator[int]:
    """A loopback HTTP server that answers every GET with 200 (a server that is up), on its own thread."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


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
    listed = "CrashPoints, EventWatching, ForgetsRoundEvents, Identifying, NoiseReporting, Principals, Restartable"
    assert f"adapter capabilities: {listed}, RoundRecords, place_bet_for_round, correct\n" in done.stdout
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


def _pool_bench(tmp_path: Path, accounts: dict[str, int] | None, port: int) -> Path:
    """A bench attached by URL to a server on ``port``, pty lines, and ``accounts`` as its pool (None: none)."""
    raw: dict[str, object] = {
        "name": "lab-pool",
        "server": {"kind": "url", "url": f"http://127.0.0.1:{port}"},
        "devices": {"transport": "pty"},
    }
    if accounts is not None:
        raw["accounts"] = accounts
    path = tmp_path / "pool.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def _features(tmp_path: Path) -> Path:
    """A lab's feature folder: a Background player, a scenario that adds one, one for another bench, one untagged."""
    folder = tmp_path / "features"
    folder.mkdir()
    (folder / "lab.feature").write_text(
        """@clause:GP-1
Feature: Lab
  Background:
    Given player alice has a balance of 10,000

  @clause:GP-3
  Scenario: Two players bet
    Given player bob has a balance of 5,000
    Then the round settles

  @bench:in-process
  Scenario: Only on the in-process bench
    Given player carol has a balance of 7
    Then the round settles

  Scenario: Alice alone, richer
    Given player alice has a balance of 1,000,000
    Then the round settles
""",
        encoding="utf-8",
    )
    return folder


def test_a_balance_the_account_pool_cannot_give_is_one_line_naming_the_scenario_and_player(tmp_path: Path) -> None:
    with _answering_server() as port:
        bench = _pool_bench(tmp_path, {"alice": 10_000, "dave": 5_000}, port)
        features = _features(tmp_path)
        done = _cli("bench", "check", str(bench), "--features", str(features), "--timeout", "1", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        'bench lab-pool: features/lab.feature:7 "Two players bet": player bob needs a balance of 5,000; '
        "the account pool has no bob",
        'bench lab-pool: features/lab.feature:16 "Alice alone, richer": player alice needs a balance of 1,000,000; '
        "the pool's alice opens with 10,000",
    ], done.stderr
    assert "account pool: 2 accounts for 3 opening balances of the selected scenarios" in done.stdout


def test_the_tags_select_the_scenarios_whose_balances_are_checked(tmp_path: Path) -> None:
    with _answering_server() as port:
        bench = _pool_bench(tmp_path, {"alice": 10_000, "bob": 5_000}, port)
        args = ("bench", "check", str(bench), "--features", str(_features(tmp_path)), "--json", "--timeout", "1")
        everything = json.loads(_cli(*args, cwd=tmp_path).stdout)
        gp3 = json.loads(_cli(*args, "--tags", "clause:GP-3", cwd=tmp_path).stdout)
    assert everything["problems"] == [
        'bench lab-pool: features/lab.feature:16 "Alice alone, richer": player alice needs a balance of 1,000,000; '
        "the pool's alice opens with 10,000"
    ]
    assert gp3["ready"] and gp3["accounts"] == {
        "checked": True,
        "what": "account pool: 2 accounts for 2 opening balances of the selected scenarios",
    }


def test_the_shipped_suite_needs_balances_a_two_account_pool_lacks(tmp_path: Path) -> None:
    with _answering_server() as port:
        bench = _pool_bench(tmp_path, {"alice": 10_000, "bob": 10_000}, port)
        done = _cli("bench", "check", str(bench), "--json", "--timeout", "1", cwd=tmp_path)
    lacking = [p for p in json.loads(done.stdout)["problems"] if "needs a balance" in p]
    assert done.returncode == 2
    assert any('"Four red pays 14 to 1 on four reds": player alice needs a balance of 100,000' in p for p in lacking)
    assert any("player carol needs a balance of 10,000; the account pool has no carol" in p for p in lacking)


@pytest.mark.parametrize(
    ("bench", "what"),
    [
        ("in-process", "wallets: the bench creates each scenario's players itself (server.kind in-process)"),
        ("url-no-pool", "wallets: no account pool declared (accounts:): the adapter creates each scenario's players"),
    ],
)
def test_a_bench_that_creates_its_wallets_has_no_pool_to_check(tmp_path: Path, bench: str, what: str) -> None:
    with _answering_server() as port:
        name = str(_pool_bench(tmp_path, None, port)) if bench == "url-no-pool" else bench
        report = json.loads(_cli("bench", "check", name, "--json", "--timeout", "1", cwd=tmp_path).stdout)
    assert report["ready"] and report["accounts"] == {"checked": False, "what": what}, report


def test_an_account_pool_on_a_bench_that_starts_its_server_is_refused(tmp_path: Path) -> None:
    raw = {"server": {"kind": "command"}, "devices": {"transport": "pty"}, "accounts": {"alice": 1}}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    done = _cli("bench", "check", "b.yaml", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "b.yaml: accounts: only for server.kind url" in done.stderr


def test_certify_reports_the_balances_its_selection_lacks_and_runs_nothing(tmp_path: Path) -> None:
    with _answering_server() as port:
        bench = _pool_bench(tmp_path, {"alice": 10_000}, port)
        features = str(_features(tmp_path))
        done = _cli("certify", "--bench", str(bench), "--features", features, "--report", "r", cwd=tmp_path)
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and done.stdout == "" and not (tmp_path / "r").exists(), done.stderr
    assert (
        'xocdia-hil certify: bench lab-pool: features/lab.feature:7 "Two players bet": player bob needs a balance '
        "of 5,000; the account pool has no bob"
    ) in lines
    assert lines[-1].endswith("is not ready (xocdia-hil bench check); nothing was run")


def test_a_feature_file_that_is_not_text_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "features"
    folder.mkdir()
    (folder / "bad.feature").write_bytes(b"Feature: \xff\xfe\n")
    done = _cli("bench", "check", "in-process", "--features", str(folder), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "features/bad.feature: cannot read it as UTF-8 text" in done.stderr
