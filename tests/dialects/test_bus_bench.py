"""xocdia-bus on whole benches: the in-process bench (virtual time, one in-memory bus line, the reference engine's own
BusLine polling it), the same with the devices split over two buses, a bus unplugged mid-round, and the local HIL bench
(a pty bus that xocdia-server polls)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.records import RoundEventKind

BENCHES = Path(__file__).resolve().parents[2] / "fixtures" / "benches"


def _bench(tmp_path: Path, name: str, transport: str, options: str = "") -> Path:
    text = (BENCHES / f"{name}.yaml").read_text(encoding="utf-8")
    line = f"  transport: {transport}\n"
    assert line in text
    extra = "  dialect: xocdia-bus\n" + (f"  options: {options}\n" if options else "")
    path = tmp_path / f"{name}-bus.yaml"
    path.write_text(text.replace(line, line + extra), encoding="utf-8")
    return path


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def _passed(done: subprocess.CompletedProcess[str], rounds: int) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert f"rounds: {rounds} (settled: {rounds})" in lines
    assert lines[-1].startswith(f"oracle: PASS: {rounds} rounds, ")


def test_in_process_run_30_rounds(tmp_path: Path) -> None:
    _passed(_cli("run", "--bench", str(_bench(tmp_path, "in-process", "memory")), "--rounds", "30"), 30)


def test_in_process_two_buses(tmp_path: Path) -> None:
    options = "{lines: {table: [BOWL, SHAKER, CONSOLE], cam: [READER, LAMP]}}"
    bench = load_bench(_bench(tmp_path, "in-process", "memory", options))
    assert [line.name for line in bench.lines] == ["table", "cam"]
    _passed(_cli("run", "--bench", str(_bench(tmp_path, "in-process", "memory", options)), "--rounds", "10"), 10)


def test_bus_unplugged_mid_round_in_process(tmp_path: Path) -> None:
    """The whole bus is out while the bowl comes off and the camera reads: nobody polls, so the reports wait in the
    devices (which cannot tell a pulled cable from a master that stopped polling: no HELLO is due), and go out at the
    first polls after the replug; the round settles on them once."""
    bench = load_bench(_bench(tmp_path, "in-process", "memory"))
    with Rig.build(bench, {"alice": 10_000}) as rig:
        rig.adapter.connect("alice")
        rid = rig.open_round()
        rig.bet("alice", "even", 1000)
        rig.run_for(0.9)
        rig.unplug("bus")
        unplugged = rig.now
        rig.run_for(0.7)  # betting closes at 1.0 s, the bowl comes off and the camera reads while unplugged
        assert rig.server_end(rid) is None
        rig.lines["bus"].replug()  # type: ignore[attr-defined]
        replugged = rig.now
        end = rig.play_to_end(rid)
        assert end.kind == RoundEventKind.SETTLED
        assert rig.verdict().passed
        reads = [r.t for r in rig.recorder.records if r.port == "BUS" and r.dir == "tx" and b"\x03\xc0" in r.data]
        assert reads and all(t >= replugged for t in reads) and replugged > unplugged
        settled = [e for e in rig.adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.SETTLED]
        assert len(settled) == 1


@pytest.mark.slow
def test_local_hil_run(tmp_path: Path) -> None:
    done = _cli("run", "--bench", str(_bench(tmp_path, "local-hil", "pty")), "--rounds", "5", "--players", "2")
    _passed(done, 5)
