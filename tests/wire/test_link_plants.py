"""The device-link scenarios (features/device_link.feature) catch realistic link defects of a server, in the dialect
each concerns, and name the clause whose check failed first.

Each patch in ``plants/`` plants one defect in a copy of ``gameserver/`` (the reference server); ``certify`` runs
device_link.feature on the in-process bench in the patch's dialect, with that copy ahead of the installed server on
``PYTHONPATH``. The test holds: certify fails; the scenario that must catch the defect is among the failures, each
failure names the defect's clause first; and the clause matrix marks no clause FAIL but that one. The unplanted server
passes the same file in every shipped dialect (``test_the_reference_server_passes_the_link_scenarios``), so a plant's
failure is the plant's. (tests/judge/test_planted_defects.py runs its plants in the default dialect only.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.wire.dialects.registry import SHIPPED

REPO = Path(__file__).resolve().parents[2]
PLANTS = Path(__file__).resolve().parent / "plants"
FEATURE = REPO / "features" / "device_link.feature"

#: patch -> (dialect, title of the scenario that must fail, the clause it must name first)
CASES = {
    "bus-crc-not-checked": (
        "xocdia-bus",
        "A read whose check the line damaged is refused; its copy sent again settles the round",
        "EQ-3",
    ),
    "retransmitted-frame-acted-on-twice": (
        "xocdia-ascii",
        "A drop report sent again after its acknowledgement was lost is one drop: one re-shake",
        "SH-2",
    ),
    "silent-line-never-down": (
        "xocdia-ascii",
        "The reader line goes silent at the read: counted down within the silence limit",
        "ERR-1",
    ),
    "jsonl-reconnect-forgets-seen-sequence-numbers": (
        "xocdia-jsonl",
        "The reader's connection drops before its read is acknowledged: the read it sends again on reconnecting",
        "SH-3",
    ),
    "sequence-wrap-taken-for-a-replay": (
        "xocdia-ascii",
        "The reader's numbering wraps between two rounds: the read after the wrap settles its round",
        "ERR-1",
    ),
}


def _certify(tmp_path: Path, patch: str | None, dialect: str) -> tuple[int, dict[str, object]]:
    """certify --json on device_link.feature alone in ``dialect``, the server planted with ``patch`` (None: as
    shipped); returns its exit code and JSON summary."""
    root = tmp_path / "root"
    shutil.copytree(REPO / "gameserver", root / "gameserver", ignore=shutil.ignore_patterns("__pycache__"))
    if patch is not None:
        subprocess.run(["git", "apply", str(PLANTS / f"{patch}.patch")], cwd=root, check=True)
    folder = tmp_path / "features"
    folder.mkdir()
    shutil.copy(FEATURE, folder / FEATURE.name)
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", "in-process", "--dialect", dialect]
    cmd += ["--workers", "0", "--json", "--no-bench-check", "--features", str(folder)]
    cmd += ["--report", str(tmp_path / "report")]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.stdout.strip().startswith("{"), done.stdout[-2000:] + done.stderr[-4000:]
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("patch", sorted(CASES))
def test_a_planted_link_defect_fails_certify_in_its_dialect_and_names_its_clause(tmp_path: Path, patch: str) -> None:
    dialect, title, clause = CASES[patch]
    code, summary = _certify(tmp_path, patch, dialect)
    assert code != 0, summary
    failures = {f["scenario"]: f for f in summary["failures"]}  # type: ignore[attr-defined]
    assert any(t.startswith(title) for t in failures), sorted(failures)
    for name, failure in failures.items():
        assert failure["failed_clauses"][:1] == [clause], (name, failure)
    assert summary["clauses"]["failed"] == [clause], summary["clauses"]  # type: ignore[index]


@pytest.mark.parametrize("dialect", sorted(SHIPPED))
def test_the_reference_server_passes_the_link_scenarios(tmp_path: Path, dialect: str) -> None:
    code, summary = _certify(tmp_path, None, dialect)
    assert code == 0 and not summary["failures"], summary
