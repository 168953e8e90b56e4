"""A bench attached by URL to a server it did not start (an engineer's staging server): a real ``xocdia-server``
process started here, the five device lines on cross-wired pty cables, the reference HTTP adapter with
``server: {kind: url}``. Player faults run and every round settles with the checkers passing; a server kill
is refused with its reason, before any round is opened, through ``run_schedule`` and through the CLI."""

from __future__ import annotations

import contextlib
import os
import select
import threading
import tty
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.cli import main
from harness.faults.injector import run_schedule
from harness.faults.prepare import InjectionRefused
from harness.files import load_profile
from harness.wire.messages import DEVICES
from tests.faults.faults_helpers import Make, bet_ops, fault
from tests.support.gs_process import ServerProcess

TEMPLATE = Path(__file__).with_name("url-staging.yaml")
BALANCE = 100_000  # every player's opening balance, on the server and in the schedules
KILL = "server_kill(server) at round 1 shaking for 0.3s"  # Fault.describe of the planned kill
REFUSAL = "the bench's adapter is attached to a server it did not start (e.g. by URL) and cannot kill and restart it"


def _raw_pty() -> tuple[int, int, str]:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    os.set_blocking(master, False)
    return master, slave, os.ttyname(slave)


class Cables:
    """One cross-wired serial cable per device line: two pty pairs whose masters a thread joins, so that the
    server opens one slave path and the bench the other, as with two USB adapters joined by a null-modem cable.
    Bytes sent while the other end is not read are lost, as on a real line. :meth:`close` always."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.server_paths: dict[str, str] = {}
        self.bench_paths: dict[str, str] = {}
        self._peer: dict[int, int] = {}
        self._fds: list[int] = []
        for name in names:
            a_master, a_slave, a_path = _raw_pty()
            b_master, b_slave, b_path = _raw_pty()
            self.server_paths[name], self.bench_paths[name] = a_path, b_path
            self._peer |= {a_master: b_master, b_master: a_master}
            self._fds += [a_master, a_slave, b_master, b_slave]  # slaves stay open: no EIO when a user reopens
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._relay, daemon=True)
        self._thread.start()

    def _relay(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select(list(self._peer), [], [], 0.05)
            for fd in ready:
                with contextlib.suppress(OSError):
                    data = os.read(fd, 4096)
                    while data:
                        data = data[os.write(self._peer[fd], data) :]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)


@dataclass
class Staging:
    """The running server and the bench file that reaches it by URL."""

    server: ServerProcess
    bench_file: Path
    boss: str

    def rounds_opened(self) -> list[dict[str, Any]]:
        """The server's ``round_opened`` events, read straight from its log."""
        status, data = self.server.call("GET", "/v1/events?after=0&limit=1000", self.boss)
        assert status == 200, data
        return [e for e in data["events"] if e["kind"] == "round_opened"]


@pytest.fixture
def staging(tmp_path: Path) -> Iterator[Staging]:
    """A real server started with ``--db`` in tmp_path and ``--port 0``, whose players, supervisor and timings
    are those of the bench file (``url-staging.yaml`` with the URL and the cables filled in)."""
    raw = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    options, timing = raw["server"]["options"], raw["timing"]
    table = load_profile(raw["profile"]).table
    config = {
        "engine": {
            "betting_s": timing["betting_s"],
            "round_gap_s": timing["round_gap_s"],
            "auto_open": False,  # the bench's supervisor opens the rounds
            "reshake_cap": table.max_reshakes,
            "pause_timeout_s": table.pause_timeout,
            "result_timeout_s": timing["result_timeout_s"],
        },
        "players": [{"id": p, "token": t, "balance": BALANCE} for p, t in options["players"].items()],
        "supervisors": [{"id": "staging-boss", "token": options["supervisor_token"]}],
        "heartbeat_timeout_s": timing["heartbeat_s"],
    }
    (tmp_path / "server.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    cables = Cables(tuple(d.value.lower() for d in DEVICES))
    args = ["--config", str(tmp_path / "server.yaml")]
    for name, path in cables.server_paths.items():
        args += ["--device", f"{name}={path}"]
    server = ServerProcess(tmp_path / "staging.db", args)
    try:
        server.start()
        raw["server"]["url"] = f"http://{server.host}:{server.port}"
        raw["devices"]["urls"] = dict(cables.bench_paths)
        bench_file = tmp_path / "url-staging.yaml"
        bench_file.write_text(yaml.safe_dump(raw), encoding="utf-8")
        yield Staging(server, bench_file, options["supervisor_token"])
    finally:
        server.stop()
        cables.close()


def test_an_attached_adapter_takes_the_server_as_up_and_cannot_kill_it(staging: Staging) -> None:
    bench = load_bench(staging.bench_file)
    assert InProcessAdapter({}).can_restart and HttpAdapter({"url": ""}).can_restart  # they own their server
    with Rig.build(bench, {"p1": BALANCE, "p2": BALANCE}) as rig:
        adapter = rig.adapter
        assert isinstance(adapter, HttpAdapter)
        assert adapter.server_up and not adapter.can_restart
        assert adapter.address == (staging.server.host, staging.server.port)
        adapter.kill_server()  # no-op: the adapter owns no process
        adapter.restart_server()
        assert adapter.server_up and staging.server.proc is not None and staging.server.proc.poll() is None
        assert adapter.balance("p1") == BALANCE  # the same server still answers
    assert not adapter.server_up  # stopped: no longer taken as up


def test_player_faults_run_and_every_round_settles(staging: Staging, make_schedule: Make) -> None:
    schedule = make_schedule(
        fault("player_disconnect", target="p2", at={"round": 2, "phase": "betting_open"}, duration=0.8),
        rounds=3,
        bets_per_round=1,
        balance=BALANCE,
        targets={"devices": [], "server": False},
    )
    result = run_schedule(load_bench(staging.bench_file), schedule)
    assert not result.aborted and result.rounds_played == 3, result.aborted
    assert result.passed, result.report.lines()
    assert result.final is not None
    ends = [(e.round_id, e.kind) for e in result.final.events if e.ends_round]
    assert ends == [("1", "settled"), ("2", "settled"), ("3", "settled")]
    assert [op.f for op in result.history if op.f in ("fault", "heal")] == ["fault", "heal"]
    p2_cut = [op.detail for op in bet_ops(result.history, "p2") if op.type == "fail"]
    assert p2_cut == ["disconnected: not sent"]  # its one bet of round 2, while the link was down
    placed = {p: len(rows) for p, rows in result.final.records.items()}
    assert placed == {"p1": 3, "p2": 2}  # one bet a round each, less p2's unsent one
    assert all(r.round_status == "settled" and r.result != "pending" for rows in result.final.records.values()
               for r in rows)  # fmt: skip


def test_a_server_kill_is_refused_before_any_round(staging: Staging, make_schedule: Make) -> None:
    schedule = make_schedule(fault("server_kill", at={"round": 1, "phase": "shaking"}, duration=0.3), rounds=2)
    with pytest.raises(InjectionRefused) as refused:
        run_schedule(load_bench(staging.bench_file), schedule)
    message = str(refused.value)
    assert message.startswith(f"{KILL}: {REFUSAL}") and message.endswith("(bench 'url-staging')")
    assert staging.rounds_opened() == []  # refused before anything was done to the server


def test_the_cli_reports_the_refusal_in_one_line(
    staging: Staging, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kill = tmp_path / "kill.yaml"
    kill.write_text("rounds: 2\nfaults:\n  - {kind: server_kill, at: {round: 1, phase: shaking}, duration: 0.3}\n")
    code = main(["inject", "--bench", str(staging.bench_file), "--schedule", str(kill),
                 "--manifest", str(tmp_path / "m.json")])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert err.startswith(f"xocdia-hil: error: refused: {KILL}: {REFUSAL}")
    assert not (tmp_path / "m.json").exists() and staging.rounds_opened() == []


def test_a_campaign_reports_refused_seeds_in_one_line_and_writes_no_manifest(
    staging: Staging, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kill = tmp_path / "kill.yaml"
    kill.write_text("rounds: 2\nfaults:\n  - {kind: server_kill, at: {round: 1, phase: shaking}, duration: 0.3}\n")
    out = tmp_path / "failures"
    out.mkdir()
    code = main(["campaign", "--bench", str(staging.bench_file), "--schedule", str(kill), "--seeds", "1-2",
                 "--workers", "1", "--out", str(out)])  # fmt: skip
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2 and err.count("\n") == 0
    assert err.startswith(f"xocdia-hil: error: refused: 2 seeds did not run (seeds 1, 2): {KILL}: {REFUSAL}")
    assert "campaign: 2 seeds, 0 passed, 0 failed, 0 aborted (liveness), 2 refused" in captured.out
    assert list(out.iterdir()) == [] and staging.rounds_opened() == []


def test_serial_faults_run_on_the_device_end_of_an_attached_benchs_lines(staging: Staging, make_schedule: Make) -> None:
    schedule = make_schedule(
        fault("serial_drop", target="shaker", at={"round": 1, "phase": "betting_open"}, duration=1.5, rate=0.5),
        rounds=2,
        bets_per_round=1,
        balance=BALANCE,
        targets={"devices": ["shaker"], "server": False},
    )
    result = run_schedule(load_bench(staging.bench_file), schedule)
    assert not result.aborted and result.rounds_played == 2, result.aborted
    assert result.passed, result.report.lines()
    assert result.serial_counts["shaker"].get("drop", 0) > 0, result.serial_counts  # frames really were lost
    assert result.final is not None
    assert len([e for e in result.final.events if e.ends_round]) == 2  # and every round still ended
