"""``certify --live``: each round's verdict and the run's progress reach the page's event stream while the scenarios
run, not once the run is over."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

BENCH = str(Path(__file__).resolve().parents[2] / "fixtures" / "benches" / "in-process.yaml")
TAGS = "clause:DC-2"  # the server-restart scenarios: several rounds each, one of them interrupted


def _url(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if line.startswith("live page:"):
            return line.split()[2]
    proc.kill()
    raise AssertionError("certify --live printed no 'live page:' line")


def _stream(url: str, proc: subprocess.Popen[str]) -> list[tuple[dict[str, Any], bool]]:
    """Every event of the page's stream, each with whether certify was still running when it arrived."""
    got: list[tuple[dict[str, Any], bool]] = []
    with urllib.request.urlopen(url + "feed", timeout=120) as stream:
        for raw in stream:
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("event: closed"):
                break
            if line.startswith("data: "):
                got.append((json.loads(line[6:]), proc.poll() is None))
    return got


def test_round_verdicts_and_progress_reach_the_page_while_certify_runs(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", BENCH, "--tags", TAGS, "--workers", "0"]
    cmd += ["--report", str(tmp_path / "report"), "--live", "127.0.0.1:0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        got = _stream(_url(proc), proc)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    events = [e for e, _ in got]
    totals = [e["data"]["total"] for e in events if e["kind"] == "note" and e["data"]["who"] == "certify"]
    scenario_verdicts = [e["data"] for e in events if e["kind"] == "verdict" and "scenario" in e["data"]]
    assert totals and set(totals) == {len(scenario_verdicts)} and len(scenario_verdicts) >= 3
    assert all(v["ok"] for v in scenario_verdicts)

    # The first round judged arrives while certify runs, with scenarios still to come.
    first = next(i for i, (e, _) in enumerate(got) if e["kind"] == "verdict" and "table_round" in e["data"])
    assert got[first][1], "the first round's verdict arrived after certify had finished"
    done_before = sum(1 for e in events[:first] if e["kind"] == "verdict" and "scenario" in e["data"])
    assert done_before < len(scenario_verdicts)

    # Each scenario: announced, its steps in order, its rounds judged as they end, then its verdict.
    starts = [i for i, e in enumerate(events) if e["kind"] == "note" and e["data"]["who"] == "scenario"]
    assert len(starts) == len(scenario_verdicts)
    several = 0
    for start, end in zip(starts, [*starts[1:], len(events)], strict=True):
        part = events[start:end]
        steps = [e["data"]["what"] for e in part if e["kind"] == "note" and e["data"]["who"] == "step"]
        assert steps[0].startswith("Given ") and any(s.startswith("Then ") for s in steps)
        assert part[-1]["kind"] == "verdict" and "scenario" in part[-1]["data"], "its verdict ends the scenario"
        ended = [i for i, e in enumerate(part) if e["kind"] == "round" and e["data"]["state"] == "ended"]
        judged = [i for i, e in enumerate(part) if e["kind"] == "verdict" and "table_round" in e["data"]]
        if len(ended) >= 2:
            several += 1
            assert judged[0] < ended[-1], "a round is judged before the scenario's last round ends"
    assert several >= 1
