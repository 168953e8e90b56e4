"""Each history checker is registered once (:func:`harness.judge.checkers.checker`); the names, the clauses and the
functions that run are views of that one registration, in the order of the module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.judge import checkers
from harness.judge.checkers import ALL, CHECKER_CLAUSES, CHECKERS, REGISTRY, Violation, check_all, checker
from harness.judge.history import FinalRead

DOC = Path(__file__).resolve().parents[2] / "docs" / "faults.md"


def test_names_clauses_and_functions_come_from_one_registration_in_source_order() -> None:
    assert tuple(ALL) == CHECKERS == tuple(CHECKER_CLAUSES) == tuple(REGISTRY)
    assert len(set(CHECKERS)) == len(CHECKERS) >= 8
    for name, spec in REGISTRY.items():
        assert spec.name == name
        assert ALL[name] is spec.run is getattr(checkers, f"check_{name}")
        assert CHECKER_CLAUSES[name] == spec.clause and spec.clause
    lines = [ALL[name].__code__.co_firstlineno for name in CHECKERS]
    assert lines == sorted(lines)  # they run and report in the order they are written


def test_a_violation_s_default_rule_is_its_checker_s_clause() -> None:
    for name, clause in CHECKER_CLAUSES.items():
        assert Violation(name, "what").rule == clause
        assert Violation(name, "what", clause="PAY-1").rule == "PAY-1"


def test_a_name_cannot_be_registered_twice() -> None:
    before = dict(checkers._REGISTRY)
    with pytest.raises(ValueError, match="'lost' is registered twice"):
        checker("lost", "DC-2")(checkers.check_lost)
    assert before == checkers._REGISTRY


def test_every_checker_reports_even_when_none_found_anything() -> None:
    report = check_all([], FinalRead(records={}, balances={}, events=[], opening={}), {})
    assert report.passed
    assert list(report.by_checker()) == list(CHECKERS)


def test_docs_faults_md_lists_the_checkers_in_order() -> None:
    text = DOC.read_text(encoding="utf-8").split("## Checkers", 1)[1].split("\n## ", 1)[0]
    assert tuple(re.findall(r"^\| `(\w+)` \|", text, re.MULTILINE)) == CHECKERS
