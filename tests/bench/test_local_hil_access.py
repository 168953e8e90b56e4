"""``features/access.feature`` whole on the local HIL bench: the HTTP adapter's requests under chosen credentials
(:class:`~harness.bench.adapters.capabilities.Principals`) reach a real ``xocdia-server`` process, and the reference
server passes every scenario, each of ACC-1..ACC-4 decided PASS by a check that ran there. (A planted defect failing
there: ``tests/judge/test_planted_defects.py``.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FEATURE = Path(__file__).resolve().parents[2] / "features" / "access.feature"


def test_the_access_scenarios_pass_on_local_hil(tmp_path: Path) -> None:
    features = tmp_path / "features"
    features.mkdir()
    shutil.copy(FEATURE, features / FEATURE.name)
    report = tmp_path / "report"
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", "local-hil", "--workers", "0", "--json"]
    cmd += ["--features", str(features), "--report", str(report)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert done.stdout.strip().startswith("{"), done.stdout[-2000:] + done.stderr[-4000:]
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and not summary["failures"], summary
    scenarios = FEATURE.read_text(encoding="utf-8").count("\n  Scenario")
    assert summary["scenarios"]["passed"] == scenarios, summary["scenarios"]
    matrix = json.loads((report / "clause-matrix.json").read_text(encoding="utf-8"))
    for clause in ("ACC-1", "ACC-2", "ACC-3", "ACC-4"):
        assert matrix["results"][clause] == {"result": "PASS"}, (clause, matrix["results"][clause])
