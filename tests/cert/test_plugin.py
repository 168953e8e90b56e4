"""The ``xocdia`` pytest plugin, run in-process with ``pytester``: a lab's feature file and a one-line binding
module are all a scenario needs; the plugin supplies the steps, the bench, the tag handling and the clause matrix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
URL_BENCH = Path(__file__).resolve().parents[1] / "faults" / "url-staging.yaml"

PASSING = """\
Feature: A lab's own payout check

  @clause:PAY-8
  Scenario: Big pays 0.96 to 1 on three reds
    Given player alice has a balance of 100,000
    And round 1 lands w r r r
    When round 1 opens
    And alice bets 1,000 on big
    And the round is played to the end
    Then the server settles round 1 on w r r r
    And alice's bet on big returns 1960
    And alice's balance is 100960
    And the oracle finds no difference
"""

BINDING = """\
from pytest_bdd import scenarios

scenarios("lab.feature")
"""


def _lab(pytester: pytest.Pytester, feature: str) -> None:
    pytester.makefile(".feature", lab=feature)
    pytester.makepyfile(test_lab=BINDING)


def test_a_lab_scenario_runs_on_the_in_process_bench_and_lands_in_the_clause_matrix(pytester: pytest.Pytester) -> None:
    _lab(pytester, PASSING)
    matrix = pytester.path / "matrix"
    result = pytester.runpytest_inprocess("--bench", "in-process", "--clause-matrix", str(matrix), "-p", "no:randomly")
    result.assert_outcomes(passed=1)
    data = json.loads((matrix / "clause-matrix.json").read_text(encoding="utf-8"))
    assert [r["outcome"] for r in data["clauses"]["PAY-8"]] == ["passed"]
    assert "SH-1" in data["uncovered"]


def test_a_wrong_expectation_fails_the_scenario_and_the_clause(pytester: pytest.Pytester) -> None:
    _lab(pytester, PASSING.replace("returns 1960", "returns 2000"))
    matrix = pytester.path / "matrix"
    result = pytester.runpytest_inprocess("--bench", "in-process", "--clause-matrix", str(matrix))
    result.assert_outcomes(failed=1)
    data = json.loads((matrix / "clause-matrix.json").read_text(encoding="utf-8"))
    assert [r["outcome"] for r in data["clauses"]["PAY-8"]] == ["failed"]


def test_clause_tags_select_scenarios_without_unknown_marker_errors(pytester: pytest.Pytester) -> None:
    other = PASSING.replace("@clause:PAY-8", "@clause:PAY-9").replace("A lab's own payout check", "Another")
    pytester.makefile(".feature", lab=PASSING, other=other)
    pytester.makepyfile(test_lab='from pytest_bdd import scenarios\n\nscenarios("lab.feature", "other.feature")\n')
    result = pytester.runpytest_inprocess("--strict-markers", "--tags", "clause:PAY-9")
    result.assert_outcomes(passed=1, deselected=1)


def test_a_scenario_for_another_bench_is_not_applicable_with_its_clauses_and_reason(pytester: pytest.Pytester) -> None:
    other = PASSING.replace("@clause:PAY-8", "@clause:DOC-2 @bench:local-hil").replace(
        "A lab's own payout check", "Another"
    )
    pytester.makefile(".feature", lab=PASSING, other=other)
    pytester.makepyfile(test_lab='from pytest_bdd import scenarios\n\nscenarios("lab.feature", "other.feature")\n')
    matrix = pytester.path / "matrix"
    result = pytester.runpytest_inprocess("--bench", "in-process", "--clause-matrix", str(matrix))
    result.assert_outcomes(passed=1, skipped=1)  # listed, not deselected
    data = json.loads((matrix / "clause-matrix.json").read_text(encoding="utf-8"))
    assert [r["outcome"] for r in data["clauses"]["DOC-2"]] == ["not-applicable"]
    assert [(r["scenario"], r["reason"]) for r in data["not_applicable"]] == [
        (
            "Big pays 0.96 to 1 on three reds",
            "written for the local-hil bench only (@bench:local-hil); this bench is in-process",
        )
    ]
    assert "DOC-2" in data["unexercised"]
    # the passing scenario's judge decided PAY-9 on its bet on big: covered by a check that ran, not by a tag
    assert [(r["outcome"], r["checked"]) for r in data["clauses"]["PAY-9"]] == [("passed", True)]


def test_parallel_workers_on_a_bench_attached_by_url_are_refused_in_one_line(pytester: pytest.Pytester) -> None:
    _lab(pytester, PASSING)
    bench = pytester.path / "url-bench.yaml"
    shutil.copyfile(URL_BENCH, bench)  # one server, one set of device lines: nothing is reached before the refusal
    result = pytester.runpytest_subprocess("--bench", str(bench), "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    refusal = [line for line in result.stderr.lines if "attached by URL" in line]
    assert refusal == [
        "ERROR: -n 2: bench url-staging is attached by URL (one server, one set of device lines, shared by every "
        "scenario); use -n 0 or 1"
    ]


def test_an_unknown_bench_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    _lab(pytester, PASSING)
    result = pytester.runpytest_inprocess("--bench", "no-such-bench")
    assert result.ret != 0
    assert "no-such-bench" in result.stdout.str() + result.stderr.str()


def test_loading_the_plugin_by_its_old_module_path_registers_it_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one(bench):\n    assert bench.name == 'in-process'\n")
    result = pytester.runpytest_subprocess("-p", "harness.pytest_plugin", "--bench", "in-process")
    result.assert_outcomes(passed=1)  # the alias and the autoloaded entry point are one plugin, not two
