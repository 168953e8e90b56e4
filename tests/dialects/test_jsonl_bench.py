"""xocdia-jsonl on whole benches: the in-process bench (virtual time, in-memory lines, the reference engine reading the
reader's line with its own JsonlLine) and the local HIL bench (a real TCP socket for the reader that xocdia-server opens
as ``socket://``, ptys for the companion's lines)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.records import RoundEventKind

BENCHES = Path(__file__).resolve().parents[2] / "fixtures" / "benches"


def _bench(tmp_path: Path, name: str, transport: str) -> Path:
    text = (BENCHES / f"{name}.yaml").read_text(encoding="utf-8")
    line = f"  transport: {transport}\n"
    assert line in text
    path = tmp_path / f"{name}-jsonl.yaml"
    path.write_text(text.replace(line, line + "  dialect: xocdia-jsonl\n"), encoding="utf-8")
    return path


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_in_process_run_30_rounds(tmp_path: Path) -> None:
    done = _cli("run", "--bench", str(_bench(tmp_path, "in-process", "memory")), "--rounds", "30")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert "rounds: 30 (settled: 30)" in lines
    assert lines[-1].startswith("oracle: PASS: 30 rounds, ")


def test_reader_reconnects_mid_round_in_process(tmp_path: Path) -> None:
    """The reader's connection is down when the bowl comes off: the read waits in the reader, goes out after the new
    hello, and the round settles on it once."""
    bench = load_bench(_bench(tmp_path, "in-process", "memory"))
    with Rig.build(bench, {"alice": 10_000}) as rig:
        rig.adapter.connect("alice")
        rid = rig.open_round()
        rig.bet("alice", "even", 1000)
        rig.unplug("reader")
        rig.run_for(1.6)  # betting closes at 1.0 s, the bowl comes off and the camera reads while unplugged
        assert rig.server_end(rid) is None
        reader = rig.lines["reader"]
        reader.replug()  # type: ignore[attr-defined]
        end = rig.play_to_end(rid)
        assert end.kind == RoundEventKind.SETTLED
        assert rig.verdict().passed
        sent = [r.data for r in rig.recorder.records if r.port == "READER" and r.dir == "tx"]
        results = [chunk for chunk in sent if b'"type":"result"' in chunk]
        assert len(results) == 1 and b'"type":"hello","seq":' in b"".join(sent).split(results[0])[0]
        settled = [e for e in rig.adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.SETTLED]
        assert len(settled) == 1


@pytest.mark.slow
def test_local_hil_run(tmp_path: Path) -> None:
    done = _cli("run", "--bench", str(_bench(tmp_path, "local-hil", "pty")), "--rounds", "5", "--players", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert "rounds: 5 (settled: 5)" in lines
    assert lines[-1].startswith("oracle: PASS: 5 rounds, ")
