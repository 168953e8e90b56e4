"""The feed's records, its order and its JSON Lines form."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from harness.feed import Feed, FeedEvent, FeedKind, JsonlSink, read_feed


def test_events_are_numbered_in_order_and_never_go_back_in_time() -> None:
    feed = Feed()
    feed.publish(FeedKind.ROUND, 2.0, round=1, state="opened")
    feed.publish(FeedKind.ROUND, 1.0, round=1, state="closed")  # a clock that went back is held at the last time
    a, b = feed.events
    assert (a.seq, b.seq) == (0, 1)
    assert b.t == 2.0 and b.data == {"round": 1, "state": "closed"}
    assert [e.seq for e in feed.since(1)] == [1]


def test_a_new_rig_continues_the_timeline_after_the_last_event() -> None:
    feed = Feed()
    feed.publish(FeedKind.BENCH, 0.0, bench="a")
    feed.publish(FeedKind.ROUND, 5.0, round=1, state="opened")
    feed.continue_from(gap_s=1.0)
    feed.publish(FeedKind.BENCH, 0.0, bench="b")
    assert feed.events[-1].t == 6.0


def test_json_lines_round_trip() -> None:
    out = io.StringIO()
    feed = Feed(keep=False)
    sink = JsonlSink(out)
    feed.writers.append(sink)
    feed.publish(FeedKind.VERDICT, 1.5, round="3", ok=True, expected="void (SH-5)", differences=[])
    feed.publish(FeedKind.FRAME, 1.6, line="bowl", dir="tx", msg="OFF touch=True token=2")
    sink.close()
    assert feed.events == []  # keep=False: written, not kept
    events = read_feed(out.getvalue().splitlines())
    assert [e.kind for e in events] == [FeedKind.VERDICT, FeedKind.FRAME]
    assert events[0].data["expected"] == "void (SH-5)"
    assert events[1].t == 1.6
    assert FeedEvent.from_json(events[0].to_json()) == events[0]


def test_a_line_is_written_as_docs_live_md_shows_it() -> None:
    feed = Feed()
    for _ in range(125):
        feed.publish(FeedKind.NOTE, 0.0, who="x", what="y")
    feed.publish(FeedKind.VERDICT, 3.32, round="3", table_round=3, ok=True, expected="void (SH-5)", differences=[])
    documented = (
        '{"seq":125,"t":3.32,"kind":"verdict","data":{"round":"3","table_round":3,"ok":true,'
        '"expected":"void (SH-5)","differences":[]}}'
    )
    assert feed.lines[-1] == documented
    assert feed.events[-1].to_json() == documented


def test_times_are_kept_to_the_microsecond_and_odd_values_written_as_text() -> None:
    feed = Feed()
    feed.publish(FeedKind.NOTE, 1.23456789, who="x", what="y", detail=Path("a/b"))
    (event,) = feed.events
    assert event.t == 1.234568 and event.data["detail"] == "a/b"


def test_event_sinks_and_line_sinks_see_the_same_events() -> None:
    feed = Feed(keep=False)
    seen: list[FeedEvent] = []
    lines: list[str] = []
    feed.sinks.append(seen.append)
    feed.writers.append(lines.append)
    feed.publish(FeedKind.BET, 0.5, player="alice", bet="red", stake=100, accepted=True)
    feed.publish_last(FeedKind.END, summary="done")
    assert [FeedEvent.from_json(line) for line in lines] == seen
    assert [(e.seq, e.t, e.kind) for e in seen] == [(0, 0.5, FeedKind.BET), (1, 0.5, FeedKind.END)]


def test_nobody_listening_only_counts() -> None:
    feed = Feed(keep=False)
    feed.publish(FeedKind.NOTE, 0.0, who="x", what="y")
    assert feed.count == 1 and feed.lines == [] and feed.events == []


def test_a_sink_writes_whole_lines_in_batches_and_everything_on_close() -> None:
    out = io.StringIO()
    sink = JsonlSink(out, flush_every=3)
    feed = Feed(keep=False)
    feed.writers.append(sink)
    for i in range(4):
        feed.publish(FeedKind.NOTE, float(i), who="x", what=str(i))
    assert len(out.getvalue().splitlines()) == 3  # the fourth waits for the next batch
    sink.close()
    assert [e.data["what"] for e in read_feed(out.getvalue().splitlines())] == ["0", "1", "2", "3"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "not JSON"),
        ("[1]", "not a JSON object"),
        ('{"seq": "1", "t": 0, "kind": "round"}', "seq must be"),
        ('{"seq": 1, "t": "x", "kind": "round"}', "t must be"),
        ('{"seq": 1, "t": 0, "kind": "nope"}', "kind must be one of"),
        ('{"seq": 1, "t": 0, "kind": "round", "data": []}', "data must be"),
    ],
)
def test_a_bad_line_is_named(line: str, problem: str) -> None:
    with pytest.raises(ValueError, match=rf"run.jsonl line 2: {problem}"):
        read_feed(["", line], "run.jsonl")


def test_readers_on_other_threads_see_a_prefix() -> None:
    feed = Feed()
    seen: list[int] = []

    def read() -> None:
        for _ in range(200):
            seen.append(len(feed.since(0)))

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(500):
        feed.publish(FeedKind.NOTE, i * 0.01, who="x", what="y")
    reader.join()
    assert seen == sorted(seen)
    assert [e.seq for e in feed.since(0)] == list(range(500))
