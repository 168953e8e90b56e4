"""The local HIL bench end to end: ``xocdia-hil certify`` on a representative subset of the scenarios against
the reference server process over ptys and HTTP/WS, and ``xocdia-hil run`` with the random crowd. (The full
``certify --bench local-hil`` is the acceptance run recorded in docs/performance.md.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FEATURES = Path(__file__).resolve().parents[2] / "features"
SUBSET = "clause:SH-1 or clause:SH-5 or clause:NET-1 or clause:ERR-2"  # 6 scenarios, also covering DC-2


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("dialect", [None, "xocdia-jsonl"], ids=["default-dialect", "xocdia-jsonl"])
def test_certify_subset_on_local_hil(tmp_path: Path, dialect: str | None) -> None:
    features = tmp_path / "features"  # the rule-area features only (features/faults has its own HIL tests)
    features.mkdir()
    for path in FEATURES.glob("*.feature"):
        # camera.feature needs a reader dialect that carries confidence (xocdia-jsonl): not applicable on the default
        if path.name != "camera.feature" or dialect == "xocdia-jsonl":
            shutil.copy(path, features / path.name)
    report = tmp_path / "report"
    args = ["--bench", "local-hil", "--tags", SUBSET, "--features", str(features), "--report", str(report)]
    if dialect is not None:  # the server's own line ends speak it too, over the same ptys and sockets
        args += ["--dialect", dialect]
    done = _cli("certify", *args, "--workers", "0")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    matrix = json.loads((report / "clause-matrix.json").read_text(encoding="utf-8"))
    for clause in ("SH-1", "SH-5", "DC-2", "NET-1", "ERR-1", "ERR-2"):
        outcomes = [r["outcome"] for r in matrix["clauses"][clause]]
        assert outcomes and set(outcomes) == {"passed"}, (clause, outcomes)
        assert matrix["results"][clause] == {"result": "PASS"}, clause  # a check of it ran on this bench
    assert matrix["failed"] == 0
    if dialect == "xocdia-jsonl":  # the confidence the camera's JSON lines carry reached the server: the run was jsonl
        below = [r for r in matrix["clauses"]["ERR-2"] if r["scenario"].startswith("A token read just below")]
        assert [r["outcome"] for r in below] == ["passed"], matrix["clauses"]["ERR-2"]
    assert "uncovered clauses (no check of them ran):" in done.stdout  # a tag subset: the rest uncovered, no failure


def test_run_main_job_on_local_hil() -> None:
    done = _cli("run", "--bench", "local-hil", "--rounds", "4", "--players", "3", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("bench local-hil: 4 rounds, 3 seats")
    assert lines[1] == "rounds: 4 (settled: 4)"
    assert lines[-1].startswith("oracle: PASS: 4 rounds, ")
