"""The devices' end of an ``xocdia-bus`` line (docs/dialects/xocdia-bus.md §5).

Guarantees: :class:`BusDeviceEnd` emulates every device on one line: it answers each POLL to one of its addresses with
that device's oldest unacknowledged report (the same seq and bytes until a later POLL acknowledges it, also across a
reconnect) or NOTHING, and each lamp WRITE with an ACK; it speaks only when addressed. Sans I/O, like
:class:`harness.wire.link.Link`: fed bytes and the time, it says when it next needs to run.

It can forge (:class:`~harness.wire.dialects.capabilities.Forging`): the forged frames from a device of the line go in
that device's next reply that is not an offer again (the POLL acknowledged its last report, or it had none), before its
own answer, which is neither delayed nor renumbered; those from a device the line does not carry go in the next such
reply of any device of the line (the master refuses them). Forged frames are numbered :data:`FORGED_GAP` and more
ahead of the device's own next seq (:meth:`BusDeviceEnd.forged_seq`), so none is taken for a duplicate and none makes
the device's next report one. They are kept across a reconnect, like the devices' own reports.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace

from harness.wire.dialects.base import DeviceEnd, Dialect, EndSettings, LineSpec, RoleEvent
from harness.wire.dialects.bus.catalogue import ADDRESS, CODE_OF, EPS, MAX_SEQ, NAK, REPORT_CODES, Poll, next_seq
from harness.wire.dialects.bus.codec import CODEC
from harness.wire.dialects.capabilities import CheckFlip, LostAck, NoiseKind
from harness.wire.frame_errors import BadFrame, EncodeError, ErrorReason
from harness.wire.line_events import Delivered, LinkChanged, Received, Rejected
from harness.wire.messages import (
    LAMP_COMMANDS,
    Ack,
    BowlOff,
    Drop,
    Frame,
    Heartbeat,
    Hello,
    Message,
    Problem,
    Result,
    Source,
)

_REPORTS: dict[Source, frozenset[type[Message]]] = {
    src: frozenset(cls for owner, cls in REPORT_CODES.values() if owner is src) for src in Source
}
#: Forged seqs are FORGED_GAP..FORGED_GAP + FORGED_SPREAD - 1 ahead of the device's next seq (mod the data seqs
#: 1..255), one after the other: never within FORGED_SPREAD of the numbers the device uses next or used last.
FORGED_GAP = 128
FORGED_SPREAD = 64
#: A type code no message has (docs/dialects/xocdia-bus.md §3).
UNKNOWN_CODE = 0x7F
_RESULT, _BOWL_OFF, _DROP, _PROBLEM = CODE_OF[Result], CODE_OF[BowlOff], CODE_OF[Drop], CODE_OF[Problem]
#: Noise payloads (after ``ADDR TYPE SEQ``) per sender: (type, payload) with a field out of range, and with a field
#: missing (the lamp sends no report: a NAK). Reports end with the trailer's flags byte (0: no tag, no time).
_BAD_FIELD: dict[Source, tuple[int, bytes]] = {
    Source.READER: (_RESULT, b"RRRQ\x00\x00"),
    Source.BOWL: (_BOWL_OFF, b"\x02\xff\x00"),
    Source.SHAKER: (_DROP, b"\x09\xff\x00"),
    Source.CONSOLE: (_PROBLEM, b"\x09\x00"),
    Source.LAMP: (NAK, b"\x09"),
}
_MISSING_FIELD: dict[Source, tuple[int, bytes]] = {
    Source.READER: (_RESULT, b"RR"),
    Source.BOWL: (_BOWL_OFF, b"\x01"),
    Source.SHAKER: (_DROP, b"\x02"),
    Source.CONSOLE: (_PROBLEM, b""),
    Source.LAMP: (NAK, b""),
}
_FRAMER = CODEC.framer_factory()


def noise_frame(kind: NoiseKind, src: Source, seq: int) -> bytes:
    """The wire bytes (start byte, length, body, CRC-16/MODBUS) of a noise frame of ``kind`` from ``src``'s address
    numbered ``seq``: its CRC holds, and the bus decoder refuses it (``type`` for :attr:`NoiseKind.UNKNOWN_TYPE`,
    ``field`` for the others).

    Raises:
        EncodeError: ``src`` has no bus address, or ``seq`` is not 1..255.
    """
    addr = ADDRESS.get(src)
    if addr is None:
        raise EncodeError(f"xocdia-bus noise: src must be a device, got {src.value}")
    if not 1 <= seq <= MAX_SEQ:
        raise EncodeError(f"xocdia-bus noise: seq must be 1..{MAX_SEQ}, got {seq}")
    if kind is NoiseKind.UNKNOWN_TYPE:
        code, payload = UNKNOWN_CODE, b"\x00"
    else:
        code, payload = (_BAD_FIELD if kind is NoiseKind.BAD_FIELD else _MISSING_FIELD)[src]
    return _FRAMER.wrap(CODEC.integrity.seal(bytes((addr, code, seq)) + payload))


@dataclass(slots=True)
class _Report:
    """A report waiting or offered: its seq and bytes are fixed when first offered, and kept until acknowledged
    (also across a reconnect)."""

    message: Message
    round: str | None = None
    at: int | None = None
    seq: int = 0
    raw: bytes = b""
    damaged: bool = False  # its first offer goes out with one bit of its CRC flipped (flip_check)
    lose_ack: bool = False  # the first POLL that acknowledges it is taken for one that does not (lose_ack)


@dataclass(slots=True)
class _Unit:
    """One device on the line."""

    role: Source
    hello: Hello
    queue: deque[_Report] = field(default_factory=deque)
    flight: _Report | None = None  # the report offered in the last reply, until a poll acknowledges it
    hello_due: bool = False
    up: bool = False
    last_rx: float = 0.0
    next_seq: int = 1
    last_write: Frame | None = None  # the lamp: the last WRITE acted on (its seq and its command)
    forged: deque[bytes] = field(default_factory=deque)  # forged frames from this device, each one POLL's answer
    forged_count: int = 0
    last_forged: int = 0
    flip_due: bool = False  # its next fresh report goes out first with a damaged CRC
    lose_of: type[Message] | None = None  # the first acknowledgement of its next report of this kind is lost
    muted: bool = False  # gone quiet (mute): it neither hears nor answers requests addressed to it


class BusDeviceEnd(DeviceEnd):
    """Every device of one bus line: answers polls and lamp writes addressed to them (see the module doc)."""

    def __init__(self, dialect: Dialect, line: LineSpec, settings: EndSettings) -> None:
        self.roles = line.roles
        self.units = {r: _Unit(r, Hello(f"{r.value}-{settings.unit}", 1, settings.firmware)) for r in line.roles}
        self.require_ack = settings.require_ack
        self.silence_s = settings.silence_s
        self.decoder = CODEC.decoder()
        self.opened = False
        self._out = bytearray()
        self._events: list[RoleEvent] = []
        self._stray: deque[bytes] = deque()  # forged frames from devices not on this line: any POLL's answer
        self._stray_count = 0
        self._flips: list[tuple[Source, int, list[int]]] = []  # (device, seq, [offers, acknowledged]) per damage
        self._lost: list[tuple[Source, int, str, list[bool]]] = []  # per lost acknowledgement

    def open(self, now: float) -> None:
        self.opened = True
        self.decoder = CODEC.decoder()
        self._out.clear()
        for unit in self.units.values():
            unit.hello_due = True
            unit.last_rx = now
            unit.queue = deque(r for r in unit.queue if not isinstance(r.message, Hello))

    def close(self) -> None:
        self.opened = False
        for unit in self.units.values():
            if unit.up:
                unit.up = False
                self._events.append((unit.role, LinkChanged(False, "port closed")))

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        unit = self.units.get(src)
        if unit is None:
            raise ValueError(f"this line carries {', '.join(r.value for r in self.roles)}, not {src.value}")
        if type(message) not in _REPORTS[src]:
            raise ValueError(f"{src.value} does not report {type(message).__name__} on the bus")
        CODEC.encode(Frame(1, src, message, round=round, at=at))  # refuse a bad report now (EncodeError)
        unit.queue.append(_Report(message, round, at))

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        first = self.roles[0]
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self._events.append((item.src if item.src in self.units else first, Rejected(item)))
                continue
            msg = item.message
            if isinstance(msg, Poll):
                unit = self.units.get(msg.device)
                if unit is None:
                    self._reject(item, first, f"POLL to {msg.device.value}, which is not on this line")
                elif not unit.muted:
                    self._seen(unit, now)
                    self._answer_poll(unit, msg.ack)
            elif type(msg) in LAMP_COMMANDS:
                unit = self.units.get(Source.LAMP)
                if unit is None:
                    self._reject(item, first, "a lamp command, and the lamp is not on this line")
                elif not unit.muted:
                    self._seen(unit, now)
                    self._answer_write(unit, item)
            else:
                self._reject(item, item.src if item.src in self.units else first, "a reply on the devices' side")
        return self.take_events()

    def _reject(self, frame: Frame, role: Source, why: str) -> None:
        self._events.append((role, Rejected(BadFrame(ErrorReason.TYPE, CODEC.encode(frame), why, frame.seq, None))))

    def _seen(self, unit: _Unit, now: float) -> None:
        unit.last_rx = now
        if not unit.up:
            unit.up = True
            self._events.append((unit.role, LinkChanged(True, "polled by the master")))

    def _answer_poll(self, unit: _Unit, ack: int) -> None:
        flight = unit.flight
        if flight is not None and ack == flight.seq and flight.lose_ack:
            flight.lose_ack = False  # the acknowledgement is lost: the same report is offered again
            self._lost.append((unit.role, flight.seq, flight.message.TYPE, [False]))
        elif flight is not None and ack == flight.seq:
            self._delivered(unit, flight)
            self._events.append((unit.role, Delivered(ack, flight.message)))
            unit.flight = flight = None
        if unit.hello_due:  # the first answer after (re)opening is HELLO; an unacknowledged report waits behind it
            unit.hello_due = False
            if flight is not None and not isinstance(flight.message, Hello):
                unit.queue.appendleft(flight)  # keeps its seq: the master may still acknowledge it
            flight = unit.flight = _Report(unit.hello)
        elif flight is None and unit.queue:
            flight = unit.flight = unit.queue.popleft()
        if flight is None or not flight.seq:  # a fresh answer, not an offer again: forged frames may go before it
            self._put_forged_before(unit)
        if flight is None:
            self._out += CODEC.encode(Frame(0, unit.role, Heartbeat()))
            return
        if not flight.seq:
            flight.seq, unit.next_seq = unit.next_seq, next_seq(unit.next_seq)
            flight.raw = CODEC.encode(Frame(flight.seq, unit.role, flight.message, round=flight.round, at=flight.at))
            if not isinstance(flight.message, Hello):
                self._arm_faults(unit, flight)
        self._out += self._offer(unit, flight)
        if not self.require_ack:  # fire and forget: offered once
            unit.flight = None

    # --- link faults (capabilities CheckFlipping, AckLosing, Renumbering) ---------------------------------------
    def _arm_faults(self, unit: _Unit, flight: _Report) -> None:
        """Give a report offered for the first time the faults asked of its device."""
        if unit.flip_due:
            unit.flip_due = False
            flight.damaged = True
            self._flips.append((unit.role, flight.seq, [0, 0]))
        if unit.lose_of is not None and isinstance(flight.message, unit.lose_of):
            unit.lose_of = None
            flight.lose_ack = True

    def _offer(self, unit: _Unit, flight: _Report) -> bytes:
        """The bytes of one offer of ``flight``: its first offer damaged when it was armed so (then intact)."""
        for role, seq, record in self._flips:
            if role is unit.role and seq == flight.seq and not record[1]:
                record[0] += 1
        if not flight.damaged:
            return flight.raw
        flight.damaged = False
        raw = flight.raw  # START LEN body CRClo CRChi (docs/dialects/xocdia-bus.md §2)
        return raw[:-1] + bytes((raw[-1] ^ 1,))  # the CRC's high byte, one bit inverted

    def _delivered(self, unit: _Unit, flight: _Report) -> None:
        for role, seq, record in self._flips:
            if role is unit.role and seq == flight.seq:
                record[1] = 1
        for role, seq, _type, done in self._lost:
            if role is unit.role and seq == flight.seq:
                done[0] = True

    def _unit(self, src: Source) -> _Unit:
        unit = self.units.get(src)
        if unit is None:
            raise ValueError(f"this line carries {', '.join(r.value for r in self.roles)}, not {src.value}")
        return unit

    def flip_check(self, src: Source) -> None:
        """Device ``src``'s next report offered for the first time goes out with one bit of its CRC inverted; the
        master refuses it and repeats its POLL (same acknowledgement), and the device offers the report again,
        intact. Raises ValueError (a device the line does not carry)."""
        self._unit(src).flip_due = True

    def check_flips(self) -> tuple[CheckFlip, ...]:
        """The reports damaged so far, with how many times each was offered before a POLL acknowledged it."""
        return tuple(CheckFlip(role, seq, record[0], bool(record[1])) for role, seq, record in self._flips)

    def lose_ack(self, src: Source, kind: type[Message]) -> None:
        """The first POLL that acknowledges device ``src``'s next ``kind`` report is answered as if its
        acknowledgement were lost: the device offers the same report again (same seq, same bytes), and the master
        must take it for a duplicate. Raises ValueError (a device the line does not carry, or fire and forget)."""
        unit = self._unit(src)
        if not self.require_ack:
            raise ValueError("fire and forget: the devices expect no acknowledgement to lose")
        unit.lose_of = kind

    def acks_lost(self) -> tuple[LostAck, ...]:
        return tuple(LostAck(role, seq, type_, done[0]) for role, seq, type_, done in self._lost)

    def mute(self, src: Source) -> None:
        """Device ``src`` goes quiet (:class:`~harness.wire.dialects.capabilities.Muting`): it answers no POLL or
        WRITE addressed to it from now on (its reports wait, unsent); the other devices go on. Raises ValueError (a
        device the line does not carry)."""
        self._unit(src).muted = True

    def number_last(self, src: Source) -> tuple[int, int]:
        """Device ``src``'s next report is numbered 255 (:data:`MAX_SEQ`), the one after it 1. Raises ValueError (a
        device the line does not carry)."""
        self._unit(src).next_seq = MAX_SEQ
        return MAX_SEQ, next_seq(MAX_SEQ)

    def _answer_write(self, unit: _Unit, frame: Frame) -> None:
        # a repeat is the same write byte for byte; a restarted master numbers its writes from 1 again, so a new
        # command under the seq of the last one acted on is not a repeat (docs/dialects/xocdia-bus.md §5.3)
        if frame != unit.last_write:
            unit.last_write = frame
            self._events.append((unit.role, Received(frame)))
        self._out += CODEC.encode(Frame(0, unit.role, Ack(frame.seq)))

    def poll(self, now: float) -> list[RoleEvent]:
        for unit in self.units.values():
            if unit.up and now >= unit.last_rx + self.silence_s - EPS:
                unit.up = False
                self._events.append((unit.role, LinkChanged(False, f"not polled for {self.silence_s:g} s")))
        return self.take_events()

    def next_deadline(self) -> float | None:
        if not self.opened:
            return None
        due = min((u.last_rx + self.silence_s for u in self.units.values() if u.up), default=math.inf)
        return None if math.isinf(due) else due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[RoleEvent]:
        events, self._events = self._events, []
        return events

    def pending(self) -> int:
        """Reports queued or unacknowledged, and forged frames not yet sent."""
        return len(self._stray) + sum(
            len(u.queue) + (u.flight is not None) + len(u.forged) for u in self.units.values()
        )

    # --- forging (harness.wire.dialects.capabilities.Forging) ---------------------------------------------------
    def forged_seq(self, src: Source) -> int:
        """The next forged seq for ``src``: :data:`FORGED_GAP` plus 0..:data:`FORGED_SPREAD` - 1 (in turn) ahead of
        its next own seq, wrapping in 1..255, never the previous forged seq (for a device the line does not carry:
        ahead of 1)."""
        unit = self.units.get(src)
        if unit is None:
            self._stray_count += 1
            return (FORGED_GAP + self._stray_count % FORGED_SPREAD - 1) % MAX_SEQ + 1
        seq = (unit.next_seq - 1 + FORGED_GAP + unit.forged_count % FORGED_SPREAD) % MAX_SEQ + 1
        if seq == unit.last_forged:
            seq = seq % MAX_SEQ + 1
        unit.forged_count += 1
        unit.last_forged = seq
        return seq

    def _put_forged_before(self, unit: _Unit) -> None:
        """Write every forged frame waiting for ``unit``'s answer, and those from devices not on the line."""
        for waiting in (unit.forged, self._stray):
            while waiting:
                self._out += waiting.popleft()

    def _put_forged(self, src: Source, raw: bytes) -> None:
        unit = self.units.get(src)
        (self._stray if unit is None else unit.forged).append(raw)

    def forge(self, frame: Frame, now: float) -> int:
        """Queue ``frame`` as a forged answer (see the module doc), numbered :meth:`forged_seq`. Raises EncodeError
        (the bus cannot carry it: e.g. a report ``frame.src`` does not send) or ValueError (a control message)."""
        if frame.message.CONTROL:
            raise ValueError(f"{frame.message.TYPE} is a control message; a forged frame is a data frame")
        seq = self.forged_seq(frame.src)
        self._put_forged(frame.src, CODEC.encode(replace(frame, seq=seq)))
        return seq

    def forge_at(self, frame: Frame, via: Source, now: float) -> int:
        """Queue ``frame`` as a forged answer of device ``via`` (:class:`~harness.wire.dialects.capabilities.
        AddressForging`): its bytes are ``frame``'s, numbered :meth:`forged_seq` of ``via``, with ``via``'s address
        in place of its sender's and the CRC sealed again (a report type that address does not carry, which a
        master refuses as ``type``: docs/dialects/xocdia-bus.md §6 and §9). Raises ValueError (``via`` not on the line,
        or a control message) or EncodeError (the bus cannot carry the message)."""
        if frame.message.CONTROL:
            raise ValueError(f"{frame.message.TYPE} is a control message; a forged frame is a data frame")
        unit = self._unit(via)
        seq = self.forged_seq(via)
        raw = CODEC.encode(replace(frame, seq=seq))  # START LEN ADDR TYPE SEQ payload CRClo CRChi (§2)
        body = bytes((ADDRESS[via],)) + raw[3:-2]
        unit.forged.append(_FRAMER.wrap(CODEC.integrity.seal(body)))
        return seq

    def noise_kinds(self) -> frozenset[NoiseKind]:
        """Every kind (:func:`noise_frame`)."""
        return frozenset(NoiseKind)

    def forge_noise(self, kind: NoiseKind, src: Source, now: float) -> int:
        """Queue a noise frame (:func:`noise_frame`) from ``src`` as a forged answer, numbered :meth:`forged_seq`.
        Raises EncodeError (``src`` is not a device)."""
        if src not in ADDRESS:
            raise EncodeError(f"xocdia-bus noise: src must be a device, got {src.value}")
        seq = self.forged_seq(src)
        self._put_forged(src, noise_frame(kind, src, seq))
        return seq
