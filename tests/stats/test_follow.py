"""``audit --follow``: a real writer process appends rounds while the real CLI follows the file."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.stats.fairness import monitor_design
from harness.stats.follow import OutcomeTail, follow
from harness.stats.monitor import first_alarms
from harness.stats.readers import BET_COLUMNS, OUTCOME_COLUMNS, RecordError
from harness.stats.settlement import draw_patterns, make_generator
from tests.stats.stats_helpers import audit_follow, faces_of

HEADER = ",".join(OUTCOME_COLUMNS) + "\n"

WRITER = textwrap.dedent(
    """
    import sys, time
    from harness.stats.settlement import draw_patterns, make_generator
    path, rounds, p_red = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with open(path, "a", encoding="utf-8") as fh:
        for i, x in enumerate(draw_patterns(make_generator(8), rounds, [p_red] * 4)):
            x = int(x)
            faces = "".join("R" if x >> j & 1 else "W" for j in range(4))
            fh.write(f"r{i},settled,{faces},{x.bit_count()},0,{i}\\n")
            if i % 100 == 99:
                fh.flush()
                time.sleep(0.05)
    """
)


def row(i: int, pattern: int) -> str:
    return f"r{i},settled,{faces_of(pattern)},{pattern.bit_count()},0,{i}\n"


def test_follow_alarms_on_a_planted_bias_while_the_file_is_written(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.csv"
    path.write_text(HEADER, encoding="utf-8")
    # 20,000 rounds at P(red) 0.56, 100 every 0.05 s: about 10 s of writing; the alarm comes within ~1,000 rounds
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "20000", "0.56"])
    try:
        follower = subprocess.run(
            [sys.executable, "-m", "harness.cli", "audit", "--follow", str(path), "--idle", "30"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        still_writing = writer.poll() is None
        written = path.read_text(encoding="utf-8").count("\n") - 1
    finally:
        writer.terminate()
        writer.wait(timeout=10)
    assert follower.returncode == 1, follower.stderr
    lines = follower.stdout.strip().splitlines()
    alarm = next(line for line in lines if line.startswith("ALARM at settled round "))
    at = int(alarm.split()[4])
    assert "tokens favour red" in alarm
    assert still_writing and at < written < 20_000, (at, written)
    assert lines[-1].startswith("FAIL: the live monitor's p-value reached its alarm level")


def test_follow_of_a_file_that_stops_growing_audits_it_in_full(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.csv"
    pats = [int(x) for x in draw_patterns(make_generator(9), 600, [0.5] * 4)]
    path.write_text(HEADER + "".join(row(i, p) for i, p in enumerate(pats)), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "audit", "--follow", str(path), "--idle", "0.5"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 3, proc.stderr
    out = proc.stdout.strip().splitlines()
    assert "no alarm over 600 settled rounds" in out[1]
    assert out[-1].startswith("INSUFFICIENT: 600 settled rounds")


def test_tail_reads_only_complete_appended_lines(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.csv"
    path.write_text(HEADER + row(0, 3) + "r1,settled,RR", encoding="utf-8")
    tail = OutcomeTail(path)
    assert [r.round_id for r in tail.poll()] == ["r0"]
    assert tail.poll() == []  # the half-written line waits for its newline
    with path.open("a", encoding="utf-8") as fh:
        fh.write("WW,2,0,1\n" + row(2, 15))
    got = tail.poll()
    assert [(r.round_id, r.reds) for r in got] == [("r1", 2), ("r2", 4)]


def test_each_poll_reads_only_the_bytes_appended_since_the_last(tmp_path: Path) -> None:
    # the work of a poll is the new rows, whatever the length of the file already read
    path = tmp_path / "OUTCOMES.csv"
    path.write_text(HEADER + "".join(row(i, i % 16) for i in range(20_000)), encoding="utf-8")
    tail = OutcomeTail(path)
    assert len(tail.poll()) == 20_000 and tail.offset == path.stat().st_size
    extra = "".join(row(20_000 + i, 7) for i in range(3))
    before = tail.offset
    with path.open("a", encoding="utf-8") as fh:
        fh.write(extra)
    assert [r.round_id for r in tail.poll()] == ["r20000", "r20001", "r20002"]
    assert tail.offset - before == len(extra.encode("utf-8"))


def test_tail_names_the_bad_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.csv"
    path.write_text(HEADER + row(0, 3) + "r1,settled,RRWW,3,0,1\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"OUTCOMES\.csv: line 3, column reds: expected 2"):
        OutcomeTail(path).poll()
    (tmp_path / "B.csv").write_text("bet_id,round_id\n", encoding="utf-8")
    with pytest.raises(RecordError, match="missing column"):
        OutcomeTail(tmp_path / "B.csv").poll()


def test_follow_stops_on_idle_with_a_fake_clock(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.csv"
    path.write_text(HEADER + row(0, 5), encoding="utf-8")
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    seen = follow(path, monitor_design(), idle=2.0, poll=0.5, clock=lambda: now[0], sleep=sleep)
    assert (seen.rounds, seen.settled, seen.alarm) == (1, 1, None) and now[0] == pytest.approx(2.0)
    with pytest.raises(ValueError, match="poll must be > 0 seconds, got 0"):
        follow(path, monitor_design(), idle=1.0, poll=0)


def test_follow_refuses_several_files_and_a_bets_file(tmp_path: Path) -> None:
    a = tmp_path / "a.csv"
    a.write_text(HEADER, encoding="utf-8")
    bets = tmp_path / "BETS.csv"
    bets.write_text(",".join(BET_COLUMNS) + "\n", encoding="utf-8")
    for args, message in (
        ([str(a), str(a)], "--follow watches one OUTCOMES.csv or URL, got 2"),
        ([str(bets)], "not an OUTCOMES.csv"),
        ([str(a), "--idle", "-1"], "--idle must be >= 0, got -1"),
    ):
        proc = audit_follow(*args, timeout=60)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_a_fair_file_written_while_followed_raises_no_alarm_in_20000_rounds(tmp_path: Path) -> None:
    # seed 8 at P(red) 0.5: fair. The monitor's false-alarm bound over a whole record is 0.04 % (its share of the
    # family's 1 %), so a fair seed alarms this rarely; the fixed seed makes this run the same every time.
    path = tmp_path / "OUTCOMES.csv"
    path.write_text(HEADER, encoding="utf-8")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "20000", "0.5"])
    try:
        got = audit_follow(str(path), "--max-rounds", "20000", "--idle", "30", "--status", "2")
    finally:
        writer.wait(timeout=60)
    assert got.returncode == 0, got.stdout + got.stderr
    lines = got.stdout.strip().splitlines()
    assert not [line for line in lines if line.startswith("ALARM")]
    assert "no alarm over 20000 settled rounds; 20000 rounds read (--max-rounds): full audit" in got.stdout
    assert lines[-1].startswith("PASS: none of ")


def test_keep_going_prints_each_alarm_starts_a_new_record_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.csv"
    pats = [int(x) for x in draw_patterns(make_generator(11), 3000, [0.6] * 4)]
    path.write_text(HEADER + "".join(row(i, p) for i, p in enumerate(pats)), encoding="utf-8")
    # the alarms a table that restarts its record after each alarm raises: the vectorised monitor on each rest
    reds = np.bitwise_count(np.array(pats, dtype=np.uint8)).astype(np.int64)
    want: list[int] = []
    start = 0
    while True:
        at = int(first_alarms(reds[start:].reshape(1, -1), monitor_design())[0])
        if at < 0:
            break
        want.append(at)
        start += at
    assert len(want) >= 3
    got = audit_follow(str(path), "--keep-going", "--idle", "0.6", "--status", "0.01")
    assert got.returncode == 1, got.stdout + got.stderr
    lines = got.stdout.strip().splitlines()
    alarms = [line for line in lines if line.startswith("ALARM")]
    assert [int(a.split()[4]) for a in alarms] == want
    assert "record 2)" in alarms[1] and alarms[0].endswith(": a new record starts")
    rest = reds[start:]
    z = (int(rest.sum()) - 2 * len(rest)) / math.sqrt(len(rest))
    status = [line for line in lines if line.startswith("status: ")]
    assert status[-1].startswith(
        f"status: 3,000 rounds read (3,000 settled, {len(rest):,} in this record), last round r2999; z = {z:+.2f} "
    ), status[-1]
    assert status[-1].endswith(f"alarms {len(want)}")
    assert f"{len(want)} alarm(s) over 3000 settled rounds" in "\n".join(lines)
    assert lines[-1].startswith("FAIL: ")


def test_follow_with_json_keeps_stdout_for_the_json_object(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.csv"
    pats = [int(x) for x in draw_patterns(make_generator(9), 600, [0.5] * 4)]
    path.write_text(HEADER + "".join(row(i, p) for i, p in enumerate(pats)) + "r600,void,,,0,600\n", encoding="utf-8")
    got = audit_follow(str(path), "--json", "--idle", "0.5")
    assert got.returncode == 3, got.stderr
    doc = json.loads(got.stdout)
    assert (doc["verdict"], doc["rounds"], doc["settled"], doc["void_or_cancelled"]) == ("INSUFFICIENT", 601, 600, 1)
    assert doc["follow"] == {
        "source": str(path),
        "stopped": "idle",
        "rounds_read": 601,
        "settled": 600,
        "alarms": [],
    }
    assert got.stderr.startswith(f"following {path}: live monitor")


def test_follow_refuses_bad_flags_with_the_flag_named(tmp_path: Path) -> None:
    a = tmp_path / "a.csv"
    a.write_text(HEADER, encoding="utf-8")
    for args, message in (
        ([str(a), "--interval", "0"], "--interval must be > 0 seconds, got 0"),
        ([str(a), "--max-rounds", "-5"], "--max-rounds must be >= 0, got -5"),
        ([str(a), "--token", "x"], "--token is for --follow URL, not a file"),
        (["ftp://host/OUTCOMES.csv"], "a URL must start with http:// or https://"),
    ):
        got = audit_follow(*args, timeout=60)
        assert got.returncode == 2 and message in got.stderr, (args, got.stderr)
    for flag in (["--keep-going"], ["--max-rounds", "5"], ["--token", "t"], ["--interval", "1"]):
        got = subprocess.run(
            [sys.executable, "-m", "harness.cli", "audit", str(a), *flag],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert got.returncode == 2 and f"{flag[0]} needs --follow" in got.stderr, (flag, got.stderr)
