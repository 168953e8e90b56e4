"""The shipped foreign example certifies from the installed wheel, outside the clone: ``xocdia-hil examples foreign``
copies Lotus Tables' server, dialects, adapter and benches out of the package, and ``certify`` on ``lotus.yaml``,
with its documented configuration, exits 0 on the clean server and fails with the right clause on each planted
defect (the payout on PAY-6, the stale camera read on DEV-2). The scenarios are those clauses' only: the whole
suite on the vendor's real-time bench takes too long for a test (examples/foreign/README.md, "Results measured")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.packaging.test_wheel import _run, venv, wheel  # noqa: F401 (the session fixtures)

pytestmark = pytest.mark.slow

TAGS = "clause:PAY-6 or clause:DEV-2"


def _copied(bin_dir: Path, where: Path, plant: str | None) -> Path:
    """The foreign example copied out of the installed package into ``where``, with ``plant`` applied."""
    _run([str(bin_dir / "xocdia-hil"), "examples", "foreign", "--to", str(where)], where.parent)
    assert not (where / "__pycache__").exists()
    if plant is not None:
        patch = (where / "plants" / plant).read_text(encoding="utf-8")
        subprocess.run(["patch", "-p1"], input=patch, cwd=where, check=True, capture_output=True, text=True)
    return where


def _certify(bin_dir: Path, folder: Path, tags: str, expect: int) -> tuple[str, dict[str, Any]]:
    report = folder.parent / f"{folder.name}-report"
    cmd = [str(bin_dir / "xocdia-hil"), "certify", "--bench", "lotus.yaml", "--features", "shipped"]
    cmd += ["--tags", tags, "--no-bench-check", "--report", str(report)]
    done = _run(cmd, folder, timeout=240, expect=expect, bin_dir=bin_dir)
    matrix: dict[str, Any] = json.loads((report / "clause-matrix.json").read_text(encoding="utf-8"))
    return done.stdout, matrix


def _outcomes(matrix: dict[str, Any], clause: str) -> set[str]:
    return {r["outcome"] for r in matrix["clauses"][clause]}


def test_the_shipped_lotus_example_certifies_from_the_wheel_with_exit_0(venv: Path, tmp_path: Path) -> None:  # noqa: F811
    folder = _copied(venv, tmp_path / "lotus", None)
    out, matrix = _certify(venv, folder, TAGS, 0)
    assert _outcomes(matrix, "PAY-6") == {"passed"} and "passed" in _outcomes(matrix, "DEV-2"), out[-3000:]
    assert "failed" not in _outcomes(matrix, "DEV-2"), out[-3000:]
    assert "device_times=ignored" in out, out[-3000:]  # the bench's documented table configuration was followed


@pytest.mark.parametrize(
    ("plant", "clause"), [("payout-quad-at-6.patch", "PAY-6"), ("stale-camera-read.patch", "DEV-2")]
)
def test_a_planted_defect_in_the_shipped_lotus_example_fails_on_its_clause(
    venv: Path,  # noqa: F811
    tmp_path: Path,
    plant: str,
    clause: str,
) -> None:
    folder = _copied(venv, tmp_path / "lotus", plant)
    out, matrix = _certify(venv, folder, f"clause:{clause}", 1)
    assert "failed" in _outcomes(matrix, clause), out[-3000:]
    failed = [line for line in out.splitlines() if line.startswith("clauses FAILED: ")]
    assert failed and clause in failed[0].removeprefix("clauses FAILED: ").split(", "), out[-3000:]
