"""The live page's server: its routes over a feed, and its address option."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator

import pytest

from harness.feed import Feed, FeedKind
from harness.live.server import LiveAddressError, LiveServer, parse_address


def _feed(closed: bool = True) -> Feed:
    feed = Feed()
    feed.publish(FeedKind.BENCH, 0.0, bench="in-process")
    feed.publish(FeedKind.VERDICT, 1.0, round="1", table_round=1, ok=True, expected="void (SH-5)", differences=[])
    if closed:
        feed.close()
    return feed


@pytest.fixture
def server() -> Iterator[LiveServer]:
    live = LiveServer(_feed(), "127.0.0.1", 0, mode="replay", speed=5.0, title="run.jsonl")
    live.start()
    yield live
    live.stop()


def _get(server: LiveServer, path: str, headers: dict[str, str] | None = None) -> str:
    request = urllib.request.Request(server.url + path.lstrip("/"), headers=headers or {})
    with urllib.request.urlopen(request, timeout=10) as reply:
        assert reply.status == 200
        return str(reply.read().decode("utf-8"))


def test_page_info_and_whole_feed(server: LiveServer) -> None:
    assert "live.js" in _get(server, "/")
    assert "EventSource" in _get(server, "/static/live.js")
    assert _get(server, "/static/live.css")
    info = json.loads(_get(server, "/info"))
    assert info == {"mode": "replay", "speed": 5.0, "title": "run.jsonl", "events": 2, "closed": True, "rounds": 0}
    assert [e["kind"] for e in json.loads(_get(server, "/feed.json"))] == ["bench", "verdict"]


def test_the_event_stream_resumes_from_a_number_and_ends_when_the_feed_closes(server: LiveServer) -> None:
    body = _get(server, "/feed?from=1")
    data = [json.loads(line[6:]) for line in body.splitlines() if line.startswith('data: {"')]
    assert [e["seq"] for e in data] == [1]
    assert "event: closed" in body
    resumed = _get(server, "/feed", {"Last-Event-ID": "0"})
    assert "id: 1\n" in resumed and "id: 0\n" not in resumed


def test_a_busy_port_is_named(server: LiveServer) -> None:
    assert server.port > 0 and server.url == f"http://127.0.0.1:{server.port}/"
    with pytest.raises(LiveAddressError, match="cannot listen"):
        LiveServer(_feed(), "127.0.0.1", server.port).start()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("8080", ("127.0.0.1", 8080)), ("0.0.0.0:0", ("0.0.0.0", 0)), ("[::1]:9000", ("::1", 9000))],
)
def test_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["", "host:", "host:x", "70000"])
def test_bad_addresses_are_named(text: str) -> None:
    with pytest.raises(LiveAddressError, match="--live"):
        parse_address(text)
