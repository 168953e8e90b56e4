"""``run --record``/``--json`` and ``xocdia-hil replay``: the feed file, its summary, a serial trace folded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.feed import FeedKind, read_feed

BENCH = str(Path(__file__).resolve().parents[2] / "fixtures" / "benches" / "in-process.yaml")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("feed")
    script = folder / "touch.yaml"
    script.write_text("- {round: 2, touch: true}\n", encoding="utf-8")
    record = folder / "run.jsonl"
    args = ["run", "--bench", BENCH, "--rounds", "3", "--players", "2", "--script", str(script)]
    return record, " ".join([*args, "--record", str(record)])


def test_run_records_its_feed_and_prints_json(recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    record, argv = recorded
    assert main([*argv.split(), "--json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["rounds"] == 3 and summary["ends"] == {"settled": 2, "void SH-5": 1}
    assert summary["oracle"]["passed"] is True and summary["oracle"]["rounds_checked"] == 3
    assert f"feed: {record}" in err
    events = read_feed(record.read_text(encoding="utf-8").splitlines())
    verdicts = [e.data for e in events if e.kind == FeedKind.VERDICT and not e.data.get("final")]
    assert [v["expected"].split()[0] for v in verdicts] == ["settled", "void", "settled"]
    assert events[-1].kind == FeedKind.END and events[-1].data["summary"].startswith("oracle: PASS")


def test_a_run_records_the_seed_it_ran_with(tmp_path: Path) -> None:
    record = tmp_path / "seeded.jsonl"
    assert (
        main(["run", "--bench", BENCH, "--rounds", "1", "--players", "1", "--seed", "7", "--record", str(record)]) == 0
    )
    events = read_feed(record.read_text(encoding="utf-8").splitlines())
    assert [e.data["seed"] for e in events if e.kind == FeedKind.BENCH] == [7]  # not the bench file's 20261130


def test_naming_the_bench_s_own_profile_keeps_the_bench_s_timing(capsys: pytest.CaptureFixture[str]) -> None:
    # the in-process bench's certification profile needs the bench file's 1 s betting period: its own 0.25 s is
    # shorter than its dealer takes to place the bowl, so the server would void every round (SH-4a)
    argv = ["run", "--bench", BENCH, "--rounds", "3", "--players", "1", "--profile", "certification", "--json"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ends"] == {"settled": 3} and summary["oracle"]["passed"] is True


def test_replay_summarises_a_recorded_run(recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    record, argv = recorded
    if not record.exists():
        assert main(argv.split()) == 0
    capsys.readouterr()
    assert main(["replay", str(record)]) == 0
    out = capsys.readouterr().out
    assert "round 2: ok   void (SH-5)" in out
    assert "oracle: PASS: 3 rounds" in out
    assert main(["replay", str(record), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is True and [r["ok"] for r in data["rounds"]] == [True, True, True]


def test_replay_folds_heartbeats_of_a_serial_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace.jsonl"
    chunks = [b"$1 0 BOWL HB*0000\r\n", b"$1 2 BOWL ON round=1*9E10\r\n", b"$1 0 SRV ACK of=2*C448\r\n"]
    trace.write_text(
        "".join(
            json.dumps({"t": i * 0.5, "port": "BOWL", "dir": "tx", "hex": c.hex()}) + "\n" for i, c in enumerate(chunks)
        )
    )
    assert main(["replay", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "BOWL ON round=1" in out and "HB" not in out.replace("heartbeats", "")
    assert "(3 chunks; 2 of heartbeats and acknowledgements only, folded)" in out


def test_a_file_that_is_no_feed_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"seq": 0, "t": 0, "kind": "nope"}\n')
    assert main(["replay", str(bad)]) == 2
    assert "bad.jsonl line 1: kind must be one of" in capsys.readouterr().err


def test_record_to_a_folder_that_does_not_exist_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--bench", BENCH, "--rounds", "1", "--record", str(tmp_path / "no" / "run.jsonl")]
    assert main(argv) == 2
    assert "--record" in capsys.readouterr().err


def test_inject_and_campaign_record_faults_and_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schedule = str(Path(BENCH).parents[1] / "faults" / "chaos.yaml")
    record = tmp_path / "inject.jsonl"
    argv = ["inject", "--bench", BENCH, "--schedule", schedule, "--seed", "7", "--manifest", str(tmp_path / "m.json")]
    assert main([*argv, "--record", str(record), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] is True and result["faults"]
    events = read_feed(record.read_text(encoding="utf-8").splitlines())
    ops = {e.data["op"] for e in events if e.kind == FeedKind.FAULT}
    assert {"fault", "heal"} <= ops
    final = [e.data for e in events if e.kind == FeedKind.VERDICT and e.data.get("final")]
    assert final and final[0]["ok"] and final[0]["summary"].startswith("checkers: PASS")
    assert [e.t for e in events] == sorted(e.t for e in events)

    record = tmp_path / "campaign.jsonl"
    argv = ["campaign", "--bench", BENCH, "--schedule", schedule, "--seeds", "1-2", "--out", str(tmp_path / "out")]
    assert main([*argv, "--record", str(record), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["passed"] == 2
    events = read_feed(record.read_text(encoding="utf-8").splitlines())
    seeds = [e.data["scenario"] for e in events if e.kind == FeedKind.VERDICT and "scenario" in e.data]
    assert seeds == ["seed 1", "seed 2"]
    assert [e.data["label"] for e in events if e.kind == FeedKind.BENCH] == ["seed 1", "seed 2"]
    assert main([*argv, "--workers", "2", "--live", "0"]) == 2
    assert "use --workers 1" in capsys.readouterr().err
