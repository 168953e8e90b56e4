"""docs/steps.md is generated from the step definitions and must be current; a lab's new scenario written only
with phrases from that page runs through ``xocdia-hil certify`` without any new Python."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from harness.cert.steps.docgen import DOC, collect, main

NEW_SCENARIO = """\
Feature: A lab's own scenario

  @clause:SH-2 @clause:PAY-8
  Scenario: A token falls, the shake is repeated, Even wins on four whites
    Given player carol has a balance of 5,000
    And in round 1 the token drops during shake 1
    And in round 1 shake 2 lands w w w w
    When round 1 opens
    And carol bets 2,000 on even
    And carol bets 500 on four_of_a_kind
    And the round is played to the end
    Then the server asks for 1 re-shake in round 1
    And the server settles round 1 on w w w w
    And carol's bet on even returns 3,920
    And carol's bet on four_of_a_kind returns 3,750
    And carol's balance is 10,170
    And the oracle finds no difference
"""


def test_docs_steps_md_is_current() -> None:
    assert main(["--check"]) == 0, "docs/steps.md is stale: run python -m harness.cert.steps.docgen"


def test_every_step_is_documented_with_an_example() -> None:
    steps = collect()
    text = DOC.read_text(encoding="utf-8")
    assert len(steps) >= 30
    for step in steps:
        assert f"`{step.keyword} {step.phrase}`" in text
        assert step.example.split(" ", 1)[0] == step.keyword


def _documented_patterns() -> list[re.Pattern[str]]:
    phrases = re.findall(r"^### `(?:Given|When|Then) (.+)`$", DOC.read_text(encoding="utf-8"), re.MULTILINE)
    out = []
    for phrase in phrases:
        pattern = re.escape(phrase).replace(r"\(s\)", "s?")
        out.append(re.compile(re.sub(r"<\w+>", ".+", pattern) + "$"))
    return out


def test_a_new_scenario_from_documented_phrases_runs_without_new_python(tmp_path: Path) -> None:
    patterns = _documented_patterns()
    for line in NEW_SCENARIO.splitlines():
        words = line.strip().split(" ", 1)
        if words[0] in ("Given", "When", "Then", "And"):
            assert any(p.match(words[1]) for p in patterns), f"not a documented phrase: {line.strip()!r}"
    features = tmp_path / "lab"
    features.mkdir()
    (features / "lab.feature").write_text(NEW_SCENARIO, encoding="utf-8")
    report = tmp_path / "report"
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--features", str(features), "--report", str(report)]
    done = subprocess.run([*cmd, "--workers", "0"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    matrix = json.loads((report / "clause-matrix.json").read_text(encoding="utf-8"))
    assert [r["outcome"] for r in matrix["clauses"]["PAY-8"]] == ["passed"]
    assert "SH-1" in matrix["uncovered"]  # a partial suite reports what it leaves uncovered (and does not fail)
    # the offline report of that run (built-in renderer: no network, no Node needed here)
    build = [
        sys.executable,
        "-m",
        "harness.cert.report.build",
        str(report / "allure-results"),
        str(report),
        "--fallback",
    ]
    done = subprocess.run(build, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    page = (report / "index.html").read_text(encoding="utf-8")
    body = page.split("<body>", 1)[1]
    assert "<script src" not in page and "http" not in body  # self-contained (inline script only), opens offline
    assert "Clause traceability matrix" in page and "UNCOVERED" in page
    assert "Given player carol has a balance of 5,000" in page
    assert "SHAKER   tx  $1 3 SHAKER DROP item=token token=" in page  # the scenario's serial trace
    assert "oracle: PASS: 1 rounds, 2 bets checked" in page
