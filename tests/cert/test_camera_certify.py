"""``features/camera.feature`` through ``xocdia-hil certify`` in a real process: it passes on xocdia-jsonl against the
reference server, is not applicable on xocdia-ascii (its reader's line carries no confidence), and fails on ERR-1
against a server whose threshold is misplaced (a copy of ``gameserver/`` with the defect planted, first on the path).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
LINE = Path("gameserver/dialects/jsonl/line.py")
COMPARISON = "confidence[i] < min_confidence and faces[i]"
THRESHOLD = "        self.min_confidence = min_confidence\n"


def _certify(cwd: Path, dialect: str) -> dict[str, Any]:
    features = cwd / "features"
    features.mkdir(exist_ok=True)
    shutil.copy(REPO / "features" / "camera.feature", features / "camera.feature")
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--dialect", dialect, "--features", "features"]
    cmd += ["--workers", "0", "--report", "report", "--no-bench-check", "--json"]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    try:
        out: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(done.stdout[-2000:] + done.stderr[-2000:]) from None
    out["returncode"] = done.returncode
    return out


def _planted(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the reference server with ``old`` replaced by ``new`` in its xocdia-jsonl line, in ``tmp_path``
    (certify runs there, so ``python -m`` finds the copy before the installed one)."""
    shutil.copytree(REPO / "gameserver", tmp_path / "gameserver", ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / LINE
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{LINE} no longer holds {old!r}: update the planted defect"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return tmp_path


def test_camera_scenarios_pass_on_jsonl(tmp_path: Path) -> None:
    out = _certify(tmp_path, "xocdia-jsonl")
    assert out["returncode"] == 0 and out["scenarios"] == {"passed": 4, "failed": 0, "not_applicable": 0}, out


def test_camera_scenarios_are_not_applicable_on_ascii(tmp_path: Path) -> None:
    out = _certify(tmp_path, "xocdia-ascii")
    assert out["scenarios"] == {"passed": 0, "failed": 0, "not_applicable": 4}, out
    matrix = json.loads((tmp_path / "report" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert "declares no confidence" in json.dumps(matrix)


@pytest.mark.parametrize(
    ("old", "new", "scenario"),
    [
        (COMPARISON, COMPARISON.replace("<", "<="), "at the reader line's minimum"),  # at the threshold read U
        (THRESHOLD, THRESHOLD.replace("= min_confidence", "= min_confidence - 0.01"), "just below"),  # misread low
        (THRESHOLD, THRESHOLD.replace("= min_confidence", "= min_confidence + 0.0005"), "at the reader"),  # high
    ],
    ids=["at-or-below", "threshold-read-low", "threshold-read-high"],
)
def test_a_misplaced_threshold_fails_on_err_1(tmp_path: Path, old: str, new: str, scenario: str) -> None:
    out = _certify(_planted(tmp_path, old, new), "xocdia-jsonl")
    assert out["returncode"] != 0 and out["scenarios"]["failed"] == 1, out
    assert out["clauses"]["failed"] == ["ERR-1"], out
    assert scenario in json.dumps(out["failures"]), out["failures"]
