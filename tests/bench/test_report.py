"""Reports: tag expressions and the clause matrix. (The offline HTML of a real run is checked in
tests/bdd/test_steps_doc.py, on the lab scenario it runs.)"""

from __future__ import annotations

import json

import pytest

from harness.cert.report.clauses import RULES_PATH, ScenarioResult, build_matrix, matches, rule_clauses


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
    assert {"SH-4a", "SH-4b", "PAY-10", "RTP-1", "NET-1", "DOC-2", "LIM-1", "ATOM-1", "DEV-1", "PROC-2"} <= set(clauses)
    assert len(clauses) == len(set(clauses)) == 52  # 32 published rules, 16 certification requirements, 4 ACC-*
    assert clauses[-4:] == ["ACC-1", "ACC-2", "ACC-3", "ACC-4"]  # ACCESS.md after RULES.md
    assert len(rule_clauses(RULES_PATH)) == 48


def test_the_matrix_lists_uncovered_and_failing_clauses() -> None:
    results = [
        ScenarioResult("a", "overlap", ("SH-1",), (), "passed", checked=("SH-1", "EQ-3")),
        ScenarioResult("b", "drop", ("SH-2", "SH-1"), ("4.16",), "failed", checked=("SH-1",), failed_clauses=("SH-1",)),
    ]
    matrix = build_matrix(["SH-1", "SH-2", "SH-3"], results)
    assert matrix.uncovered == ("SH-2", "SH-3")  # SH-2: its scenario failed before any check of it ran
    assert (matrix.passed, matrix.failed) == (1, 1)
    assert [r.title for r in matrix.rows["SH-1"]] == ["overlap", "drop"]
    text = matrix.to_markdown()
    assert "| SH-1 | 2 | 2 | 1 | 1 | 0 | FAIL |" in text
    assert "| SH-2 | 1 | 0 | 0 | 1 | 0 | NOT DECIDED: drop (b) failed on SH-1 |" in text
    assert "| SH-3 | 0 | 0 | 0 | 0 | 0 | UNCOVERED |" in text
    assert [r.title for r in matrix.rows["GLI 4.16"]] == ["drop"]
    assert [r.title for r in matrix.rows["EQ-3"]] == ["overlap"]  # checked, though not tagged


def test_a_clause_is_failed_only_by_its_own_check_and_covered_only_by_checks_that_ran() -> None:
    results = [
        # one wrong odds value: the scenario also tagged DC-1 fails on PAY-2's check, not on DC-1's
        ScenarioResult(
            "a", "disconnect", ("DC-1", "PAY-2"), (), "failed", checked=("PAY-2",), failed_clauses=("PAY-2",)
        ),
        ScenarioResult("b", "typo", ("GP-1",), (), "passed"),  # tagged, but no check of GP-1 ran
        ScenarioResult("c", "error", ("ERR-1",), (), "failed"),  # failed outside any clause check
    ]
    matrix = build_matrix(["DC-1", "PAY-2", "GP-1", "ERR-1"], results)
    assert matrix.result("PAY-2") == ("FAIL", "")
    assert matrix.result("DC-1") == ("NOT DECIDED", "disconnect (a) failed on PAY-2")
    assert matrix.result("GP-1") == ("UNCHECKED", "tagged, but no check of it ran")
    assert matrix.result("ERR-1") == ("NOT DECIDED", "error (c) failed on an error outside any clause check")
    assert matrix.uncovered == ("DC-1", "GP-1", "ERR-1")
    doc = json.loads(matrix.to_json())
    assert doc["results"]["PAY-2"] == {"result": "FAIL"}
    assert [f["failed_clauses"] for f in doc["failures"]] == [["PAY-2"], []]


def test_not_applicable_scenarios_are_listed_with_their_reason_and_clauses_only_they_cover_are_unexercised() -> None:
    results = [
        ScenarioResult("a", "round", ("GP-1", "NET-1"), (), "passed", checked=("GP-1", "NET-1")),
        ScenarioResult("b", "kill", ("ERR-3", "NET-1"), (), "not-applicable", "cannot kill a server it did not start"),
    ]
    matrix = build_matrix(["GP-1", "NET-1", "ERR-3", "SH-3"], results)
    assert (matrix.uncovered, matrix.unexercised) == (("SH-3",), ("ERR-3",))
    assert (matrix.passed, matrix.failed) == (1, 0)
    assert [r.nodeid for r in matrix.not_applicable] == ["b"]
    text = matrix.to_markdown()
    assert "| NET-1 | 2 | 1 | 1 | 0 | 1 | PASS |" in text and "| ERR-3 | 1 | 0 | 0 | 0 | 1 | NOT APPLICABLE |" in text
    assert "- kill (ERR-3, NET-1): cannot kill a server it did not start" in text
    doc = json.loads(matrix.to_json())
    assert doc["unexercised"] == ["ERR-3"]
    reason = "cannot kill a server it did not start"
    want = {"scenario": "kill", "nodeid": "b", "clauses": ["ERR-3", "NET-1"], "reason": reason}
    assert doc["not_applicable"] == [want]
