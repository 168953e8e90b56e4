"""Ground-truth events: frozen, JSON Lines out and back, and clear errors for a bad line."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest

from simulator import read_jsonl
from simulator.eventlog import EventLog
from simulator.events import EVENT_BY_KIND, RoundEnded, RoundStatus
from simulator.profile import profile_from_mapping
from tests.simulator.sim_helpers import run_table, shipped


def chaotic_log(seed: int = 3, rounds: int = 120) -> EventLog:
    log = EventLog()
    log.extend(run_table(profile_from_mapping(shipped("chaotic")), seed, rounds, players=10))
    return log


def test_events_are_frozen() -> None:
    event = RoundEnded(1.0, 1, RoundStatus.SETTLED, None, "RRWW", 2, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.reds = 3  # type: ignore[misc]


def test_jsonl_round_trip_gives_equal_events_at_microsecond_precision() -> None:
    log = chaotic_log()
    assert {e.kind for e in log} >= {"round_opened", "round_ended", "revealed", "bet_sent", "reshake"}
    out = io.StringIO()
    log.write_jsonl(out)
    text = out.getvalue()
    back = read_jsonl(text.splitlines())
    assert len(back) == len(log)
    for original, parsed in zip(log, back, strict=True):
        # Times are written with 6 decimals (µs); every other field comes back exactly.
        assert type(parsed) is type(original)
        assert parsed.to_dict() == original.to_dict()
    again = io.StringIO()
    rewritten = EventLog()
    rewritten.extend(back)
    rewritten.write_jsonl(again)
    assert again.getvalue() == text


def test_each_line_is_numbered_and_names_its_kind_first() -> None:
    out = io.StringIO()
    chaotic_log(rounds=5).write_jsonl(out)
    lines = out.getvalue().splitlines()
    for seq, line in enumerate(lines):
        record = json.loads(line)
        assert list(record)[:2] == ["seq", "kind"]
        assert record["seq"] == seq
        assert record["kind"] in EVENT_BY_KIND


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: "),
        ('{"kind": "teleported", "t": 1}', "line 2: unknown event kind 'teleported'"),
        ('{"kind": "reshake", "t": 1, "round": 1, "count": 1}', "line 2: reshake: missing fields ['reason']"),
        (
            '{"kind": "tokens_placed", "t": 1, "round": 1, "x": 2}',
            "line 2: tokens_placed: missing fields [], unexpected fields ['x']",
        ),
        ('{"kind": "dropped", "t": 1, "round": 1, "shake": 1, "item": "cup", "token": null}', "line 2: "),
        ('{"kind": "reshake", "t": 1, "round": 1, "count": 1, "reason": null}', "line 2: "),
        ('{"kind": "tokens_placed", "t": 1, "seq": 3, "x": 2}', "line 2: tokens_placed: missing fields ['round']"),
        ('{"kind": ["round_ended"], "t": 1}', "line 2: unknown event kind ['round_ended']"),
        ("[1, 2]", "line 2: expected a JSON object, got list"),
        ('"round_ended"', "line 2: expected a JSON object, got str"),
    ],
)
def test_a_bad_line_is_named_by_number(line: str, message: str) -> None:
    good = '{"seq": 0, "kind": "tokens_placed", "t": 0.5, "round": 1}'
    with pytest.raises(ValueError) as info:
        read_jsonl([good, line])
    assert str(info.value).startswith(message)


def test_blank_lines_are_skipped() -> None:
    events = read_jsonl(["", '{"kind": "tokens_placed", "t": 0.5, "round": 1}', "   "])
    assert [e.to_dict() for e in events] == [{"kind": "tokens_placed", "t": 0.5, "round": 1}]
