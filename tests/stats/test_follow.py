"""``audit --follow``: a real writer process appends rounds while the real CLI follows the file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.stats.fairness import monitor_design
from harness.stats.follow import OutcomeTail, follow
from harness.stats.readers import BET_COLUMNS, OUTCOME_COLUMNS, RecordError
from harness.stats.settlement import draw_patterns, make_generator
from tests.stats.stats_helpers import faces_of

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
        ([str(a), str(a)], "--follow watches one OUTCOMES.csv, got 2 files"),
        ([str(bets)], "not an OUTCOMES.csv"),
        ([str(a), "--idle", "-1"], "--idle must be >= 0 seconds, got -1"),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "harness.cli", "audit", "--follow", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
