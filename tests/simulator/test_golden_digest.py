"""The seeded event log is pinned byte for byte: ``xocdia-hil simulate --rounds 3000 --seed 7 --events F`` must
write exactly these bytes for each shipped profile. A change to the model, its random streams or the JSONL format
moves a digest; that is a deliberate, reviewed change of these pins, never a side effect of a refactor."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = {
    "standard": "a274b3cd35d5461c72f568f55b7e5ef37b3cce4f6ce113f2bc1a9912da688548",
    "chaotic": "935332423e5babdc6ffe9e18cd49e9821b7f1b490deb82ea9ef5bb6a6855a812",
    "compressed": "f1431a766b60ea79b9cc9c613dd182e5315f4506d93fa8b673101be77d6c7d3c",
}


@pytest.mark.parametrize("profile", sorted(GOLDEN))
def test_seed_7_event_log_bytes_are_pinned(profile: str, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    cmd = [sys.executable, "-m", "harness.cli", "simulate", "--rounds", "3000", "--seed", "7"]
    done = subprocess.run(
        [*cmd, "--profile", profile, "--events", str(events)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert hashlib.sha256(events.read_bytes()).hexdigest() == GOLDEN[profile]
