"""xocdia-bus codec properties: every message round-trips (harness codec, and the reference server's implementation
agrees byte for byte), and the framers never raise and never yield a false message (garbage, every split point,
two frames in one read, single bit flips). The dialect's options and lines."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameserver.dialects.bus import wire as bus_wire
from gameserver.protocol import BadFrame as ServerBadFrame
from harness.wire.dialects import DialectError, load_dialect, plan_lines
from harness.wire.dialects.bus.catalogue import ADDRESS, REPORT_CODES, Poll
from harness.wire.dialects.bus.codec import CODEC
from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.messages import (
    DEVICES,
    LAMP_COMMANDS,
    TAGGABLE,
    Ack,
    BowlOn,
    Frame,
    Heartbeat,
    Hello,
    LampClose,
    Message,
    Nak,
    NakReason,
    Source,
)
from harness.wire.text import encode_body
from tests.protocol.proto_strategies import event_times, messages_of, values

bus_seqs = st.integers(1, 255)


@st.composite
def bus_frames(draw: st.DrawFn) -> Frame:
    """Any frame the bus carries: polls, NOTHING/ACK/NAK replies, HELLO, every report (tagged or not, with or
    without an event time) and every lamp command."""
    kind = draw(st.sampled_from(["poll", "nothing", "ack", "nak", "hello", "report", "lamp"]))
    if kind == "poll":
        return Frame(0, Source.SERVER, Poll(draw(st.sampled_from(DEVICES)), draw(st.integers(0, 255))))
    if kind == "nothing":
        return Frame(0, draw(st.sampled_from(DEVICES)), Heartbeat())
    if kind == "ack":
        return Frame(0, draw(st.sampled_from(DEVICES)), Ack(draw(bus_seqs)))
    if kind == "nak":
        return Frame(0, draw(st.sampled_from(DEVICES)), Nak(draw(bus_seqs), draw(st.sampled_from(NakReason))))
    if kind == "hello":
        return Frame(draw(bus_seqs), draw(st.sampled_from(DEVICES)), draw(messages_of(Hello)))
    if kind == "lamp":
        cls = draw(st.sampled_from(sorted(LAMP_COMMANDS, key=lambda c: c.__name__)))
        return Frame(draw(bus_seqs), Source.SERVER, draw(messages_of(cls)))
    src, cls = draw(st.sampled_from(sorted(REPORT_CODES.values(), key=lambda p: (p[0].value, p[1].__name__))))
    assert cls in TAGGABLE
    tag = draw(st.none() | values)
    at = draw(st.none() | event_times)
    return Frame(draw(bus_seqs), src, draw(messages_of(cls)), round=tag, at=at)


def _server_form(frame: Frame) -> tuple[int, str, str, int, tuple[tuple[str, str], ...]]:
    """The reference server's text form of a harness frame (through the ASCII body's field strings)."""
    msg = frame.message
    if isinstance(msg, Poll):
        return ADDRESS[msg.device], "SRV", "POLL", 0, (("ack", str(msg.ack)),)
    body = encode_body(frame).decode()
    fields = tuple(tuple(p.split("=", 1)) for p in body.split(" ")[4:])
    addr = ADDRESS[Source.LAMP] if frame.src is Source.SERVER else ADDRESS[frame.src]
    return addr, frame.src.value, msg.TYPE, frame.seq, fields  # type: ignore[return-value]


@settings(max_examples=400, deadline=None)
@given(bus_frames())
def test_round_trip_every_message(frame: Frame) -> None:
    raw = CODEC.encode(frame)
    assert CODEC.decoder().feed(raw) == [frame]
    # the reference server agrees byte for byte, both ways
    addr, src, type_, seq, fields = _server_form(frame)
    assert bus_wire.encode(addr, src, type_, seq, fields) == raw
    assert bus_wire.Decoder().feed(raw) == [bus_wire.BusFrame(addr, src, type_, seq, fields)]


def test_every_report_class_has_a_code() -> None:
    carried = {cls for _src, cls in REPORT_CODES.values()}
    assert carried == set(TAGGABLE)


@pytest.mark.parametrize(
    "frame",
    [
        Frame(0, Source.BOWL, BowlOn()),  # a report needs seq 1..255
        Frame(256, Source.BOWL, BowlOn()),
        Frame(1, Source.SHAKER, BowlOn()),
        Frame(1, Source.BOWL, Hello("B", 1, "f"), round="1"),
        Frame(1, Source.SERVER, LampClose("17"), at=5),
        Frame(0, Source.LAMP, Ack(256)),
        Frame(1, Source.BOWL, BowlOn(), version=2),
        Frame(1, Source.BOWL, BowlOn(), at=10**32),
        Frame(1, Source.BOWL, BowlOn(), round="a b"),
        Frame(0, Source.SERVER, Poll(Source.SERVER, 0)),
        Frame(1, Source.SERVER, Poll(Source.BOWL, 0)),
    ],
)
def test_encoder_refuses(frame: Frame) -> None:
    with pytest.raises(EncodeError):
        CODEC.encode(frame)


# --- framer fuzz --------------------------------------------------------------------------------------------------

_THREE = [
    Frame(3, Source.BOWL, Hello("BOWL-0001", 1, "hil-0.1")),
    Frame(0, Source.SERVER, Poll(Source.READER, 165)),  # 0xA5, the start byte, inside a frame
    Frame(7, Source.BOWL, BowlOn(), round="17", at=0xA5A5A5),
]
STREAM = b"".join(CODEC.encode(f) for f in _THREE)
SERVER_THREE = [bus_wire.Decoder().feed(CODEC.encode(f))[0] for f in _THREE]


def _harness(chunks: list[bytes]) -> list[Frame | BadFrame]:
    dec = CODEC.decoder()
    return [x for c in chunks for x in dec.feed(c)]


def _server(chunks: list[bytes]) -> list[object]:
    dec = bus_wire.Decoder()
    return [x for c in chunks for x in dec.feed(c)]


def test_every_split_point_of_three_frames() -> None:
    for i in range(len(STREAM) + 1):
        for j in range(i, len(STREAM) + 1):
            chunks = [STREAM[:i], STREAM[i:j], STREAM[j:]]
            assert _harness(chunks) == _THREE
            assert _server(chunks) == SERVER_THREE


def test_two_frames_in_one_read_and_byte_by_byte() -> None:
    assert _harness([STREAM]) == _THREE
    assert _harness([bytes((b,)) for b in STREAM]) == _THREE
    assert _server([bytes((b,)) for b in STREAM]) == SERVER_THREE


def test_single_bit_flips_never_yield_a_false_message() -> None:
    for bit in range(len(STREAM) * 8):
        data = bytearray(STREAM)
        data[bit // 8] ^= 1 << (bit % 8)
        got = _harness([bytes(data)])
        frames = [x for x in got if isinstance(x, Frame)]
        assert all(f in _THREE for f in frames), (bit, got)
        assert len(frames) >= 2 or any(isinstance(x, BadFrame) for x in got), (bit, got)
        server = [x for x in _server([bytes(data)]) if not isinstance(x, ServerBadFrame)]
        assert all(f in SERVER_THREE for f in server), (bit, server)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=6))
def test_garbage_never_raises(data: bytes, cuts: list[int]) -> None:
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    out = _harness(chunks)
    for item in out:
        if isinstance(item, Frame):  # a frame found in random bytes passed a CRC: it must re-encode exactly
            assert CODEC.encode(item) in data
    _server(chunks)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40), st.binary(max_size=40), st.integers(0, 2))
def test_frames_survive_surrounding_garbage(before: bytes, after: bytes, which: int) -> None:
    frame = _THREE[which]
    # garbage without a start byte before the frame cannot hide it; after it, anything goes
    out = _harness([before.replace(b"\xa5", b"\x00"), CODEC.encode(frame), after])
    assert frame in out


def test_random_mutations_seeded() -> None:
    rng = random.Random(14)
    frames = list(_THREE)
    for _ in range(3000):
        data = bytearray(STREAM)
        for _k in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        cut = rng.randrange(len(data) + 1)
        got = _harness([bytes(data[:cut]), bytes(data[cut:])])
        assert all(f in frames for f in got if isinstance(f, Frame))


# --- the dialect ---------------------------------------------------------------------------------------------------


def test_default_is_one_bus_line_with_every_device() -> None:
    dialect = load_dialect("xocdia-bus")
    lines = plan_lines(dialect)
    assert [(line.name, line.roles, line.medium) for line in lines] == [("bus", DEVICES, "serial")]
    assert dialect.describe()["dialogue"] == "poll"


def test_lines_option_splits_the_devices() -> None:
    dialect = load_dialect("xocdia-bus", {"lines": {"table": ["bowl", "SHAKER", "console"], "cam": ["READER", "LAMP"]}})
    lines = plan_lines(dialect)
    assert [(line.name, line.roles) for line in lines] == [
        ("table", (Source.BOWL, Source.SHAKER, Source.CONSOLE)),
        ("cam", (Source.READER, Source.LAMP)),
    ]


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"lines": {"a": ["BOWL"], "b": ["BOWL", "SHAKER", "READER", "LAMP", "CONSOLE"]}}, "exactly once"),
        ({"lines": {"a": ["BOWL", "SHAKER"]}}, "no line carries READER, LAMP, CONSOLE"),
        ({"lines": {"a": ["BOWL", "SHAKER", "READER", "LAMP", "CONSOLE", "TV"]}}, "unknown role 'TV'"),
        ({"lines": ["BOWL"]}, "must be a mapping"),
        ({"lines": {"A B": ["BOWL"]}}, "line name"),
        ({"lines": {"a": []}}, "non-empty list"),
        ({"poll_interval_s": 0}, "devices.options.poll_interval_s"),
        ({"response_timeout_s": "fast"}, "devices.options.response_timeout_s"),
        ({"retries": -1}, "devices.options.retries"),
        ({"baud": 9600}, "unknown option 'baud'"),
    ],
)
def test_bad_options_name_the_field(options: dict[str, object], says: str) -> None:
    with pytest.raises(DialectError) as err:
        load_dialect("xocdia-bus", options)
    assert says in str(err.value)
    assert "devices.options" in str(err.value)
    if "lines" in options and isinstance(options["lines"], dict):
        assert "BOWL, SHAKER, READER, LAMP, CONSOLE" in str(err.value) or "line name" in str(err.value)


def test_device_end_refuses_reports_it_cannot_carry() -> None:
    dialect = load_dialect("xocdia-bus")
    from harness.wire.dialects.base import EndSettings

    end = dialect.device_end(plan_lines(dialect)[0], EndSettings())
    with pytest.raises(ValueError):
        end.send(Source.SHAKER, BowlOn(), 0.0)
    with pytest.raises(ValueError):
        end.send(Source.SERVER, BowlOn(), 0.0)
    with pytest.raises(EncodeError):
        end.send(Source.BOWL, BowlOn(), 0.0, round="a b")
    msg: Message = BowlOn()
    end.send(Source.BOWL, msg, 0.0, round="17", at=1)
    assert end.pending() == 1
