"""Protocol revision 1.2: the optional event time ``at=<ms>`` after the optional round tag (docs/protocol.md §6,
"Event time"): round trip, refusals that name the field, and a link that keeps it on every retransmission."""

from __future__ import annotations

import binascii

import pytest

from harness.wire.frame_errors import BadFrame, EncodeError, ErrorReason
from harness.wire.line_events import Received
from harness.wire.link import Link
from harness.wire.messages import (
    TAGGABLE,
    BowlOff,
    BowlOn,
    Drop,
    DropItem,
    Frame,
    Hello,
    LampClose,
    NakReason,
    Problem,
    ProblemReason,
    ShakeStart,
    Source,
)
from harness.wire.text import encode, parse_frame


def _frame(body: bytes) -> bytes:
    """A frame around ``body`` with a correct CRC (so only the field check can refuse it)."""
    return b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF))


def test_the_brief_example_decodes_to_its_round_and_time() -> None:
    raw = b"$1 3 BOWL OFF touch=0 token=- round=17 at=5689*5019\r\n"  # CRC checked by test_golden's reference
    frame = parse_frame(raw)
    assert frame == Frame(3, Source.BOWL, BowlOff(False, None), round="17", at=5689)
    assert encode(frame) == raw


@pytest.mark.parametrize(
    ("frame", "tail"),
    [
        (Frame(2, Source.SHAKER, ShakeStart(), at=0), b" START at=0*"),
        (Frame(2, Source.SHAKER, ShakeStart(), round="R1", at=7), b" START round=R1 at=7*"),
        (Frame(9, Source.SHAKER, Drop(DropItem.TOKEN, 3), at=4_294_967_296), b" token=3 at=4294967296*"),
        (Frame(5, Source.CONSOLE, Problem(ProblemReason.EQUIPMENT), round="17"), b" reason=equipment round=17*"),
    ],
)
def test_round_then_at_round_trip_in_wire_order(frame: Frame, tail: bytes) -> None:
    raw = encode(frame)
    assert tail in raw
    assert parse_frame(raw) == frame


def test_the_longest_device_frame_with_both_optional_fields_fits_in_128_bytes() -> None:
    longest = 0
    for cls in TAGGABLE:  # the longest catalogue values of each message, a 32-char round and a 32-digit time
        message = {
            BowlOff: BowlOff(True, 3),
            Drop: Drop(DropItem.PLATE, None),
            Problem: Problem(ProblemReason.RESHAKE_CAP),
        }.get(cls)
        if message is None:
            continue
        raw = encode(Frame(65535, next(iter(cls.SOURCES)), message, round="R" * 32, at=10**32 - 1))
        longest = max(longest, len(raw))
    assert 120 < longest <= 128


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b"1 3 BOWL OFF touch=0 token=- round=17 at=-1", "at: '-1'"),
        (b"1 3 BOWL OFF touch=0 token=- at=01", "at: '01'"),
        (b"1 2 SHAKER START at=x", "at: 'x'"),
        (b"1 2 SHAKER START at=", "at: ''"),
        (b"1 2 SHAKER START at=" + b"1" * 33, "at: '111"),
        (b"1 3 BOWL OFF touch=0 token=- at=5689 round=17", "at: must come after round"),
        (b"1 2 SHAKER START round=17 at=5 at=6", "at: given 2 times"),
        (b"1 2 SHAKER START at=5 at=5", "at: given 2 times"),
        (b"1 2 SHAKER START at=5 bogus=1", "only round=<id> then at=<ms>"),
        (b"1 1 BOWL HELLO id=BOWL-0001 proto=1 fw=t at=5", "at: only device data messages"),
        (b"1 4 SRV CLOSE round=17 at=5", "at: only device data messages"),
    ],
)
def test_a_bad_event_time_is_refused_with_a_field_nak_naming_it(body: bytes, detail: str) -> None:
    error = parse_frame(_frame(body))
    assert isinstance(error, BadFrame)
    assert (error.reason, error.nak) == (ErrorReason.FIELD, NakReason.FIELD)
    assert detail in error.detail, error.detail


@pytest.mark.parametrize(
    "frame",
    [
        Frame(2, Source.BOWL, BowlOn(), at=-1),
        Frame(2, Source.BOWL, BowlOn(), at=10**32),
        Frame(2, Source.BOWL, BowlOn(), at=True),
        Frame(2, Source.BOWL, BowlOn(), at="5"),  # type: ignore[arg-type]
        Frame(2, Source.BOWL, BowlOn(), at=5.0),  # type: ignore[arg-type]
        Frame(1, Source.BOWL, Hello("BOWL-1", 1, "x"), at=5),
        Frame(2, Source.SERVER, LampClose("17"), at=5),
    ],
)
def test_the_encoder_refuses_a_bad_event_time_naming_the_field(frame: Frame) -> None:
    with pytest.raises(EncodeError, match=r"\bat: "):
        encode(frame)


def _linked() -> tuple[Link, Link]:
    dev = Link(Source.BOWL, Hello("BOWL-0001", 1, "t"))
    srv = Link(Source.SERVER, Hello("SRV-t", 1, "t"), frozenset({BowlOn, BowlOff}))
    dev.open(0.0)
    srv.receive(dev.take_output(), 0.0)  # HELLO
    dev.receive(srv.take_output(), 0.0)  # its ACK
    return dev, srv


def test_the_event_time_is_fixed_when_queued_and_kept_on_every_retransmission() -> None:
    dev, srv = _linked()
    dev.send(BowlOn(), 1.0, round="17", at=900)
    dev.send(BowlOff(False, None), 1.0, round="17", at=1000)  # waits behind ON (stop and wait)
    first = dev.take_output()
    assert first.startswith(b"$1 2 BOWL ON round=17 at=900*")
    for now in (1.25, 1.5, 1.75):  # no ACK: the same bytes again and again, time unchanged
        dev.poll(now)
        assert dev.take_output() == first
    srv.receive(first, 2.0)
    dev.receive(srv.take_output(), 2.0)  # the ACK of 2: OFF goes out at 2.0, stamped as it was at 1.0
    second = dev.take_output()
    assert second.startswith(b"$1 3 BOWL OFF touch=0 token=- round=17 at=1000*")
    frames = [e.frame for e in srv.receive(second, 2.1) if isinstance(e, Received)]
    assert [(f.message, f.round, f.at) for f in frames] == [(BowlOff(False, None), "17", 1000)]


def test_a_reopened_port_resends_the_unacknowledged_frame_with_its_event_time() -> None:
    dev, _srv = _linked()
    dev.send(BowlOff(True, 2), 1.0, at=1000)
    assert dev.take_output().startswith(b"$1 2 BOWL OFF touch=1 token=2 at=1000*")
    dev.close()
    dev.open(5.0)  # replugged: HELLO first, then the same report renumbered, its time as it was
    hello = dev.take_output()
    assert hello.startswith(b"$1 1 BOWL HELLO ")
    dev.receive(_frame(b"1 0 SRV ACK of=1"), 5.1)
    assert dev.take_output() == _frame(b"1 2 BOWL OFF touch=1 token=2 at=1000")
