"""Every shipped device dialect passes the whole shipped suite on the in-process bench: the table speaks the
dialect, the reference server's line ends speak it too, and certify exits 0 with every clause of RULES.md checked
(none uncovered, none only not applicable). The default dialect is the suite's own run (tests/bdd)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.wire.dialects import DEFAULT_DIALECT
from harness.wire.dialects.registry import SHIPPED

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("dialect", sorted(set(SHIPPED) - {DEFAULT_DIALECT}))
def test_the_whole_suite_passes_in_every_shipped_dialect(tmp_path: Path, dialect: str) -> None:
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", "in-process", "--dialect", dialect]
    cmd += ["--workers", "0", "--json", "--report", str(tmp_path / "report"), "--no-bench-check"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert done.stdout.strip().startswith("{"), done.stdout[-2000:] + done.stderr[-4000:]
    summary = json.loads(done.stdout)
    clauses = summary["clauses"]
    assert done.returncode == 0 and summary["passed"], summary["failures"]
    assert clauses["covered"] == clauses["of"] >= 48, clauses
    assert not clauses["uncovered"] and not clauses["unexercised"], clauses
    assert summary["scenarios"]["failed"] == 0
