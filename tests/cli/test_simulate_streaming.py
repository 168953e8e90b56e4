"""``xocdia-hil simulate`` reads the run in batches as it goes: its files and summary are byte for byte those of
the whole log written and summarised at the end, and the log it holds never grows past one batch."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.cli import main, simulate
from harness.files import load_profile
from simulator import Table
from simulator.eventlog import EventLog
from simulator.summary import summarize


def test_batches_give_the_whole_logs_files_and_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(simulate, "BATCH_ROUNDS", 7)
    held: list[int] = []
    take = EventLog.take

    def watched(log: EventLog) -> EventLog:
        held.append(len(log))
        return take(log)

    monkeypatch.setattr(EventLog, "take", watched)
    events, outcomes = tmp_path / "e.jsonl", tmp_path / "o.csv"
    args = ["--rounds", "60", "--seed", "5", "--profile", "chaotic", "--json"]
    assert main(["simulate", *args, "--events", str(events), "--outcomes", str(outcomes)]) == 0
    streamed = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(EventLog, "take", take)

    whole = Table(load_profile("chaotic"), seed=5)
    whole.run(60)
    lines, rows = io.StringIO(), io.StringIO()
    whole.log.write_jsonl(lines)
    simulate.write_outcomes_csv(whole, rows)
    assert events.read_text(encoding="utf-8") == lines.getvalue()
    assert outcomes.read_text(encoding="utf-8") == rows.getvalue()
    assert streamed == summarize(whole.log).to_dict(5, "chaotic")
    assert len(held) == 9  # every 7 rounds, and at the end
    assert max(held) < len(whole.log) / 5  # the table never held more than a batch
