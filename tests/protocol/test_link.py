"""The sans-I/O link layer: handshake, ACK, retransmission, duplicates, NAK, heartbeats, reopen."""

from __future__ import annotations

import binascii
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.wire.line_events import Delivered, LinkChanged, Received, Refused
from harness.wire.link import Link
from harness.wire.messages import BowlOff, BowlOn, Hello, LampClose, LampOpen, NakReason, ShakeEnd, ShakeStart, Source


def bowl_link() -> Link:
    return Link(Source.BOWL, Hello("BOWL-0001", 1, "t"))


def server_link() -> Link:
    return Link(Source.SERVER, Hello("SRV-t", 1, "t"), frozenset({BowlOn, BowlOff, ShakeStart, ShakeEnd}))


def received(events: Sequence[object]) -> list[object]:
    return [e.frame.message for e in events if isinstance(e, Received)]


def test_hello_then_messages_arrive_once_in_order_with_acks() -> None:
    dev, srv = bowl_link(), server_link()
    dev.open(0.0)
    dev.send(BowlOn(), 0.0)
    dev.send(BowlOff(False, None), 0.0)
    # stop and wait: only the HELLO is on the wire until it is acknowledged
    wire = dev.take_output()
    assert wire == b"$1 1 BOWL HELLO id=BOWL-0001 proto=1 fw=t*" + wire[-6:]
    got = received(srv.receive(wire, 0.01))
    assert got == [Hello("BOWL-0001", 1, "t")]
    ack = srv.take_output()
    assert ack.startswith(b"$1 0 SRV ACK of=1*")
    events = dev.receive(ack, 0.02)
    assert Delivered(1, Hello("BOWL-0001", 1, "t")) in events
    wire = dev.take_output()
    assert wire.startswith(b"$1 2 BOWL ON*")
    got = received(srv.receive(wire, 0.03))
    dev.receive(srv.take_output(), 0.04)
    got += received(srv.receive(dev.take_output(), 0.05))
    assert got == [BowlOn(), BowlOff(False, None)]


def test_lost_frames_are_retransmitted_and_duplicates_not_acted_on() -> None:
    dev, srv = bowl_link(), server_link()
    dev.open(0.0)
    for _ in range(3):
        dev.send(BowlOn(), 0.0)
    now, got, n = 0.0, [], 0
    while now < 10.0:
        out = dev.take_output()
        if out:
            n += 1
            if n % 3 != 0:  # every third write from the device is lost
                got += received(srv.receive(out, now))
                back = srv.take_output()
                if n % 2 == 0:  # and every second ACK burst is delivered twice
                    dev.receive(back, now)
                dev.receive(back, now)
        now += 0.05
        dev.poll(now)
        srv.poll(now)
    assert got == [Hello("BOWL-0001", 1, "t"), BowlOn(), BowlOn(), BowlOn()]
    assert dev.inflight is None and not dev.queue


def test_a_duplicate_is_acknowledged_again_but_reported_once() -> None:
    dev, srv = bowl_link(), server_link()
    dev.open(0.0)
    hello = dev.take_output()
    srv.receive(hello, 0.0)
    srv.take_output()
    dev.receive(b"$1 0 SRV ACK of=1*C448\r\n", 0.0)
    dev.send(BowlOn(), 0.0)
    on = dev.take_output()
    assert received(srv.receive(on, 0.1)) == [BowlOn()]
    assert received(srv.receive(on, 0.2)) == []
    assert srv.take_output().count(b"ACK of=2*") == 2


def test_unexpected_message_is_naked_and_not_retransmitted() -> None:
    lamp = Link(Source.LAMP, Hello("LAMP-1", 1, "t"), frozenset({LampOpen}))
    lamp.open(0.0)
    lamp.take_output()
    assert lamp.receive(b"$1 4 SRV CLOSE round=17*6F8A\r\n", 0.0) == [LinkChanged(True, "frame from SRV")]
    assert lamp.take_output().startswith(b"$1 0 LAMP NAK of=4 reason=type*")
    srv = server_link()
    srv.open(0.0)
    srv.take_output()
    events = srv.receive(b"$1 0 BOWL NAK of=1 reason=version*", 0.0)  # no CRLF yet: incomplete
    assert events == []
    events = srv.receive(b"2F0C\r\n", 0.0)
    assert not [e for e in events if isinstance(e, Received)]


def test_nak_of_the_frame_in_flight_moves_on() -> None:
    srv = server_link()
    srv.open(0.0)
    srv.take_output()
    srv.send(LampClose("17"), 0.0)
    body = b"1 0 LAMP NAK of=1 reason=state"
    events = srv.receive(b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF)), 0.0)
    assert [e for e in events if isinstance(e, Refused)] == [Refused(1, Hello("SRV-t", 1, "t"), NakReason.STATE)]
    assert srv.take_output().startswith(b"$1 2 SRV CLOSE round=17*")


def test_heartbeat_after_a_second_of_quiet_and_link_down_after_three_of_silence() -> None:
    dev = bowl_link()
    dev.open(0.0)
    dev.receive(b"$1 0 SRV ACK of=1*C448\r\n", 0.1)
    assert dev.up
    dev.take_output()
    assert dev.next_deadline() == 1.0
    dev.poll(0.99)
    assert dev.take_output() == b""
    dev.poll(1.0)
    assert dev.take_output() == b"$1 0 BOWL HB*6E17\r\n"
    events = dev.poll(3.1)
    assert events == [LinkChanged(False, "nothing received for 3 s")]


def test_retries_exhausted_marks_link_down_but_keeps_the_frame() -> None:
    dev = bowl_link()
    dev.open(0.0)
    dev.receive(b"$1 0 SRV ACK of=1*C448\r\n", 0.0)
    dev.take_output()
    dev.send(BowlOn(), 0.0)
    first = dev.take_output()
    assert first == b"$1 2 BOWL ON*F06B\r\n"
    times = [0.2, 0.4, 0.6, 0.8, 1.0]
    for k, t in enumerate(times, start=1):
        dev.poll(t + 0.001 * k)  # each retry is due 200 ms after the previous one
        assert dev.take_output() == first
    events = dev.poll(1.2 + 0.006)
    assert LinkChanged(False, "no ACK for seq 2 after 5 retries") in events
    assert dev.take_output() == first
    assert dev.next_deadline() == pytest.approx(2.206)  # slow retries, once a second
    # replug: HELLO again with seq 1, then the kept frame as seq 2
    dev.open(5.0)
    assert dev.take_output().startswith(b"$1 1 BOWL HELLO")
    dev.receive(b"$1 0 SRV ACK of=1*C448\r\n", 5.1)
    assert dev.take_output().startswith(b"$1 2 BOWL ON*")


@settings(max_examples=100, deadline=None)
@given(st.floats(min_value=0.0, max_value=1e6, allow_nan=False))
def test_polling_at_the_announced_deadline_always_makes_progress(t0: float) -> None:
    """Regression: float rounding once made poll(next_deadline()) a no-op, spinning the event loop."""
    dev = bowl_link()
    dev.open(t0)
    dev.receive(b"$1 0 SRV ACK of=1*C448\r\n", t0)
    for _ in range(5):
        deadline = dev.next_deadline()
        assert deadline is not None
        dev.take_output()
        dev.poll(deadline)
        assert dev.take_output() or not dev.up
        after = dev.next_deadline()
        assert after is not None and after > deadline


def _frame(body: bytes) -> bytes:
    return b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF))


def test_version_mismatch_is_naked_and_not_acted_on() -> None:
    dev = bowl_link()
    dev.open(0.0)
    dev.take_output()
    events = dev.receive(_frame(b"1 1 SRV HELLO id=SRV-x proto=2 fw=t"), 0.0)  # a HELLO speaking proto 2
    assert not [e for e in events if isinstance(e, Received)]
    assert dev.take_output() == _frame(b"1 0 BOWL NAK of=1 reason=version")
    events = dev.receive(_frame(b"2 7 SRV HB"), 0.1)  # a frame in protocol version 2
    assert not [e for e in events if isinstance(e, Received)]
    assert dev.take_output() == _frame(b"1 0 BOWL NAK of=7 reason=version")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.booleans(), min_size=1, max_size=200),
    st.lists(st.booleans(), min_size=1, max_size=200),
    st.integers(1, 6),
)
def test_any_pattern_of_lost_and_doubled_writes_delivers_each_message_once_in_order(
    lose: list[bool], double: list[bool], count: int
) -> None:
    dev, srv = bowl_link(), server_link()
    dev.open(0.0)
    srv.open(0.0)
    sent = [BowlOn() if i % 2 == 0 else BowlOff(i % 3 == 0, 1 if i % 3 == 0 else None) for i in range(count)]
    for msg in sent:
        dev.send(msg, 0.0)
    got: list[object] = []
    now, n = 0.0, 0
    while now < 120.0 and (dev.inflight is not None or dev.queue):
        for out, receiver, sink in ((dev.take_output(), srv, got), (srv.take_output(), dev, None)):
            if not out:
                continue
            # the adversary loses or doubles write n as its lists say, then stops (a finite fault pattern)
            n += 1
            if n < len(lose) and lose[n]:
                continue
            for _ in range(2 if n < len(double) and double[n] else 1):
                events = receiver.receive(out, now)
                if sink is not None:
                    sink += [e.frame.message for e in events if isinstance(e, Received)]
        now += 0.05
        dev.poll(now)
        srv.poll(now)
    assert got == [Hello("BOWL-0001", 1, "t"), *sent]


def test_heartbeats_can_be_turned_off_for_virtual_time_campaigns() -> None:
    dev = Link(Source.BOWL, Hello("BOWL-0001", 1, "t"), heartbeat_s=float("inf"), silence_s=float("inf"))
    dev.open(0.0)
    dev.receive(b"$1 0 SRV ACK of=1*C448\r\n", 0.0)
    dev.take_output()
    assert dev.next_deadline() is None  # nothing to wake up for
    dev.poll(1e9)
    assert dev.take_output() == b""


def test_a_round_tag_is_fixed_when_queued_and_kept_on_every_retransmission() -> None:  # protocol §6
    dev, srv = bowl_link(), server_link()
    dev.open(0.0)
    srv.receive(dev.take_output(), 0.0)  # HELLO
    dev.receive(srv.take_output(), 0.0)
    dev.send(BowlOff(False, None), 0.0, round="17")
    first = dev.take_output()
    assert first.startswith(b"$1 2 BOWL OFF touch=0 token=- round=17*")
    dev.poll(0.25)  # no ACK within 200 ms: the same bytes again
    assert dev.take_output() == first
    frames = [e.frame for e in srv.receive(first, 0.3) if isinstance(e, Received)]
    assert [(f.message, f.round) for f in frames] == [(BowlOff(False, None), "17")]
