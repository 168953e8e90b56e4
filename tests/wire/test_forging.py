"""The device ends that forge (harness.wire.dialects.capabilities.Forging): a forged frame's bytes decode, by the
dialect's own codec, to the forged frame with a forged number; the line's own server end takes it as a new frame and
still takes the device's next report (neither a retransmission nor a duplicate); noise decodes to a BadFrame of its
kind; on the polled bus a forged frame goes in the next reply of its device, before the device's own answer."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from harness.wire.dialects import EndSettings, load_dialect
from harness.wire.dialects.base import DeviceEnd, ServerEnd
from harness.wire.dialects.bus.catalogue import Poll
from harness.wire.dialects.bus.codec import CODEC as BUS
from harness.wire.dialects.bus.devices import FORGED_GAP as BUS_GAP
from harness.wire.dialects.bus.devices import FORGED_SPREAD, BusDeviceEnd
from harness.wire.dialects.capabilities import Forging, NoiseKind
from harness.wire.dialects.jsonl.ends import FORGED_GAP as JSONL_GAP
from harness.wire.dialects.jsonl.ends import ReaderEnd
from harness.wire.dialects.push import FORGED_GAP as PUSH_GAP
from harness.wire.dialects.push import PushDeviceEnd
from harness.wire.frame_errors import BadFrame, EncodeError, ErrorReason
from harness.wire.messages import (
    DEVICES,
    Ack,
    BowlOff,
    BowlOn,
    Frame,
    Heartbeat,
    Hello,
    Reassembled,
    Result,
    Source,
)

NOISE_REASON = {
    NoiseKind.UNKNOWN_TYPE: ErrorReason.TYPE,
    NoiseKind.BAD_FIELD: ErrorReason.FIELD,
    NoiseKind.MISSING_FIELD: ErrorReason.FIELD,
}
READ = Frame(0, Source.READER, Result("RRRR", False), round="7", at=5000)
PANEL = {"lines": {"reader": ["reader"], "panel": ["bowl", "shaker", "lamp", "console"]}}


def _ends(name: str, role: Source, options: dict[str, Any] | None = None) -> tuple[DeviceEnd, ServerEnd]:
    dialect = load_dialect(name, options)
    line = next(s for s in dialect.lines(DEVICES) if role in s.roles)
    return dialect.device_end(line, EndSettings()), dialect.server_end(line, EndSettings(), 0.0)


def _as(seq: int, frame: Frame) -> Frame:
    return Frame(seq, frame.src, frame.message, round=frame.round, at=frame.at)


def _exchange(device: DeviceEnd, server: ServerEnd, now: float) -> list[Frame | BadFrame]:
    """What the server end makes of the device end's output; the server's answer is fed back, and the device's
    answer to that (its ACK of the server's HELLO) too."""
    got = server.receive(device.take_output(), now)
    device.receive(server.take_output(), now)
    got += server.receive(device.take_output(), now)
    return got


# --- push (xocdia-ascii) -----------------------------------------------------------------------------------------


def test_a_push_end_writes_forged_frames_its_server_takes_and_its_own_next_report_still_counts() -> None:
    device, server = _ends("xocdia-ascii", Source.CONSOLE)
    assert isinstance(device, PushDeviceEnd) and isinstance(device, Forging)
    device.open(0.0)
    assert next(f.message for f in _exchange(device, server, 0.0) if isinstance(f, Frame)).TYPE == "HELLO"
    own = device.link.next_seq
    seqs = [device.forge(READ, 0.1), device.forge(READ, 0.1)]
    assert seqs == [own + PUSH_GAP, own + PUSH_GAP + 1]
    raw = device.take_output()
    assert device.codec.decoder().feed(raw) == [_as(seqs[0], READ), _as(seqs[1], READ)]
    assert server.receive(raw, 0.1) == [_as(seqs[0], READ), _as(seqs[1], READ)]  # two new frames
    device.receive(server.take_output(), 0.1)  # their ACKs are not for the device's own frame: ignored
    device.send(Source.CONSOLE, Reassembled(), 0.2)
    got = _exchange(device, server, 0.2)
    assert [(f.seq, f.message) for f in got if isinstance(f, Frame)] == [(own, Reassembled())]
    assert device.pending() == 0  # acknowledged: no forged frame took its number


def test_a_push_end_makes_every_kind_of_noise_and_its_decoder_refuses_each() -> None:
    device, _server = _ends("xocdia-ascii", Source.BOWL)
    assert isinstance(device, PushDeviceEnd)
    device.open(0.0)
    device.take_output()
    assert device.noise_kinds() == frozenset(NoiseKind)
    for src in DEVICES:
        for kind in NoiseKind:
            seq = device.forge_noise(kind, src, 0.0)
            [bad] = device.codec.decoder().feed(device.take_output())
            assert isinstance(bad, BadFrame), (kind, src, bad)
            assert (bad.reason, bad.seq, bad.src) == (NOISE_REASON[kind], seq, src)


def test_a_push_end_refuses_a_control_frame_and_one_its_dialect_cannot_express() -> None:
    device, _server = _ends("xocdia-ascii", Source.BOWL)
    assert isinstance(device, PushDeviceEnd)
    with pytest.raises(ValueError, match="control"):
        device.forge(Frame(0, Source.BOWL, Ack(3)), 0.0)
    with pytest.raises(EncodeError):
        device.forge(Frame(0, Source.BOWL, Result("RRRR", False)), 0.0)  # a result from the bowl


def test_forged_numbers_wrap_in_the_links_space_and_never_repeat_the_last_one() -> None:
    device, _server = _ends("xocdia-ascii", Source.BOWL)
    assert isinstance(device, PushDeviceEnd)
    seqs = [device.forged_seq() for _ in range(40_000)]
    assert all(1 <= s <= 65_535 for s in seqs)
    assert all(a != b for a, b in itertools.pairwise(seqs))
    assert 1 in seqs  # wrapped


# --- the polled bus (xocdia-bus) -----------------------------------------------------------------------------------


def _poll(device: BusDeviceEnd, role: Source, ack: int, now: float = 0.0) -> list[Frame | BadFrame]:
    """The device end's reply to a POLL of ``role`` acknowledging ``ack``, decoded by the bus codec."""
    device.receive(BUS.encode(Frame(0, Source.SERVER, Poll(role, ack))), now)
    return BUS.decoder().feed(device.take_output())


def _bus(options: dict[str, Any] | None = None, role: Source = Source.BOWL) -> BusDeviceEnd:
    device, _server = _ends("xocdia-bus", role, options)
    assert isinstance(device, BusDeviceEnd) and isinstance(device, Forging)
    device.open(0.0)
    return device


def test_a_bus_device_sends_its_forged_frame_in_its_next_reply_before_its_own_answer() -> None:
    device = _bus()
    assert [type(f.message) for f in _poll(device, Source.BOWL, 0) if isinstance(f, Frame)] == [Hello]
    forged = Frame(0, Source.BOWL, BowlOff(False, None), round="X7", at=10)
    seq = device.forge(forged, 0.0)
    assert seq == 2 + BUS_GAP  # ahead of its next own seq (2)
    device.send(Source.BOWL, BowlOn(), 0.0, "7", 20)
    assert [f.message for f in _poll(device, Source.READER, 0) if isinstance(f, Frame)] == [
        Hello("READER-0001", 1, "xocdia-hil-0.1")
    ]  # another device's poll: not its reply
    assert _poll(device, Source.BOWL, 1) == [_as(seq, forged), Frame(2, Source.BOWL, BowlOn(), round="7", at=20)]
    assert _poll(device, Source.BOWL, 2) == [Frame(0, Source.BOWL, Heartbeat())]  # delivered, nothing forged left


def test_a_bus_device_sends_no_forged_frame_with_a_report_offered_again() -> None:
    device = _bus()
    _poll(device, Source.BOWL, 0)  # HELLO, seq 1
    device.send(Source.BOWL, BowlOn(), 0.0)
    assert _poll(device, Source.BOWL, 1) == [Frame(2, Source.BOWL, BowlOn())]
    seq = device.forge(Frame(0, Source.BOWL, BowlOff(False, None), round="X"), 0.0)
    assert _poll(device, Source.BOWL, 1) == [Frame(2, Source.BOWL, BowlOn())]  # not acknowledged: offered again alone
    assert _poll(device, Source.BOWL, 2) == [
        Frame(seq, Source.BOWL, BowlOff(False, None), round="X"),
        Frame(0, Source.BOWL, Heartbeat()),
    ]


def test_a_frame_from_a_device_off_the_bus_goes_in_the_next_reply_and_the_master_refuses_it() -> None:
    device, master = _ends("xocdia-bus", Source.CONSOLE, PANEL)
    assert isinstance(device, BusDeviceEnd)
    device.open(0.0)
    got: list[Frame | BadFrame] = []
    now = 0.0
    while now < 0.3:  # every device has said HELLO
        master.tick(now)
        device.receive(master.take_output(), now)
        got += master.receive(device.take_output(), now)
        now += 0.005
    assert sorted(f.src.value for f in got if isinstance(f, Frame)) == ["BOWL", "CONSOLE", "LAMP", "SHAKER"]
    seq = device.forge(READ, now)
    assert seq == 1 + BUS_GAP  # the line has no reader: ahead of 1
    device.send(Source.CONSOLE, Reassembled(), now, "7")
    got = []
    while now < 0.6:
        master.tick(now)
        device.receive(master.take_output(), now)
        got += master.receive(device.take_output(), now)
        now += 0.005
    refused = [f for f in got if isinstance(f, BadFrame)]
    assert [(f.reason, BUS.decoder().feed(f.raw)) for f in refused] == [(ErrorReason.TYPE, [_as(seq, READ)])]
    assert [f.message for f in got if isinstance(f, Frame)] == [Reassembled()]  # the console's own, delivered


def test_bus_noise_decodes_to_a_bad_frame_of_its_kind_before_the_devices_answer() -> None:
    device = _bus()
    acks = {src: 0 for src in DEVICES}
    for src in DEVICES:
        [hello] = _poll(device, src, 0)
        assert isinstance(hello, Frame)
        acks[src] = hello.seq
    for src in DEVICES:
        for kind in NoiseKind:
            seq = device.forge_noise(kind, src, 0.0)
            bad, answer = _poll(device, src, acks[src])
            assert isinstance(bad, BadFrame) and (bad.reason, bad.seq, bad.src) == (NOISE_REASON[kind], seq, src)
            assert answer == Frame(0, src, Heartbeat())


@pytest.mark.parametrize("own", [1, 2, 100, 127, 128, 200, 254, 255])
def test_bus_forged_seqs_keep_away_from_the_devices_own_numbers(own: int) -> None:
    device = _bus()
    unit = device.units[Source.BOWL]
    unit.next_seq = own
    seqs = [device.forged_seq(Source.BOWL) for _ in range(3 * FORGED_SPREAD)]
    last = 255 if own == 1 else own - 1
    assert all(1 <= s <= 255 and s not in (own, last) for s in seqs)
    assert all(a != b for a, b in itertools.pairwise(seqs))


# --- xocdia-jsonl's reader --------------------------------------------------------------------------------------


def test_the_jsonl_reader_writes_a_forged_read_its_server_takes_and_its_own_next_read_still_counts() -> None:
    device, server = _ends("xocdia-jsonl", Source.READER)
    assert isinstance(device, ReaderEnd) and isinstance(device, Forging)
    device.open(0.0)
    assert [f.message.TYPE for f in _exchange(device, server, 0.0) if isinstance(f, Frame)] == ["HELLO"]
    seq = device.forge(READ, 0.1)
    assert seq == 2 + JSONL_GAP
    raw = device.take_output()
    assert device.codec.decoder().feed(raw) == [_as(seq, READ)]
    assert server.receive(raw, 0.1) == [_as(seq, READ)]
    device.receive(server.take_output(), 0.1)  # its ACK: not for the reader's own read, ignored
    device.send(Source.READER, Result("WWWW", False), 0.2, "7", 6000)
    got = _exchange(device, server, 0.2)
    assert got == [Frame(2, Source.READER, Result("WWWW", False), round="7", at=6000)]
    assert device.pending() == 0


def test_jsonl_noise_decodes_to_a_bad_frame_of_its_kind_and_only_the_reader_sends_it() -> None:
    device, _server = _ends("xocdia-jsonl", Source.READER)
    assert isinstance(device, ReaderEnd)
    device.open(0.0)
    device.take_output()
    for kind in NoiseKind:
        seq = device.forge_noise(kind, Source.READER, 0.0)
        [bad] = device.codec.decoder().feed(device.take_output())
        assert isinstance(bad, BadFrame) and (bad.reason, bad.seq) == (NOISE_REASON[kind], seq)
    with pytest.raises(EncodeError, match="READER"):
        device.forge_noise(NoiseKind.UNKNOWN_TYPE, Source.BOWL, 0.0)
    with pytest.raises(EncodeError):
        device.forge(Frame(0, Source.BOWL, BowlOff(False, None)), 0.0)
