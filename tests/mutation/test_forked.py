"""The default killer of ``make mutate`` on a small real project: per-scenario coverage decides which tests can kill
a mutant (``mutation.selection``, recorded by ``mutation.covplugin`` under a real ``coverage run``), and workers
that fork a pytest run per mutant apply it with cosmic-ray, kill a run past its limit and put the file back
(``mutation.worker`` through ``mutation.pool``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mutation import forked
from mutation.pool import Workers
from mutation.selection import UNREACHED, WHOLE_SUITE, Coverage, SelectionError

REPO = Path(__file__).resolve().parents[2]

PAY = """\
from __future__ import annotations

ODDS = 3


def pay(stake: int) -> int:
    if stake < 0:
        raise ValueError("negative")
    return stake * ODDS


def refund(stake: int) -> int:
    return stake


def never(stake: int) -> int:
    total = stake
    for _ in range(2):
        total += 1
    return total
"""

TESTS = """\
import time

from pkg.pay import pay, refund


def test_pay() -> None:
    assert pay(2) == 6


def test_refund() -> None:
    assert refund(5) == 5


def test_slow() -> None:
    time.sleep(float(__import__("os").environ.get("SLOW_S", "0")))
"""


#: Only the plugins a test names: the installed ones (the harness's own among them) cost seconds to load.
QUIET = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "pay.py").write_text(PAY, encoding="utf-8")
    (root / "test_pay.py").write_text(TESTS, encoding="utf-8")
    (root / "mutation").symlink_to(REPO / "mutation", target_is_directory=True)
    return root


def _baseline(root: Path) -> tuple[Path, dict[str, object]]:
    data, record = root / ".cov", root / "baseline.json"
    env = {**os.environ, "PYTHONPATH": str(root), "XOCDIA_MUTATE_BASELINE": str(record), **QUIET}
    argv = [sys.executable, "-m", "coverage", "run", f"--data-file={data}", "--source=pkg", "-m", "pytest"]
    done = subprocess.run([*argv, "test_pay.py", "-q", "-p", "no:cacheprovider", "-p", "mutation.covplugin"],
                          cwd=root, env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return data, json.loads(record.read_text(encoding="utf-8"))


def test_coverage_selects_the_tests_that_ran_the_mutated_statement(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    data, record = _baseline(root)
    assert list(record["seconds"]) == ["test_pay.py::test_pay", "test_pay.py::test_refund", "test_pay.py::test_slow"]  # type: ignore[call-overload]
    assert "pkg.pay" in record["modules"]  # type: ignore[operator]
    cov = Coverage(data, root)
    assert cov.scenarios("pkg/pay.py", 9, 9) == ("test_pay.py::test_pay",)  # return stake * ODDS
    assert cov.scenarios("pkg/pay.py", 7, 7) == ("test_pay.py::test_pay",)  # the if's header
    assert cov.scenarios("pkg/pay.py", 13, 13) == ("test_pay.py::test_refund",)
    assert cov.scenarios("pkg/pay.py", 8, 8) is UNREACHED  # the raise: no test gives a negative stake
    assert cov.scenarios("pkg/pay.py", 18, 18) is UNREACHED  # a loop header in a function no test calls
    assert cov.scenarios("pkg/pay.py", 3, 3) == WHOLE_SUITE  # a module constant: run at import
    with pytest.raises(SelectionError, match=r"saw no line of pkg/other\.py"):
        cov.scenarios("pkg/other.py", 1, 1)


def _request(operator: str, occurrence: int, tests: list[str], timeout: float = 60.0, run: bool = True) -> dict:  # type: ignore[type-arg]
    args = [*tests, "-x", "-q", "-p", "no:cacheprovider"]
    return {"path": "pkg/pay.py", "operator": operator, "occurrence": occurrence, "args": args,
            "timeout": timeout, "run": run}  # fmt: skip


def test_workers_fork_a_run_per_mutant_and_put_the_file_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _project(tmp_path / "a")
    second = tmp_path / "b"
    shutil.copytree(first, second, symlinks=True)
    modules = tmp_path / "modules.json"
    modules.write_text(json.dumps({"modules": ["pytest", "pkg", "pkg.pay", "no.such.module"]}), encoding="utf-8")
    digest = hashlib.sha256((first / "pkg" / "pay.py").read_bytes()).hexdigest()
    monkeypatch.setenv("SLOW_S", "30")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    jobs = [
        {"name": "odds", "request": _request("core/NumberReplacer", 0, ["test_pay.py::test_pay"])},
        {"name": "guard", "request": _request("core/ReplaceComparisonOperator_Lt_Gt", 0, ["test_pay.py::test_refund"])},
        {"name": "diff only", "request": _request("core/NumberReplacer", 0, [], run=False)},
        {"name": "slow", "request": _request("core/NumberReplacer", 1, ["test_pay.py::test_slow"], timeout=2.0)},
        {"name": "none", "request": _request("core/NumberReplacer", 99, ["test_pay.py"])},
    ]
    replies: dict[str, dict[str, object]] = {}
    with Workers([first, second], modules, ["pkg"]) as workers:
        workers.run(jobs, lambda job, reply: replies.__setitem__(job["name"], reply))
    assert {name: r["outcome"] for name, r in replies.items()} == {
        "odds": "killed",  # ODDS = 3 made 4: test_pay fails
        "guard": "survived",  # only test_refund ran, and it never reaches the guard
        "diff only": "not_run",
        "slow": "timeout",
        "none": "no_test",
    }
    assert "-ODDS = 3\n+ODDS = 4" in str(replies["odds"]["diff"]) and "1 failed" in str(replies["odds"]["output"])
    assert "+ODDS = 4" in str(replies["diff only"]["diff"])
    assert forked.result_of(replies["slow"]).output == "timeout"
    assert forked.result_of(replies["diff only"]).output == forked.NOT_REACHED
    for tree in (first, second):  # every mutant was put back
        assert hashlib.sha256((tree / "pkg" / "pay.py").read_bytes()).hexdigest() == digest
