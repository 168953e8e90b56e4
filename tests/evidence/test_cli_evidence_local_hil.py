"""The acceptance's bench: ``certify --bench local-hil --evidence e --sign-key k --json`` (one scenario: the reference
server as a process over ptys and HTTP), then ``verify e --key k.pub``: exit 0, the server identified by its own
package inventory at the start and at the end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.evidence.signing import keygen


def test_certify_on_local_hil_writes_a_pack_that_verifies(tmp_path: Path) -> None:
    key = tmp_path / "k"
    keygen(key)
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", "local-hil", "--tags", "clause:EQ-1"]
    pack = tmp_path / "e"
    cmd += ["--workers", "0", "--report", str(tmp_path / "r"), "--evidence", str(pack), "--sign-key", str(key)]
    done = subprocess.run([*cmd, "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = json.loads(done.stdout)["evidence"]
    assert summary["folder"] == str(pack) and summary["signed"] is True
    assert f"evidence: {pack}: report {summary['report_id']}, PASS, signed" in done.stderr
    verified = subprocess.run(
        [sys.executable, "-m", "harness.cli", "verify", str(tmp_path / "e"), "--key", f"{key}.pub"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "system under test: xocdia-server" in verified.stdout
    start = json.loads((tmp_path / "e" / "identification" / "start.json").read_text(encoding="utf-8"))
    assert start["identified"] is True
    assert any(c["name"] == "gameserver/engine.py" and c["source"] == "system" for c in start["components"])
    manifest = json.loads((tmp_path / "e" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["report_id"] == summary["report_id"]
    assert manifest["bench"]["name"] == "local-hil" and manifest["bench"]["server"] == "command"
