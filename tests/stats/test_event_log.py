"""Outcome streams from the simulator's JSON Lines event log (only ``round_ended`` events count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.stats.audit import audit_files
from harness.stats.event_log import is_event_log, read_event_log
from harness.stats.readers import RecordError
from harness.stats.settlement import draw_patterns, make_generator
from simulator.eventlog import EventLog
from simulator.events import RoundEnded, RoundOpened, RoundStatus
from tests.stats.stats_helpers import faces_of


def write_log(path: Path, patterns: list[int], void_every: int = 0) -> Path:
    log = EventLog()
    for i, pattern in enumerate(patterns):
        log.append(RoundOpened(float(i), i, float(i) + 0.5))
        if void_every and i % void_every == void_every - 1:
            log.append(RoundEnded(float(i) + 0.9, i, RoundStatus.VOID, "SH-5", None, None, 1))
        else:
            faces = faces_of(pattern)
            log.append(RoundEnded(float(i) + 0.9, i, RoundStatus.SETTLED, None, faces, faces.count("R"), 0))
    with path.open("w", encoding="utf-8") as fh:
        log.write_jsonl(fh)
    return path


def test_rounds_come_from_round_ended_events_only(tmp_path: Path) -> None:
    path = write_log(tmp_path / "events.jsonl", [0b1111, 0b0001, 0b0110], void_every=3)
    assert is_event_log(path)
    rounds = read_event_log(path)
    assert [(r.round_id, r.status, r.faces, r.reds, r.reshakes) for r in rounds] == [
        ("0", "settled", "RRRR", 4, 0),
        ("1", "settled", "RWWW", 1, 0),
        ("2", "void", None, None, 1),
    ]


def test_a_simulated_fair_log_is_audited_like_a_csv(tmp_path: Path) -> None:
    patterns = [int(p) for p in draw_patterns(make_generator(41), 3_000, [0.5] * 4)]
    result = audit_files([write_log(tmp_path / "events.jsonl", patterns, void_every=50)])
    # nothing rejected, but 2,940 settled rounds are below the certification minimum
    assert result.kind == "events" and result.fairness.passed and result.verdict == "INSUFFICIENT"
    assert (result.fairness.settled, result.fairness.voided) == (2_940, 60)


def test_a_bad_event_line_is_named(tmp_path: Path) -> None:
    path = write_log(tmp_path / "events.jsonl", [1, 2])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "round_exploded", "t": 3.0}\n')
    with pytest.raises(RecordError, match=r"events\.jsonl: line 5: unknown event kind 'round_exploded'"):
        read_event_log(path)


def test_a_log_without_rounds_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"kind": "round_opened", "t": 0.0, "round": 1, "deadline": 1.0}\n')
    with pytest.raises(RecordError, match="no round_ended events"):
        read_event_log(path)
