"""Shrinking turns a planted failure into a schedule of a few faults, written as YAML, that replays it."""

from __future__ import annotations

from pathlib import Path

from harness.bench.config import Bench
from harness.faults.injector import run_schedule
from harness.faults.schedule import load_schedule
from harness.faults.shrink import explore
from tests.faults.faults_helpers import Make

KINDS = ("server_kill", "player_disconnect", "serial_duplicate", "table_touch", "player_reset")


def test_planted_restart_amnesia_shrinks_to_one_kill(bench: Bench, make_schedule: Make, tmp_path: Path) -> None:
    base = make_schedule(rounds=2)
    out = tmp_path / "minimal.yaml"
    found = explore(bench, base, KINDS, out, adapter="tests.faults.faults_doubles:AmnesiacAdapter", max_examples=20)
    assert found.minimal is not None, f"no failure in {found.runs} runs"
    assert len(found.minimal.faults) <= 2
    assert "server_kill" in {f.kind for f in found.minimal.faults}
    written = load_schedule(out)
    assert written.faults == found.minimal.faults
    replay = run_schedule(bench, written, adapter="tests.faults.faults_doubles:AmnesiacAdapter")
    assert not replay.report.passed
    assert {v.checker for v in replay.report.violations} >= {"lost"}
    assert run_schedule(bench, written).passed  # the reference server survives the same schedule


def test_no_failure_means_no_schedule(bench: Bench, make_schedule: Make, tmp_path: Path) -> None:
    found = explore(bench, make_schedule(rounds=2), ("server_kill",), tmp_path / "none.yaml", max_examples=5)
    assert found.minimal is None and found.runs > 0
    assert not (tmp_path / "none.yaml").exists()
