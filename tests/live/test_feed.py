"""The feed's records, its order and its JSON Lines form."""

from __future__ import annotations

import io
import threading

import pytest

from harness.feed import Feed, FeedEvent, FeedKind, JsonlSink, read_feed


def test_events_are_numbered_in_order_and_never_go_back_in_time() -> None:
    feed = Feed()
    a = feed.publish(FeedKind.ROUND, 2.0, round=1, state="opened")
    b = feed.publish(FeedKind.ROUND, 1.0, round=1, state="closed")  # a clock that went back is held at the last time
    assert (a.seq, b.seq) == (0, 1)
    assert b.t == 2.0
    assert [e.seq for e in feed.since(1)] == [1]


def test_a_new_rig_continues_the_timeline_after_the_last_event() -> None:
    feed = Feed()
    feed.publish(FeedKind.BENCH, 0.0, bench="a")
    feed.publish(FeedKind.ROUND, 5.0, round=1, state="opened")
    feed.continue_from(gap_s=1.0)
    assert feed.publish(FeedKind.BENCH, 0.0, bench="b").t == 6.0


def test_json_lines_round_trip() -> None:
    out = io.StringIO()
    feed = Feed(keep=False)
    sink = JsonlSink(out)
    feed.sinks.append(sink)
    feed.publish(FeedKind.VERDICT, 1.5, round="3", ok=True, expected="void (SH-5)", differences=[])
    feed.publish(FeedKind.FRAME, 1.6, line="bowl", dir="tx", msg="OFF touch=True token=2")
    sink.close()
    assert feed.events == []  # keep=False: written, not kept
    events = read_feed(out.getvalue().splitlines())
    assert [e.kind for e in events] == [FeedKind.VERDICT, FeedKind.FRAME]
    assert events[0].data["expected"] == "void (SH-5)"
    assert events[1].t == 1.6
    assert FeedEvent.from_json(events[0].to_json()) == events[0]


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
