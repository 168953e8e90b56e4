"""The bias monitor on a command's feed (:class:`harness.live.monitor.FeedMonitor`): it alarms where the statistics'
own :class:`~harness.stats.monitor.BiasMonitor` fed the same settled rounds does, once per bench, and its note
follows, on the record, the round end that raised it."""

from __future__ import annotations

import io
import json

import numpy as np

from harness.feed import Feed, FeedKind, JsonlSink
from harness.live.monitor import FeedMonitor
from harness.stats.fairness import monitor_design
from harness.stats.monitor import BiasMonitor


def _alarm_after(reds: list[int | None]) -> int | None:
    """The settled round at which the statistics' monitor, at the audit's design, alarms on ``reds`` (None: never)."""
    alarm = BiasMonitor(monitor_design()).feed(reds)
    return None if alarm is None else alarm.round


def _recorded(*tables: list[str]) -> list[dict[str, object]]:
    """The record of a feed (a JSON Lines file, the monitor attached) on which each table's rounds end with the
    faces given ("" for a void round), each table its own bench."""
    out = io.StringIO()
    feed = Feed(keep=False)
    sink = JsonlSink(out, flush_every=1)
    feed.writers.append(sink)
    FeedMonitor(feed).attach()
    t = 0.0
    for faces in tables:
        feed.continue_from()
        feed.publish(FeedKind.BENCH, 0.0, bench="in-process")
        for number, f in enumerate(faces, start=1):
            t += 1.0
            status = "settled" if f else "void"
            feed.publish(FeedKind.ROUND, t, round=number, state="opened", deadline=t + 0.5)
            feed.publish(FeedKind.ROUND, t + 0.5, round=number, state="ended", status=status, clause="", faces=f)
    sink.close()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _alarms(events: list[dict[str, object]]) -> list[int]:
    return [i for i, e in enumerate(events) if e["kind"] == "note" and e["data"]["who"] == "monitor"]  # type: ignore[index]


def test_a_red_table_alarms_where_the_statistics_monitor_does_once_after_the_round_that_raised_it() -> None:
    faces = ["RRRR" if n % 5 else "" for n in range(1, 121)]  # every fifth round void: skipped
    events = _recorded(faces)
    settled = _alarm_after([f.count("R") if f else None for f in faces])
    assert settled is not None and settled < 96
    (at,) = _alarms(events)
    note, before = events[at]["data"], events[at - 1]
    assert isinstance(note, dict) and note["what"] == "alarm" and note["favours"] == "red"
    assert note["settled"] == settled
    assert before["kind"] == "round" and before["data"]["state"] == "ended"  # type: ignore[index]
    assert before["data"]["round"] == note["round"]  # type: ignore[index]
    table_round = next(n for n in range(1, 121) if sum(1 for f in faces[:n] if f) == settled)
    assert note["round"] == table_round
    assert "bias toward red" in str(note["detail"]) and "the audit of these rounds fails" in str(note["detail"])


def test_each_bench_is_a_record_of_its_own() -> None:
    n = _alarm_after([4] * 1000)
    assert n is not None
    short = ["RRRR"] * (n - 1)
    assert _alarms(_recorded(short, short)) == []  # together they would alarm; apart, neither does
    assert len(_alarms(_recorded(["RRRR"] * n))) == 1
    assert len(_alarms(_recorded(["WWWW"] * n, ["RRRR"] * n))) == 2  # a white-favouring one too, and again after


def test_a_fair_table_raises_no_alarm() -> None:
    rng = np.random.default_rng(20261202)
    faces = ["".join("R" if red else "W" for red in row) for row in rng.random((3000, 4)) < 0.5]
    assert _alarm_after([f.count("R") for f in faces]) is None
    assert _alarms(_recorded(faces)) == []
