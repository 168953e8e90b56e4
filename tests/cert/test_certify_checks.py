"""certify counts only checks that ran: a feature file that would pass without checking is refused before
anything runs, an earlier run's matrix never stands in for this one, and a bench whose server no scenario
reached covers no clause."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
TYPO = """@clause:GP-3
Feature: a lab's feature with a mistyped keyword
  Scenario: a round settles
    Gvien player alice has a balance of 10,000
    When round 1 opens
    Then the oracle finds no difference
"""


def _certify(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", "certify", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def test_a_mistyped_keyword_is_refused_with_its_file_and_line_and_no_old_summary_is_left(tmp_path: Path) -> None:
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "lab.feature").write_text(TYPO, encoding="utf-8")
    report = tmp_path / "report"
    report.mkdir()
    (report / "clause-matrix.json").write_text('{"passed": 166}', encoding="utf-8")  # a previous run's
    done = _certify("--bench", "in-process", "--features", "features", "--report", "report", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "features/lab.feature:4: unknown keyword 'Gvien'" in done.stderr
    assert "did you mean 'Given'?" in done.stderr and "nothing was run" in done.stderr
    assert not (report / "clause-matrix.json").exists()
    assert "clause coverage" not in done.stdout


def test_a_bench_whose_server_was_never_reached_covers_no_clause(tmp_path: Path) -> None:
    bench = yaml.safe_load((REPO / "tests" / "faults" / "url-staging.yaml").read_text(encoding="utf-8"))
    nowhere = "socket://127.0.0.1:1"  # nothing listens on port 1: every line and the server are unreachable
    bench["devices"]["urls"] = {name: nowhere for name in bench["devices"]["urls"]}
    bench["timing"]["step_timeout_s"] = 2.0
    (tmp_path / "bench.yaml").write_text(yaml.safe_dump(bench), encoding="utf-8")
    folder = tmp_path / "features"
    folder.mkdir()
    for name in ("documents.feature", "rounds.feature"):  # documents need no server; rounds do
        (folder / name).write_text((REPO / "features" / name).read_text(encoding="utf-8"), encoding="utf-8")
    checked = _certify("--bench", "bench.yaml", "--features", "features", "--report", "r", cwd=tmp_path)
    assert checked.returncode == 2 and checked.stdout == ""  # the bench check comes first: nothing runs
    assert checked.stderr.splitlines()[-1].endswith("is not ready (xocdia-hil bench check); nothing was run")
    unchecked = ("--bench", "bench.yaml", "--features", "features", "--report", "r", "--no-bench-check")
    done = _certify(*unchecked, "--json", cwd=tmp_path)
    assert done.returncode != 0
    summary = json.loads(done.stdout)
    assert summary["clauses"]["covered"] == 0 and len(summary["clauses"]["unexercised"]) == 52
    text = _certify(*unchecked, cwd=tmp_path).stdout
    assert "the bench's server was never reached: every clause is unexercised" in text
    assert "clause coverage: 0/52 clauses of RULES.md and ACCESS.md checked" in text
