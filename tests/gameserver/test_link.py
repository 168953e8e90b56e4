"""The server end of a device port (protocol §4-§5), driven with decoded frames and a hand-moved time."""

from __future__ import annotations

import copy
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gameserver.link import ServerLink
from gameserver.protocol import Decoder, Frame, encode, parse


def frames(link: ServerLink) -> list[Frame]:
    out = [f for f in Decoder().feed(link.take_output()) if isinstance(f, Frame)]
    return out


def device(seq: int, type_: str, fields: tuple[tuple[str, str], ...] = (), src: str = "BOWL") -> Frame:
    parsed = parse(encode(seq, src, type_, fields))
    assert isinstance(parsed, Frame)
    return parsed


HELLO = (("id", "BOWL-1"), ("proto", "1"), ("fw", "x"))


def test_opening_sends_hello_seq_1_and_waits_for_its_ack() -> None:
    link = ServerLink("lamp", now=0.0)
    sent = frames(link)
    assert [(f.seq, f.src, f.type) for f in sent] == [(1, "SRV", "HELLO")]
    link.send("OPEN", (("round", "1"), ("ms", "1000")), now=0.01)
    assert frames(link) == []  # stop and wait: OPEN waits behind the unacknowledged HELLO
    link.receive(device(0, "ACK", (("of", "1"),), "LAMP"), now=0.02)
    assert [(f.seq, f.type) for f in frames(link)] == [(2, "OPEN")]


def test_unacknowledged_frame_is_retransmitted_byte_for_byte() -> None:
    link = ServerLink("lamp", now=0.0)
    first = link.take_output()
    link.tick(0.19)
    assert link.take_output() == b""
    for t in (0.21, 0.42, 0.63, 0.84, 1.05):  # five fast retransmissions, 200 ms apart
        link.tick(t)
        assert link.take_output() == first, t
    link.tick(1.5)  # then once per second, never dropped
    assert link.take_output() == b""
    link.tick(2.06)
    assert link.take_output() == first


def test_data_frames_are_acked_and_duplicates_not_acted_on() -> None:
    link = ServerLink("bowl", now=0.0)
    link.take_output()
    assert link.receive(device(1, "HELLO", HELLO), 0.1) is not None
    on = device(2, "ON")
    assert link.receive(on, 0.2) == on
    assert link.receive(on, 0.3) is None  # retransmission: ACKed again, not acted on
    acks = [f.get("of") for f in frames(link) if f.type == "ACK"]
    assert acks == ["1", "2", "2"]
    hello = device(1, "HELLO", HELLO)
    assert link.receive(hello, 0.4) == hello  # a device re-opening its port: accepted, memory reset
    assert link.receive(hello, 0.5) is None  # its retransmission: acknowledged, not acted on
    assert link.receive(device(1, "ON"), 0.6) is None  # seq 1 again (same as the HELLO): a duplicate
    assert link.receive(device(2, "ON"), 0.7) is not None
    assert [f.get("of") for f in frames(link) if f.type == "ACK"] == ["1", "1", "1", "2"]
    assert link.peer == "BOWL"


def test_unknown_version_hello_and_srv_frames_are_naked() -> None:
    link = ServerLink("bowl", now=0.0)
    link.take_output()
    assert link.receive(device(1, "HELLO", (("id", "B"), ("proto", "2"), ("fw", "x"))), 0.1) is None
    assert link.receive(device(3, "CLOSE", (("round", "1"),), "SRV"), 0.1) is None
    bad = parse(b"$1 5 BOWL WOBBLE*23B1\r\n")
    assert link.receive(bad, 0.1) is None
    naks = [(f.get("of"), f.get("reason")) for f in frames(link) if f.type == "NAK"]
    assert naks == [("1", "version"), ("3", "type"), ("5", "type")]


def test_heartbeat_after_one_second_idle_and_link_down_after_silence() -> None:
    link = ServerLink("bowl", now=0.0, silence_s=3.0)
    link.receive(device(0, "ACK", (("of", "1"),)), 0.0)
    link.take_output()
    link.tick(0.5)
    assert link.take_output() == b""
    link.tick(1.01)
    assert [f.type for f in frames(link)] == ["HB"]
    link.receive(device(0, "HB"), 2.0)
    assert link.tick(4.9) is False
    assert link.tick(5.01) is True and link.up is False
    assert link.tick(6.0) is False  # reported once
    link.receive(device(0, "HB"), 6.5)
    assert link.up is True


_OPS = st.lists(
    st.tuples(st.sampled_from(["send", "ack", "data", "hb", "wait"]), st.floats(0.0, 2.5, allow_nan=False)),
    max_size=25,
)


@settings(max_examples=80, deadline=None)
@given(ops=_OPS)
def test_nothing_happens_before_the_deadline_the_link_gives(ops: list[tuple[str, float]]) -> None:
    # next_deadline is kept up to date by every call that moves a timer: before it a tick does nothing, at it one acts
    link, now, seq, last_sent = ServerLink("lamp", now=0.0, silence_s=3.0), 0.0, 1, 1
    for op, gap in ops:
        now += gap
        if op == "send":
            link.send("CLOSE", (("round", "1"),), now)
        elif op == "ack":  # the device acknowledges the last data frame the server wrote
            link.receive(device(0, "ACK", (("of", str(last_sent)),), "LAMP"), now)
        elif op == "data":
            seq += 1
            link.receive(device(seq, "ON"), now)
        elif op == "hb":
            link.receive(device(0, "HB", (), "LAMP"), now)
        link.tick(now)
        last_sent = max([last_sent, *(f.seq for f in frames(link))])
        due = link.next_deadline()
        before = math.nextafter(due, -math.inf)
        if now < before:
            probe = copy.deepcopy(link)
            assert probe.tick(before) is False
            assert probe.take_output() == b""
            assert probe.next_deadline() == due
        probe = copy.deepcopy(link)  # and at it (a hair after, as tick compares) something is due: none is missed
        went_down = probe.tick(due + 1e-9)
        assert went_down or probe.take_output() != b""
