"""The link faults a bench's device end can make (harness.wire.dialects.capabilities: CheckFlipping, AckLosing,
Renumbering, Muting, AddressForging), each against the reference server's own line end of the dialect
(gameserver.dialects): a damaged check is refused and the copy sent again taken once, a report sent again after a
lost acknowledgement is delivered once, the numbering crosses its wrap and the report after it is delivered, a muted
device is reported silent, a report in another address's reply is refused, and a bus master hands a report from an
address it does not poll on to the line guard, which counts it ``wrong_line``."""

from __future__ import annotations

import pytest

from gameserver.dialects import make_line
from gameserver.dialects.base import ServerLine
from gameserver.line_guard import WRONG_LINE, LineGuard
from gameserver.protocol import BadFrame as ServerBadFrame
from gameserver.protocol import Frame as ServerFrame
from harness.wire.dialects import EndSettings, load_dialect
from harness.wire.dialects.base import DeviceEnd
from harness.wire.dialects.capabilities import AckLosing, AddressForging, CheckFlipping, Forging, Muting, Renumbering
from harness.wire.messages import DEVICES, Drop, DropItem, Frame, Result, Source

STEP = 0.005
SILENCE = 3.0


def _pair(dialect: str, role: Source, options: dict[str, object] | None = None) -> tuple[DeviceEnd, ServerLine]:
    spec = next(s for s in load_dialect(dialect, options).lines(DEVICES) if role in s.roles)
    device = spec.dialect.device_end(spec, EndSettings(silence_s=SILENCE))
    roles = tuple(r.value for r in spec.roles)
    server = make_line(dialect, spec.name, roles, 0.0, SILENCE, spec.dialect.server_options())
    device.open(0.0)
    return device, server


class _Wire:
    """Runs a device end against a server line in virtual time, collecting what the server hands on."""

    def __init__(self, device: DeviceEnd, server: ServerLine) -> None:
        self.device, self.server, self.now = device, server, 0.0
        self.frames: list[ServerFrame] = []
        self.errors: list[ServerBadFrame] = []
        self.silent: list[str] = []

    def run(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            self.device.receive(self.server.take_output(), self.now)
            self.device.poll(self.now)
            for item in self.server.feed(self.device.take_output(), self.now):
                (self.errors if isinstance(item, ServerBadFrame) else self.frames).append(item)  # type: ignore[arg-type]
            self.silent += self.server.tick(self.now)
            self.now = round(self.now + STEP, 6)

    def of(self, type_: str) -> list[ServerFrame]:
        return [f for f in self.frames if f.type == type_]


CASES = [("xocdia-ascii", Source.READER), ("xocdia-bus", Source.READER)]


@pytest.mark.parametrize(("dialect", "role"), CASES)
def test_a_damaged_check_is_refused_and_the_copy_sent_again_delivered_once(dialect: str, role: Source) -> None:
    device, server = _pair(dialect, role)
    wire = _Wire(device, server)
    wire.run(0.3)
    assert isinstance(device, CheckFlipping)
    device.flip_check(role)
    device.send(role, Result("RWRW", False), wire.now, "7", 100)
    wire.run(0.5)
    assert [f.get("faces") for f in wire.of("RESULT")] == ["RWRW"]
    assert any(e.kind == "crc" for e in wire.errors), wire.errors
    [flip] = device.check_flips()
    assert flip.delivered and flip.sends == 2, flip


@pytest.mark.parametrize(("dialect", "role"), [("xocdia-ascii", Source.SHAKER), ("xocdia-bus", Source.SHAKER)])
def test_a_report_sent_again_after_a_lost_acknowledgement_is_delivered_once(dialect: str, role: Source) -> None:
    device, server = _pair(dialect, role)
    wire = _Wire(device, server)
    wire.run(0.3)
    assert isinstance(device, AckLosing)
    device.lose_ack(role, Drop)
    device.send(role, Drop(DropItem.BOWL, None), wire.now, "7", 100)
    wire.run(0.6)
    assert len(wire.of("DROP")) == 1, wire.frames
    [lost] = device.acks_lost()
    assert lost.delivered and lost.message == "DROP", lost


@pytest.mark.parametrize(
    ("dialect", "last", "after"),
    [("xocdia-ascii", 65_535, 1), ("xocdia-bus", 255, 1), ("xocdia-jsonl", 2**31 - 1, 2)],  # jsonl: hello 1, new run
)
def test_the_report_after_the_wrap_is_delivered(dialect: str, last: int, after: int) -> None:
    device, server = _pair(dialect, Source.READER)
    wire = _Wire(device, server)
    wire.run(0.3)
    assert isinstance(device, Renumbering)
    assert device.number_last(Source.READER) == (last, 1)
    device.send(Source.READER, Result("RRRR", False), wire.now, "7", 100)
    wire.run(0.3)
    device.send(Source.READER, Result("WWWW", False), wire.now, "8", 400)
    wire.run(0.3)
    got = [(f.seq, f.get("faces")) for f in wire.of("RESULT")]
    # the server's frames carry the ASCII protocol's seq range (1..65535): a jsonl seq is folded into it
    assert got == [((last - 1) % 65_535 + 1, "RRRR"), (after, "WWWW")]


def test_a_muted_bus_device_is_reported_silent_and_the_others_go_on() -> None:
    device, server = _pair("xocdia-bus", Source.READER)
    wire = _Wire(device, server)
    wire.run(0.3)
    assert isinstance(device, Muting)
    device.mute(Source.READER)
    device.send(Source.READER, Result("RRRR", False), wire.now, "7", 100)
    wire.run(SILENCE + 0.2)
    assert wire.silent == ["READER"] and not wire.of("RESULT")
    device.send(Source.SHAKER, Drop(DropItem.BOWL, None), wire.now, "7", 200)
    wire.run(0.2)
    assert len(wire.of("DROP")) == 1 and wire.silent == ["READER"]


def test_a_result_in_the_consoles_reply_is_refused_as_a_type_the_address_does_not_carry() -> None:
    device, server = _pair("xocdia-bus", Source.READER)
    wire = _Wire(device, server)
    wire.run(0.3)
    assert isinstance(device, AddressForging)
    device.forge_at(Frame(0, Source.READER, Result("RRRR", False), round="7", at=100), Source.CONSOLE, wire.now)
    wire.run(0.2)
    assert not wire.of("RESULT")
    assert any(e.kind == "type" and e.raw[:2] == b"\x05\xc0" for e in wire.errors), wire.errors


def test_a_report_from_an_address_the_master_does_not_poll_is_counted_wrong_line() -> None:
    options: dict[str, object] = {"lines": {"reader": ["reader"], "panel": ["bowl", "shaker", "lamp", "console"]}}
    device, server = _pair("xocdia-bus", Source.BOWL, options)  # the panel bus: the reader is on another line
    wire = _Wire(device, server)
    wire.run(0.3)
    assert isinstance(device, Forging)
    device.forge(Frame(0, Source.READER, Result("RRRR", False), round="7", at=100), wire.now)  # the reader's address
    wire.run(0.2)
    [stranger] = wire.of("RESULT")
    guard = LineGuard("panel", roles=server.roles)
    assert stranger.src == "READER" and not guard.check(stranger).accept
    assert guard.counts[WRONG_LINE] == 1
