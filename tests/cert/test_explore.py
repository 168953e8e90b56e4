"""Generative certification finds defects the examples miss, names their clause, and writes a scenario that fails
again when run alone.

Each plant is a patch of ``tests/judge/plants/`` applied to a copy of ``gameserver/``; ``certify --explore 200
--seed 1`` runs the exploration scenario alone on the in-process bench with that copy first on ``PYTHONPATH``. The
unplanted server passes the same exploration (``test_the_reference_server_passes_the_exploration``), so a plant's
failure is the plant's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cert.explore.machine import ALTERATIONS, _incident
from harness.cert.explore.runner import StepLine, StepRunner, UnknownStep
from tests.judge.planting import planted

#: patch -> the clause the exploration must fail on first
CASES = {
    "pause-time-taken-off-the-next-round": "ERR-2",
    "standing-token-after-a-reshake-read-as-white": "SH-3",
}


def _certify(root: Path, report: Path, features: Path, *extra: str) -> tuple[int, dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", "in-process", "--workers", "0", "--json"]
    cmd += ["--features", str(features), "--report", str(report), *extra]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.stdout.strip().startswith("{"), done.stdout[-2000:] + done.stderr[-4000:]
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("patch", sorted(CASES))
def test_exploration_finds_a_planted_defect_and_writes_a_scenario_that_fails_again(tmp_path: Path, patch: str) -> None:
    root, folder = planted(tmp_path, patch, "exploration.feature")
    code, summary = _certify(root, tmp_path / "report", folder, "--explore", "200", "--seed", "1")
    assert code != 0, summary
    clause = CASES[patch]
    assert summary["clauses"]["failed"] == [clause], summary  # type: ignore[index]
    written = sorted((tmp_path / "report" / "explored").glob("*.feature"))
    assert len(written) == 1, written
    text = written[0].read_text(encoding="utf-8")
    assert f"@clause:{clause}" in text
    steps = [line for line in text.splitlines() if line.strip().split(" ", 1)[0] in ("Given", "When", "Then", "And")]
    assert len(steps) <= 14, text
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(written[0], again)
    code, summary = _certify(root, tmp_path / "report-again", again)
    assert code != 0 and summary["clauses"]["failed"] == [clause], summary  # type: ignore[index]


def test_the_reference_server_passes_the_exploration(tmp_path: Path) -> None:
    root, folder = planted(tmp_path, None, "exploration.feature")
    code, summary = _certify(root, tmp_path / "report", folder, "--explore", "60", "--seed", "3")
    assert code == 0 and not summary["failures"], summary
    assert not (tmp_path / "report" / "explored").exists()


def test_every_line_the_explorer_writes_is_one_shipped_step() -> None:
    runner = StepRunner()
    lines = [line for n in (1, 2) for kind in range(14) for line in _incident(n, kind, 1, "r w r w")]
    lines += [StepLine("When", text) for text in ALTERATIONS]
    lines += [StepLine("When", t) for t in (
        "round 1 opens", "betting closes", "the dealer has finished shaking", "0.3 seconds pass",
        "alice tries to bet 1,000 on big", "alice tries to bet 100 on odd 5 ms before betting closes",
        "alice sends that bet again", "alice sends that bet id again with 100 on small", "alice disconnects",
        "alice reconnects", "the supervisor pauses the round", "the supervisor resumes the round",
        "the supervisor cancels the round", "the server is killed and restarted",
        "the server dies after 3 statements of the write that ends round 1, and is restarted",
        "the reader sends round 1's result again untagged as the bowl comes off",
        "the reader sends round 1's result again as the bowl comes off", "the round is played to the end",
    )]  # fmt: skip
    for line in lines:
        runner.match(line)  # raises UnknownStep unless exactly one definition matches
    with pytest.raises(UnknownStep):
        runner.match(StepLine("When", "alice bets on nothing at all"))
