"""``xocdia-hil certify`` and ``run``: bad input gets one clear line and exit 2; a failing or partial suite is
reported; the full in-process suite passes with every clause of RULES.md covered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.cert.report.clauses import rule_clauses


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def test_certify_in_process_covers_every_clause(tmp_path: Path) -> None:
    done = _cli("certify", "--report", str(tmp_path), "--workers", "0")
    assert done.returncode == 0, done.stdout[-4000:]
    matrix = json.loads((tmp_path / "clause-matrix.json").read_text(encoding="utf-8"))
    assert matrix["uncovered"] == [] and matrix["failed"] == 0
    assert set(rule_clauses()) <= set(matrix["clauses"])
    assert f"clause coverage: {len(rule_clauses())}/{len(rule_clauses())} clauses of RULES.md" in done.stdout
    gli = [r["outcome"] for r in matrix["clauses"]["GLI 4.3.3"]]  # GLI references are listed beside the clauses
    assert gli and set(gli) == {"passed"}
    results = tmp_path / "allure-results"
    assert (results / "environment.properties").read_text(encoding="utf-8").startswith("bench=in-process\n")
    assert any("Clause traceability matrix" in p.read_text(encoding="utf-8") for p in results.glob("*-result.json"))


def test_certify_rejects_a_bad_bench_in_one_line(tmp_path: Path) -> None:
    bench = tmp_path / "b.yaml"
    bench.write_text("server: {kind: cloud}\ndevices: {transport: memory}\n", encoding="utf-8")
    done = _cli("certify", "--bench", str(bench))
    assert done.returncode == 2
    assert (
        done.stderr == "xocdia-hil: error: b.yaml: server.kind: must be one of in-process, command, url; got 'cloud'\n"
    )


def test_certify_names_an_adapter_that_cannot_be_loaded() -> None:
    done = _cli("certify", "--bench", "fixtures/benches/staging.example.yaml")
    assert done.returncode == 2
    assert done.stderr.startswith("xocdia-hil: error: adapter 'mylab.xocdia_adapter:StagingAdapter': cannot import")


def test_certify_rejects_a_bad_tag_expression() -> None:
    done = _cli("certify", "--tags", "clause:SH-3 and (")
    assert (done.returncode, done.stderr.count("\n")) == (2, 1)
    assert "invalid tag expression 'clause:SH-3 and ('" in done.stderr


def test_certify_names_a_report_folder_that_cannot_be_made(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    done = _cli("certify", "--report", str(blocker / "r"))
    assert (done.returncode, done.stderr.count("\n")) == (2, 1)
    assert done.stderr.startswith(f"xocdia-hil: error: --report {blocker / 'r'}: cannot create the folder")


def test_certify_fails_when_a_scenario_fails(tmp_path: Path) -> None:
    features = tmp_path / "f"
    features.mkdir()
    (features / "wrong.feature").write_text(
        "Feature: wrong\n  @clause:PAY-9\n  Scenario: a wrong expectation\n"
        "    Given player alice has a balance of 1,000\n    And round 1 lands w w r r\n    When round 1 opens\n"
        "    And alice bets 100 on big\n    And the round is played to the end\n"
        "    Then alice's bet on big returns 196\n",
        encoding="utf-8",
    )
    done = _cli("certify", "--features", str(features), "--report", str(tmp_path / "r"), "--workers", "0")
    assert done.returncode == 1
    assert "alice's big bet returned 100, expected 196" in done.stdout
    assert "scenarios passed 0, failed 1" in done.stdout


def test_run_rejects_a_bad_round_count() -> None:
    done = _cli("run", "--rounds", "0")
    assert done.returncode == 2 and "--rounds: expected a whole number >= 1, got 0" in done.stderr


def test_run_rejects_more_seats_than_a_run_can_connect() -> None:
    done = _cli("run", "--players", "101")
    assert done.returncode == 2
    assert done.stderr.strip() == "xocdia-hil run: error: argument --players: expected at most 100 seats, got 101"
