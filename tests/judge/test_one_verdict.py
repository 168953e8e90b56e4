"""One verdict model: the per-round verdicts a run publishes (the feed, the live page, replay) and its final
verdict come from the same judge and never contradict each other, also across planned server kills."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = str(REPO / "fixtures" / "benches" / "in-process.yaml")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def _verdicts(feed: Path) -> tuple[list[dict[str, object]], dict[str, object]]:
    rows = [json.loads(line) for line in feed.read_text(encoding="utf-8").splitlines() if line.strip()]
    verdicts = [r["data"] for r in rows if r["kind"] == "verdict"]
    final = [v for v in verdicts if v.get("final")]
    assert len(final) == 1, final
    return [v for v in verdicts if not v.get("final")], final[0]


def test_a_chaotic_run_its_round_verdicts_and_replay_agree(tmp_path: Path) -> None:
    feed = tmp_path / "run.jsonl"
    done = _cli("run", "--bench", BENCH, "--profile", "chaotic", "--seed", "7", "--rounds", "30", "--record", str(feed),
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0 and "oracle: PASS" in done.stdout, done.stdout[-2000:]
    rounds, final = _verdicts(feed)
    assert final["ok"] and len(rounds) == 30
    assert [v["round"] for v in rounds if not v["ok"]] == []  # the void SH-4a of round 14 too, once the table ended it
    replay = _cli("replay", str(feed), cwd=tmp_path)
    assert replay.returncode == 0 and "FAIL" not in replay.stdout, replay.stdout[-3000:]


def test_rounds_cancelled_by_planned_kills_are_expected_cancellations_everywhere(tmp_path: Path) -> None:
    feed = tmp_path / "inject.jsonl"
    schedule = str(REPO / "fixtures" / "faults" / "restart-every-phase.yaml")
    done = _cli("inject", "--bench", "in-process", "--schedule", schedule, "--record", str(feed),
                "--manifest", str(tmp_path / "m.json"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0 and "verdict: PASS" in done.stdout, done.stdout[-2000:]
    rounds, final = _verdicts(feed)
    assert final["ok"]
    assert [(v["round"], v["ok"], v["expected"]) for v in rounds[:5]] == [
        (str(n), True, "cancelled (ERR-3)") for n in range(1, 6)
    ]  # each killed in play, cancelled on restart: the rule that then applies, not a difference
    assert all(v["ok"] for v in rounds)
    assert _cli("replay", str(feed), cwd=tmp_path).returncode == 0


def test_replay_fails_a_run_whose_round_verdict_failed_under_a_final_pass(tmp_path: Path) -> None:
    feed = tmp_path / "contradiction.jsonl"
    lines = [
        {"seq": 0, "t": 0.0, "kind": "bench", "data": {"bench": "in-process"}},
        {"seq": 1, "t": 1.0, "kind": "verdict", "data": {"round": "32", "table_round": 32, "ok": False,
         "expected": "settled on RRRR", "differences": [{"round": "32", "bet": "", "clause": "EQ-3",
         "what": "outcome", "expected": "RRRR", "actual": "RRRW"}]}},
        {"seq": 2, "t": 2.0, "kind": "verdict", "data": {"final": True, "ok": True, "summary": "oracle: PASS"}},
    ]  # fmt: skip
    feed.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = _cli("replay", str(feed), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "round 32: FAIL" in done.stdout
    assert "FAIL: the recorded final verdict passed, but round verdicts failed (rounds 32); they stand" in done.stdout
