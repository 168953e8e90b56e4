"""``xocdia-hil simulate`` as a user runs it: a real subprocess, real files, one-line errors with exit 2."""

from __future__ import annotations

import csv
import json
import os
import select
import subprocess
import sys
import time
import tty
from pathlib import Path
from typing import Any

import pytest
import scipy.stats
import yaml

from harness.cli import main
from harness.files import PROFILE_DIR
from simulator import read_jsonl
from simulator.events import PlayerJoined, RoundEnded

TIMEOUT_S = 60


def simulate(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh interpreter (stdout/stderr captured, not a terminal: no progress bar)."""
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "simulate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        cwd=cwd,
    )


def test_json_summary_and_event_log_are_reproducible_and_consistent(tmp_path: Path) -> None:
    first = simulate("--rounds", "1000", "--seed", "7", "--json", "--events", tmp_path / "a.jsonl")
    second = simulate("--rounds", "1000", "--seed", "7", "--json", "--events", tmp_path / "b.jsonl")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert first.stdout.count("\n") == 1  # one JSON object on one line
    summary: dict[str, Any] = json.loads(first.stdout)
    assert (summary["rounds"], summary["seed"], summary["profile"]) == (1000, 7, "standard")
    histogram = summary["reds_histogram"]
    assert len(histogram) == 5 and all(isinstance(c, int) for c in histogram)
    assert sum(histogram) == summary["rounds"] - summary["voided"]
    assert isinstance(summary["incidents"], dict) and summary["incidents"]["bets_sent"] > 0
    # The p-value is the chi-square survival function of the histogram against 1-4-6-4-1/16.
    n = sum(histogram)
    reference = scipy.stats.chisquare(histogram, [n * k / 16 for k in (1, 4, 6, 4, 1)])
    assert summary["chi_square_p"] == pytest.approx(reference.pvalue, abs=1e-6)
    assert set(summary["round_duration_s"]) == {"p50", "p90", "p99", "max"}


def in_process(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """Run ``main`` in this interpreter (the same parser and handlers, without the 1.5 s interpreter start)."""
    try:
        status = main(["simulate", *map(str, args)])
    except SystemExit as exc:  # argparse usage errors exit from inside the parser
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_a_different_seed_gives_a_different_summary(capsys: pytest.CaptureFixture[str]) -> None:
    status_1, out_1, _ = in_process(capsys, "--rounds", "300", "--seed", "1", "--json")
    status_2, out_2, _ = in_process(capsys, "--rounds", "300", "--seed", "2", "--json")
    assert status_1 == status_2 == 0
    assert json.loads(out_1)["reds_histogram"] != json.loads(out_2)["reds_histogram"]


def test_events_and_outcomes_files_have_the_documented_format(tmp_path: Path) -> None:
    events_path, outcomes_path = tmp_path / "events.jsonl", tmp_path / "OUTCOMES.csv"
    result = simulate(
        "--rounds", "80", "--seed", "5", "--profile", "chaotic", "--events", events_path, "--outcomes", outcomes_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "80 rounds, seed 5, profile chaotic"
    for fragment in ("outcome by number of reds", "chi-square vs 1-4-6-4-1/16", "incidents:", "round duration"):
        assert fragment in result.stdout
    assert result.stderr == ""  # not a terminal: no progress bar
    events = read_jsonl(events_path.read_text(encoding="utf-8").splitlines())
    verdicts = [e for e in events if isinstance(e, RoundEnded)]
    assert [v.round for v in verdicts] == list(range(1, 81))

    with outcomes_path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["round_id", "status", "faces", "reds", "reshakes", "ended_at"]
    assert len(rows) == 80
    for row, verdict in zip(rows, verdicts, strict=True):
        assert int(row["round_id"]) == verdict.round
        assert row["status"] == verdict.status.value
        assert int(row["reshakes"]) == verdict.reshakes
        assert float(row["ended_at"]) == pytest.approx(verdict.t, abs=1e-6)
        if row["status"] == "settled":
            assert len(row["faces"]) == 4 and set(row["faces"]) <= {"R", "W"}
            assert int(row["reds"]) == row["faces"].count("R")
        else:
            assert row["faces"] == "" and row["reds"] == ""
    assert {row["status"] for row in rows} >= {"settled", "void"}


def test_a_script_file_forces_the_outcome(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("- {round: 2, faces: r r w w}\n- {round: 3, touch: true}\n", encoding="utf-8")
    outcomes = tmp_path / "OUTCOMES.csv"
    result = simulate("--rounds", "3", "--seed", "1", "--script", script, "--outcomes", outcomes)
    assert result.returncode == 0, result.stderr
    with outcomes.open(newline="", encoding="utf-8") as handle:
        rows = {row["round_id"]: row for row in csv.DictReader(handle)}
    assert (rows["2"]["status"], rows["2"]["faces"], rows["2"]["reds"]) == ("settled", "RRWW", "2")
    assert rows["3"]["status"] == "void"


def write_yaml(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def bad_profile(tmp_path: Path) -> Path:
    data = yaml.safe_load((PROFILE_DIR / "standard.yaml").read_text(encoding="utf-8"))
    data["tokens"]["p_standing"] = 1.5
    return write_yaml(tmp_path / "bad.yaml", data)


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (lambda tmp: ["--rounds", "-1"], "argument --rounds: expected a whole number >= 1, got -1"),
        (lambda tmp: ["--rounds", "x"], "argument --rounds: expected a whole number >= 1, got 'x'"),
        (lambda tmp: ["--rounds", "0"], "argument --rounds: expected a whole number >= 1, got 0"),
        (lambda tmp: [], "the following arguments are required: --rounds"),
        (lambda tmp: ["--rounds", "5", "--seed", "-3"], "argument --seed: expected a whole number >= 0, got -3"),
        (lambda tmp: ["--rounds", "5", "--profile", "nope"], "unknown profile 'nope'; shipped profiles:"),
        (lambda tmp: ["--rounds", "5", "--profile", tmp / "missing.yaml"], "profile file not found:"),
        (lambda tmp: ["--rounds", "5", "--profile", bad_profile(tmp)], "tokens.p_standing: must be a probability"),
        (
            lambda tmp: ["--rounds", "5", "--script", write_yaml(tmp / "s.yaml", [{"round": 1, "drop": "cup"}])],
            "s.yaml[0].drop: must be one of bowl, plate, token, none, got 'cup'",
        ),
        (lambda tmp: ["--rounds", "5", "--script", tmp / "none.yaml"], "cannot read script"),
        (
            lambda tmp: ["--rounds", "5", "--events", tmp / "no" / "dir" / "e.jsonl"],
            "cannot write",
        ),
    ],
    ids=[
        "rounds-negative",
        "rounds-text",
        "rounds-zero",
        "rounds-missing",
        "seed-negative",
        "profile-unknown",
        "profile-missing",
        "profile-bad-field",
        "script-bad-step",
        "script-missing",
        "events-no-dir",
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_args: Any, message: str
) -> None:
    status, out, err = in_process(capsys, *make_args(tmp_path))
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert message in err
    assert err.startswith("xocdia-hil")


@pytest.mark.parametrize(
    "make_args",
    [
        lambda tmp: ["--rounds", "-1"],
        lambda tmp: ["--rounds", "x"],
        lambda tmp: ["--rounds", "5", "--profile", bad_profile(tmp)],
        lambda tmp: ["--rounds", "5", "--script", write_yaml(tmp / "s.yaml", {"round": 1})],
    ],
    ids=["rounds-negative", "rounds-text", "profile-bad-field", "script-not-a-list"],
)
def test_the_installed_command_fails_in_one_line_without_a_traceback(tmp_path: Path, make_args: Any) -> None:
    result = simulate(*make_args(tmp_path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr


def test_players_option_overrides_the_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    events_path = tmp_path / "events.jsonl"
    status, out, _ = in_process(capsys, "--rounds", "50", "--players", "0", "--json", "--events", events_path)
    assert status == 0 and json.loads(out)["incidents"]["bets_sent"] == 0
    status, out, _ = in_process(capsys, "--rounds", "50", "--players", "3", "--json", "--events", events_path)
    assert status == 0 and json.loads(out)["incidents"]["bets_sent"] > 0
    events = read_jsonl(events_path.read_text(encoding="utf-8").splitlines())
    seats = {e.seat for e in events if isinstance(e, PlayerJoined)}
    assert seats == {0, 1, 2}


def read_until_closed(fd: int, deadline_s: float) -> bytes:
    """Read a pty master until the other side closes (EIO) or ``deadline_s`` passes."""
    chunks: list[bytes] = []
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: every writer has closed the slave
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def test_a_terminal_gets_a_progress_bar_and_stdout_stays_clean() -> None:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "simulate", "--rounds", "3000", "--json"],
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
        )
        os.close(slave)
        progress = read_until_closed(master, TIMEOUT_S).decode()
        stdout, _ = process.communicate(timeout=TIMEOUT_S)
    finally:
        os.close(master)
    assert process.returncode == 0
    assert json.loads(stdout)["rounds"] == 3000  # the bar never mixes into the JSON
    assert "\rsimulating [" in progress
    assert "3000/3000 (100%)" in progress and progress.endswith("\n")
