"""``make mutate`` (mutation/): the committed equivalents list against the server's real sources, the stable keys,
the report and the whole run on a copy of the working tree with cheap killers (the real killer, the certification
suite, takes tens of seconds per mutant; docs/mutation.md gives a sample run's figures)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from cosmic_ray.commands import init
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome as Outcome
from cosmic_ray.work_item import WorkerOutcome, WorkResult

from mutation import equivalents, report, run
from mutation.mutants import Mutant, describe

REPO = Path(__file__).resolve().parents[2]


def _mutants(root: Path, modules: list[str], tmp_path: Path) -> list[Mutant]:
    """cosmic-ray's work items for ``modules`` (paths relative to ``root``), described."""
    cwd = Path.cwd()
    try:
        os.chdir(root)
        with use_db(str(tmp_path / "session.sqlite"), WorkDB.Mode.create) as db:
            init([Path(m) for m in modules], db, {})
            return describe(list(db.work_items), root)
    finally:
        os.chdir(cwd)


def test_the_committed_equivalents_name_real_mutants_and_cover_every_annotation(tmp_path: Path) -> None:
    listed = equivalents.load()
    mutants = _mutants(REPO, list(run.MODULES), tmp_path)
    assert listed.stale(mutants) == []  # a listed key the code no longer has: fix or drop the entry
    annotated = [m for m in mutants if m.in_annotation]
    assert annotated and all(listed.why(m) for m in annotated)
    # the `X | None` operators cosmic-ray swaps all sit in annotations; real code is still mutated
    assert all(m.in_annotation for m in mutants if m.operator.startswith("core/ReplaceBinaryOperator_BitOr_"))
    assert any(m.path == "gameserver/bets.py" and m.definition == "<module>" and not listed.why(m) for m in mutants)


SOURCE = """\
from __future__ import annotations


def pay(stake: int | None, odds: int) -> int:
    if stake is None:
        return 0
    return stake * odds + 1
"""


def test_keys_survive_edits_elsewhere_in_the_file_and_number_repeats(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pay.py").write_text(SOURCE, encoding="utf-8")
    before = {m.key: m for m in _mutants(tmp_path / "a", ["pay.py"], tmp_path / "a")}
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "pay.py").write_text(SOURCE.replace("\n\ndef pay", "\nLIMIT = 5\n\n\ndef pay"), encoding="utf-8")
    after = {m.key: m for m in _mutants(tmp_path / "b", ["pay.py"], tmp_path / "b")}
    limit = "pay.py::<module>::core/NumberReplacer::LIMIT = 5"
    assert set(after) - set(before) == {limit, f"{limit}#2"}  # 5 -> 6 and 5 -> 4: the only new mutants
    assert set(before) <= set(after)
    moved = before["pay.py::pay::core/NumberReplacer::return stake * odds + 1"]
    assert after[moved.key].line == moved.line + 2  # the new line and a blank one above it
    assert after[moved.key].occurrence != moved.occurrence  # cosmic-ray's own numbering shifted; the key did not
    assert "pay.py::pay::core/NumberReplacer::return stake * odds + 1#2" in before  # 1 -> 2 and 1 -> 0
    annotation = before[
        "pay.py::pay::core/ReplaceBinaryOperator_BitOr_Add::def pay(stake: int | None, odds: int) -> int:"
    ]
    assert annotation.in_annotation and not moved.in_annotation


def test_equivalents_file_errors_name_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "eq.yaml"
    cases = {
        "rules:\n  - operator: core/NumberReplacer\n": "rules entry 1: 'why'",
        "rules:\n  - why: x\n": "rules entry 1: a rule needs 'operator' or 'in_annotation: true'",
        "rules:\n  - operator: '('\n    why: x\n": "rules entry 1: 'operator' is not a regular expression",
        "mutants:\n  - key: k\n    why: x\n  - key: k\n    why: y\n": "mutants entry 2: key listed twice: k",
        "mutants:\n  - key: k\n    because: x\n": "mutants entry 1: unknown field(s) because",
        "other: 1\n": "expected a mapping with 'rules' and/or 'mutants'",
    }
    for text, message in cases.items():
        path.write_text(text, encoding="utf-8")
        with pytest.raises(equivalents.EquivalentsError, match=re.escape(message)):
            equivalents.load(path)
    assert equivalents.load(tmp_path / "missing.yaml") == equivalents.Equivalents()


def test_a_result_is_classified_killed_timed_out_survived_or_error() -> None:
    killed = "...F\nFAILED harness/cert/steps/suite.py::test_big_pays - AssertionError: 1960 != 2000\n1 failed"
    hung = "FAILED harness/cert/steps/suite.py::test_resume - Failed: Timeout (>60.0s) from pytest-timeout."
    normal = WorkerOutcome.NORMAL
    assert run.classify(WorkResult(normal, killed, Outcome.KILLED), 90) == (
        "killed",
        "test_big_pays - AssertionError: 1960 != 2000",
    )
    assert run.classify(WorkResult(normal, hung, Outcome.KILLED), 90) == (
        "timed_out",
        "test_resume - Failed: Timeout (>60.0s) from pytest-timeout.: past --scenario-timeout",
    )
    assert run.classify(WorkResult(normal, "timeout", Outcome.KILLED), 90)[0] == "timed_out"
    assert run.classify(WorkResult(normal, "1 passed", Outcome.SURVIVED), 90) == ("survived", "")
    assert run.classify(WorkResult(WorkerOutcome.EXCEPTION, "Traceback\nOSError: x"), 90) == ("error", "OSError: x")


def test_the_report_scores_killed_over_all_but_equivalent_and_renders_from_its_json(tmp_path: Path) -> None:
    def record(key: str, status: str) -> dict[str, object]:
        diff = f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-{key} = 1\n+{key} = 2"
        return {"key": key, "path": "x.py", "line": 1, "definition": "<module>", "operator": "core/NumberReplacer",
                "occurrence": 0, "status": status, "detail": "", "seconds": 1.0, "diff": diff}  # fmt: skip

    statuses = ["killed"] * 6 + ["timed_out", "survived", "equivalent", "equivalent"]
    built = report.build({"generated": 10, "wall_s": 3.0}, [record(f"m{i}", s) for i, s in enumerate(statuses)])
    assert built["counts"] == {"killed": 6, "timed_out": 1, "survived": 1, "equivalent": 2, "error": 0}
    assert built["score"] == 7 / 8
    report.write(tmp_path, built)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "**87.5 %**" in text
    assert "## Survived (1)" in text and "-m7 = 1\n+m7 = 2" in text
    assert "## Timed out (1)" in text and "## Equivalent (2)" in text and "## Killed (6)" in text
    (tmp_path / "report.md").unlink()
    assert report.main([str(tmp_path)]) == 0
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == text
    assert report.score([record("a", "equivalent")]) is None


def test_a_run_mutates_a_copy_never_the_working_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    bets = REPO / "gameserver" / "bets.py"
    digest = hashlib.sha256(bets.read_bytes()).hexdigest()
    # a killer that fails whenever bets.py is not byte for byte the working tree's: every mutant applied is killed
    read = "hashlib.sha256(open('gameserver/bets.py', 'rb').read()).hexdigest()"
    changed = f"import hashlib, sys; sys.exit({read} != '{digest}')"
    args = ["--modules", "gameserver/bets.py", "--sample", "3", "--seed", "1", "--timeout", "60"]
    assert run.main([*args, "--report", str(tmp_path / "k"), "--killer", f'{{python}} -c "{changed}"']) == 0
    killed = json.loads((tmp_path / "k" / "report.json").read_text(encoding="utf-8"))
    assert killed["counts"]["killed"] == 3 and killed["score"] == 1.0 and killed["complete"]
    assert all(m["diff"].startswith("--- a/gameserver/bets.py") for m in killed["mutants"] if m["status"] == "killed")
    assert hashlib.sha256(bets.read_bytes()).hexdigest() == digest
    # the killer runs in the copy, importing the copy's server
    here = f"import sys, gameserver; sys.exit(gameserver.__file__.startswith('{REPO}/'))"
    assert run.main([*args, "--report", str(tmp_path / "s"), "--killer", f'{{python}} -c "{here}"']) == 0
    survived = json.loads((tmp_path / "s" / "report.json").read_text(encoding="utf-8"))
    assert survived["counts"]["survived"] == 3 and survived["score"] == 0.0
    drawn = [m["key"] for m in survived["mutants"] if m["status"] != "equivalent"]
    assert drawn == [m["key"] for m in killed["mutants"] if m["status"] != "equivalent"]  # same seed, same draw
    assert (tmp_path / "s" / "session.sqlite").exists()


def test_a_failing_unmutated_suite_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    failing = "{python} -c 'raise SystemExit(3)'"
    assert run.main(["--modules", "gameserver/bets.py", "--report", str(tmp_path), "--killer", failing]) == 2
    assert "the unmutated suite fails (exit 3)" in capsys.readouterr().err
