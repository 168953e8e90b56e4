"""xocdia-jsonl's dialogue in virtual time: the harness's reader end against the reference server's JsonlLine (and
against the harness's own server end): hello, acknowledgement, retransmission, heartbeats, silence, and a dropped
connection with the unacknowledged read re-sent under its own seq and suppressed when the server already had it."""

from __future__ import annotations

import math
from typing import Any

import pytest

from gameserver.dialects import make_line
from gameserver.dialects.base import LineConfigError
from gameserver.dialects.jsonl import JsonlLine
from gameserver.protocol import BadFrame as ServerBadFrame
from gameserver.protocol import Frame as ServerFrame
from harness.wire.dialects import EndSettings, load_dialect, plan_lines
from harness.wire.dialects.jsonl import FAST_RETRIES, RETRY_S, JsonlReaderDialect, ReaderEnd, ReaderServerEnd
from harness.wire.frame_errors import BadFrame
from harness.wire.line_events import Delivered, LinkChanged, Refused, Rejected
from harness.wire.messages import Frame, LampOpen, ReaderRearranged, Result, Source

DIALECT = load_dialect("xocdia-jsonl")
assert isinstance(DIALECT, JsonlReaderDialect)
LINE = next(line for line in plan_lines(DIALECT) if line.roles == (Source.READER,))
SETTINGS = EndSettings(silence_s=3.0)


def _reader(settings: EndSettings = SETTINGS) -> ReaderEnd:
    end = DIALECT.device_end(LINE, settings)
    assert isinstance(end, ReaderEnd)
    return end


class Wire:
    """A reader end and a server line joined by a perfect wire that can be cut; virtual time only advances by
    deadlines (``run``), never by a fixed step, so a busy loop shows up as a run that does not finish."""

    def __init__(self, reader: ReaderEnd, line: Any, now: float = 0.0) -> None:
        self.reader, self.line, self.now = reader, line, now
        self.delivered: list[Any] = []
        self.events: list[Any] = []
        self.connected = False
        self.steps = 0

    def connect(self) -> None:
        self.connected = True
        self.reader.open(self.now)

    def drop(self) -> None:
        """The connection is gone: what either side had not written yet is lost with it."""
        self.connected = False
        self.reader.close()
        self.events += [e for _src, e in self.reader.take_events()]
        self.reader.take_output()
        self.line.take_output()

    def exchange(self) -> None:
        for _ in range(8):
            up, down = self.reader.take_output(), self.line.take_output()
            if not self.connected:
                return
            if not up and not down:
                return
            if up:
                self.delivered += _feed(self.line, up, self.now)
            if down:
                self.events += [e for _src, e in self.reader.receive(down, self.now)]

    def deadline(self) -> float:
        times = [self.line.next_deadline()]
        due = self.reader.next_deadline()
        if due is not None and self.connected:
            times.append(due)
        return float(min(t for t in times if t is not None))

    def run(self, until: float) -> None:
        self.exchange()
        while True:
            due = self.deadline()
            if due > until:
                self.now = until
                return
            assert due >= self.now, "a deadline in the past: the owner would spin"
            self.now = due
            self.steps += 1
            assert self.steps < 10_000, "too many wake-ups: a busy loop in virtual time"
            if self.connected:
                self.events += [e for _src, e in self.reader.poll(self.now)]
            _tick(self.line, self.now)
            self.exchange()

    def report(self, message: Any, round_: str = "12", at: int = 1000) -> None:
        self.reader.send(Source.READER, message, self.now, round_, at)
        self.exchange()


def _feed(line: Any, data: bytes, now: float) -> list[Any]:
    if isinstance(line, JsonlLine):
        return list(line.feed(data, now))
    return list(line.receive(data, now))


def _tick(line: Any, now: float) -> list[Any]:
    return list(line.tick(now))


def _server_line(now: float = 0.0) -> JsonlLine:
    line = make_line("xocdia-jsonl", "reader", ("READER",), now, 3.0)
    assert isinstance(line, JsonlLine)
    return line


def _harness_line(now: float = 0.0) -> ReaderServerEnd:
    end = DIALECT.server_end(LINE, SETTINGS, now)
    assert isinstance(end, ReaderServerEnd)
    return end


LINES = [pytest.param(_server_line, id="gameserver"), pytest.param(_harness_line, id="harness")]


def _kinds(delivered: list[Any]) -> list[str]:
    out = []
    for item in delivered:
        if isinstance(item, ServerFrame):
            out.append(f"{item.type}:{item.seq}")
        elif isinstance(item, Frame):
            out.append(f"{item.message.TYPE}:{item.seq}")
        else:
            out.append(f"bad:{item.kind if isinstance(item, ServerBadFrame) else item.reason.value}")
    return out


@pytest.mark.parametrize("make", LINES)
def test_hello_then_reads_delivered_once_in_order(make: Any) -> None:
    wire = Wire(_reader(), make())
    wire.connect()
    wire.report(Result("RWRW", False), "12", 5000)
    wire.report(ReaderRearranged("RWWR"), "12", 5400)
    wire.run(0.5)
    assert _kinds(wire.delivered) == ["HELLO:1", "RESULT:2", "REARRANGED:3"]
    assert [type(e) for e in wire.events if not isinstance(e, LinkChanged)] == [Delivered, Delivered, Delivered]
    assert wire.reader.pending() == 0
    first = wire.delivered[1]
    if isinstance(first, ServerFrame):  # the gateway's words: round tag and device time
        assert first.fields == (("faces", "RWRW"), ("overlap", "0"), ("round", "12"), ("at", "5000"))
        assert (first.round_tag, first.device_time_ms) == ("12", 5000)
    else:
        assert (first.message, first.round, first.at) == (Result("RWRW", False), "12", 5000)


@pytest.mark.parametrize("make", LINES)
@pytest.mark.parametrize("server_had_it", [True, False], ids=["ack-lost", "read-lost"])
def test_dropped_connection_resends_the_read_under_its_own_seq(make: Any, server_had_it: bool) -> None:
    wire = Wire(_reader(), make())
    wire.connect()
    wire.run(0.1)
    wire.reader.send(Source.READER, Result("RRWW", False), wire.now, "12", 5000)
    out = wire.reader.take_output()
    assert b'"seq":2' in out
    if server_had_it:  # the server got the read, but its ack died with the connection
        wire.delivered += _feed(wire.line, out, wire.now)
    wire.drop()
    wire.now += 2.0
    wire.connect()  # a new connection: empty line, hello under the next seq, then the read again as seq 2
    sent = wire.reader.take_output()
    assert sent.startswith(b"\n") and b'"type":"hello","seq":3' in sent
    wire.delivered += _feed(wire.line, sent, wire.now)
    wire.exchange()
    wire.run(wire.now + 0.5)
    wire.report(Result("WWWW", False), "13", 9000)
    wire.run(wire.now + 0.5)
    assert _kinds(wire.delivered) == ["HELLO:1", "RESULT:2", "RESULT:4"]  # a reconnect's hello is not news
    delivered_reads = [e for e in wire.events if isinstance(e, Delivered) and isinstance(e.message, Result)]
    assert [e.seq for e in delivered_reads] == [2, 4]
    assert wire.reader.pending() == 0


@pytest.mark.parametrize("make", LINES)
def test_half_written_line_at_the_drop_does_not_swallow_the_hello(make: Any) -> None:
    wire = Wire(_reader(), make())
    wire.connect()
    wire.run(0.1)
    wire.reader.send(Source.READER, Result("RRWW", False), wire.now, "12", 5000)
    out = wire.reader.take_output()
    wire.delivered += _feed(wire.line, out[:30], wire.now)  # the connection broke mid-line
    wire.drop()
    wire.connect()
    wire.run(wire.now + 0.5)
    assert _kinds(wire.delivered) == ["HELLO:1", "bad:syntax", "RESULT:2"]


@pytest.mark.parametrize("make", LINES)
def test_a_restarted_reader_starts_a_new_run(make: Any) -> None:
    line = make()
    wire = Wire(_reader(), line)
    wire.connect()
    wire.report(Result("RRRR", False), "1", 100)
    wire.report(Result("WWWW", False), "2", 200)
    wire.run(0.5)
    wire.drop()
    fresh = Wire(_reader(), line, wire.now + 1.0)  # power-cycled: its numbers start at 1 again
    fresh.connect()
    fresh.report(Result("RWRW", False), "3", 50)
    fresh.run(fresh.now + 0.5)
    assert _kinds(wire.delivered) == ["HELLO:1", "RESULT:2", "RESULT:3"]
    assert _kinds(fresh.delivered) == ["HELLO:1", "RESULT:2"]  # seq 2 again, but of the new run: delivered


@pytest.mark.parametrize("make", LINES)
def test_retransmitted_hello_is_not_a_new_run(make: Any) -> None:
    line = make()
    wire = Wire(_reader(), line)
    wire.connect()
    hello = wire.reader.take_output()
    first = _feed(line, hello, 0.0)
    again = _feed(line, hello, 0.01)  # its ack was lost: the same hello again
    assert _kinds(first) == ["HELLO:1"] and again == []


@pytest.mark.parametrize("make", LINES)
def test_a_refused_read_is_not_retransmitted(make: Any) -> None:
    wire = Wire(_reader(), make())
    wire.connect()
    wire.run(0.1)
    bad = b'{"v":1,"src":"READER","type":"rearranged","seq":2,"faces":"RWWR","confidence":[1,0.1,1,1]}\n'
    wire.reader.send(Source.READER, ReaderRearranged("RWWR"), wire.now, "12", 100)
    wire.reader.take_output()
    wire.delivered += _feed(wire.line, bad, wire.now)  # the reader's camera was unsure of token 1
    wire.exchange()
    assert _kinds(wire.delivered) == ["HELLO:1", "bad:field"]
    assert [type(e) for e in wire.events if not isinstance(e, LinkChanged)] == [Delivered, Refused]
    assert wire.reader.pending() == 0


def test_retransmission_then_slow_retries_and_link_down() -> None:
    reader = _reader()
    reader.open(0.0)
    reader.take_output()
    reader.receive(b'{"v":1,"src":"SRV","type":"ack","of":1}\n', 0.0)  # hello acknowledged; the link is up
    reader.send(Source.READER, Result("RWRW", False), 0.0, "1", 10)
    first = reader.take_output()
    times, now = [], 0.0
    while now < 4.0:
        due = reader.next_deadline()
        assert due is not None and due > now
        now = due
        events = [e for _s, e in reader.poll(now)]
        if reader.take_output().startswith(first):
            times.append(round(now, 6))
        if any(isinstance(e, LinkChanged) and not e.up for e in events):
            down_at = now
    fast = [round(RETRY_S * k, 6) for k in range(1, FAST_RETRIES + 2)]
    assert times[: FAST_RETRIES + 1] == fast
    assert times[FAST_RETRIES + 1] == pytest.approx(fast[-1] + 1.0)
    assert down_at == pytest.approx(RETRY_S * (FAST_RETRIES + 1))


def test_server_line_heartbeat_silence_and_exact_deadlines() -> None:
    line = _server_line(10.0)
    assert line.next_deadline() == 11.0  # heartbeat first
    assert line.tick(10.999) == [] and not line.has_output  # before the deadline nothing happens
    assert line.tick(11.0) == [] and line.take_output() == b'{"v":1,"src":"SRV","type":"hb"}\n'
    assert line.next_deadline() == 12.0
    line.tick(12.0)
    line.take_output()
    assert line.next_deadline() == 13.0  # silence at 13.0 and the next heartbeat coincide
    assert line.tick(13.0) == ["READER"] and not line.up
    assert line.tick(13.0) == []  # reported once
    for expected in (14.0, 15.0, 16.0):  # down: only heartbeats, one a second, never a past deadline
        assert line.next_deadline() == expected
        line.tick(expected)
    line.feed(b'{"v":1,"src":"READER","type":"hb"}\n', 16.5)
    assert line.up and line.peer == "READER" and line.next_deadline() == 17.0


def test_harness_server_end_heartbeat_and_silence() -> None:
    end = _harness_line(0.0)
    assert end.next_deadline() == 1.0
    assert end.tick(0.5) == [] and end.take_output() == b""
    assert end.tick(3.0) == [Source.READER]
    assert end.tick(3.0) == []
    assert end.next_deadline() == 4.0


def test_reader_sends_heartbeats_and_answers_nothing_it_does_not_know() -> None:
    reader = _reader()
    reader.open(0.0)
    reader.take_output()
    assert reader.next_deadline() == pytest.approx(RETRY_S)  # the hello's retransmission
    events = reader.receive(b'{"v":1,"src":"SRV","type":"ack","of":1}\n', 0.01)
    assert [type(e) for _s, e in events] == [LinkChanged, Delivered]
    assert reader.next_deadline() == pytest.approx(1.0)
    reader.poll(1.0)
    assert reader.take_output() == b'{"v":1,"src":"READER","type":"hb"}\n'
    events = reader.receive(b'garbage\n{"v":1,"src":"SRV","type":"open","seq":2,"round":"1"}\n', 1.1)
    assert [type(e) for _s, e in events] == [Rejected, Rejected]
    assert reader.take_output() == b""  # the reader never answers: it takes no data


def test_reader_refuses_what_it_does_not_send() -> None:
    reader = _reader()
    with pytest.raises(ValueError, match="READER"):
        reader.send(Source.BOWL, Result("RWRW", False), 0.0)
    with pytest.raises(ValueError, match="RESULT and REARRANGED"):
        reader.send(Source.READER, LampOpen("1", 1000), 0.0)
    with pytest.raises(ValueError):
        reader.send(Source.READER, Result("RWRW", False), 0.0, "bad round")
    with pytest.raises(ValueError, match="no commands"):
        _harness_line().send(LampOpen("1", 1000), 0.0)
    with pytest.raises(ValueError, match="no lamp commands"):
        _server_line().send("OPEN", (("round", "1"), ("ms", "1000")), 0.0)


def test_queued_reads_wait_for_the_connection_and_keep_order() -> None:
    line = _server_line()
    wire = Wire(_reader(), line)
    for k in range(3):  # the camera read while nobody was connected
        wire.reader.send(Source.READER, Result("RWRW", False), 0.0, str(k + 1), 100 * k)
    assert wire.reader.pending() == 3 and wire.reader.next_deadline() is None
    wire.connect()
    wire.run(1.0)
    assert [f.get("round") for f in wire.delivered if f.type == "RESULT"] == ["1", "2", "3"]
    assert wire.reader.pending() == 0


def test_fire_and_forget_reader() -> None:
    reader = _reader(EndSettings(require_ack=False, heartbeat_s=math.inf))
    reader.open(0.0)
    reader.send(Source.READER, Result("RWRW", False), 0.0, "1", 5)
    out = reader.take_output()
    assert out.count(b"\n") == 3 and reader.pending() == 0 and reader.next_deadline() is None


def test_server_line_roles() -> None:
    assert _server_line().roles == ("READER",) and not _server_line().carries_lamp
    assert make_line("xocdia-jsonl", "camera", None, 0.0, 3.0).roles == ("READER",)
    with pytest.raises(LineConfigError, match="roles: xocdia-jsonl carries only READER"):
        make_line("xocdia-jsonl", "bus", ("SHAKER", "CONSOLE"), 0.0, 3.0)


def test_server_line_frames_fit_the_gateway() -> None:
    """Frames the line hands on keep the ASCII protocol's seq range (the gateway re-encodes a rejected one)."""
    line = _server_line()
    big = b'{"v":1,"src":"READER","type":"result","seq":70000,"faces":"RWRW","overlap":false,"confidence":[1,1,1,1]}\n'
    (frame,) = line.feed(big, 0.0)
    assert isinstance(frame, ServerFrame) and 1 <= frame.seq <= 65535
    assert b'"of":70000' in line.take_output()
    (bad,) = line.feed(b"not json\n", 0.0)
    assert isinstance(bad, ServerBadFrame) and line.take_output() == b""


def test_harness_server_end_naks_what_it_cannot_accept() -> None:
    end = _harness_line()
    items = end.receive(b'{"v":2,"src":"READER","type":"result","seq":5}\n', 0.0)
    assert [i.reason.value for i in items if isinstance(i, BadFrame)] == ["version"]
    assert end.take_output() == b'{"v":1,"src":"SRV","type":"nak","of":5,"reason":"version"}\n'
    items = end.receive(b'{"v":1,"src":"READER","type":"hello","seq":1,"id":"R-1","proto":2,"fw":"x"}\n', 0.1)
    assert items == [] and b'"reason":"version"' in end.take_output()


def test_a_run_that_uses_up_its_numbers_starts_a_new_one() -> None:
    line = _server_line()
    wire = Wire(_reader(), line)
    wire.connect()
    wire.run(0.1)
    wire.reader._next_seq = 2147483647  # as after years of reads
    wire.report(Result("RWRW", False), "1", 10)
    wire.report(Result("WWWW", False), "2", 20)
    wire.run(1.0)
    assert _kinds(wire.delivered) == ["HELLO:1", f"RESULT:{(2147483647 - 1) % 65535 + 1}", "HELLO:1", "RESULT:2"]
