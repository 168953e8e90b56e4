"""Reports: tag expressions, the clause matrix, and the offline HTML (built-in renderer) from a real run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.clauses import ScenarioResult, build_matrix, matches, rule_clauses


@pytest.mark.parametrize(
    ("expression", "tags", "expected"),
    [
        ("", set(), True),
        ("clause:SH-3", {"clause:SH-3"}, True),
        ("@clause:SH-3", {"clause:SH-3", "gli:4.16"}, True),
        ("clause:SH-3 and not gli:4.16", {"clause:SH-3", "gli:4.16"}, False),
        ("(clause:SH-1 or clause:SH-2) and gli:4.16", {"clause:SH-2", "gli:4.16"}, True),
        ("clause:SH-1 or clause:SH-2", {"clause:SH-5"}, False),
    ],
)
def test_tag_expressions(expression: str, tags: set[str], expected: bool) -> None:
    assert matches(expression, tags) is expected


def test_a_tag_expression_that_does_not_parse() -> None:
    with pytest.raises(ValueError, match=r"invalid tag expression 'clause:SH-1 or'"):
        matches("clause:SH-1 or", {"clause:SH-1"})


def test_rule_clauses_are_read_from_the_catalogue() -> None:
    clauses = rule_clauses()
    assert clauses[:3] == ["EQ-1", "EQ-2", "EQ-3"]
    assert {"SH-4a", "SH-4b", "PAY-10", "RTP-1", "NET-1", "DOC-2"} <= set(clauses)
    assert len(clauses) == 32


def test_the_matrix_lists_uncovered_and_failing_clauses() -> None:
    results = [
        ScenarioResult("a", "overlap", ("SH-1",), (), "passed"),
        ScenarioResult("b", "drop", ("SH-2", "SH-1"), ("4.16",), "failed"),
    ]
    matrix = build_matrix(["SH-1", "SH-2", "SH-3"], results)
    assert matrix.uncovered == ("SH-3",)
    assert (matrix.passed, matrix.failed) == (1, 1)
    assert [r.title for r in matrix.rows["SH-1"]] == ["overlap", "drop"]
    assert "| SH-1 | 2 | 1 | 1 | FAIL |" in matrix.to_markdown()
    assert "| SH-3 | 0 | 0 | 0 | UNCOVERED |" in matrix.to_markdown()
    assert [r.title for r in matrix.rows["GLI 4.16"]] == ["drop"]


def test_offline_html_shows_the_matrix_and_a_serial_trace(tmp_path: Path) -> None:
    features = tmp_path / "f"
    features.mkdir()
    (features / "one.feature").write_text(
        "Feature: one\n  @clause:SH-5\n  Scenario: touch on lift\n    Given player alice has a balance of 1,000\n"
        "    And in round 1 the bowl touches token 2 when it is lifted\n    When round 1 opens\n"
        "    And alice bets 500 on odd\n    And the round is played to the end\n"
        "    Then the server voids round 1 under SH-5\n",
        encoding="utf-8",
    )
    report = tmp_path / "r"
    cli = [sys.executable, "-m", "harness.cli", "certify", "--features", str(features), "--report", str(report)]
    done = subprocess.run([*cli, "--workers", "0"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    build = [sys.executable, "-m", "harness.report.build", str(report / "allure-results"), str(report), "--fallback"]
    done = subprocess.run(build, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page and "http" not in page.split("<body>", 1)[1]  # self-contained, opens offline
    assert "Clause traceability matrix" in page and "UNCOVERED" in page
    assert "touch on lift" in page and "Given player alice has a balance of 1,000" in page
    assert "BOWL     tx  $1 3 BOWL OFF touch=1 token=2" in page  # the scenario's serial trace
    assert "SRV VOID round=1 clause=SH-5" in page
