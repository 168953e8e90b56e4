"""A foreign vendor's polled binary controller protocol as a dialect, for the tests of declared capabilities.

Frames: ``STX LEN TYPE SEQ payload XOR ETX``, with every STX, ETX or DLE between STX and ETX sent as DLE followed by
the byte XOR 0x40 (:class:`~harness.wire.dialects.parts.StxEtxFramer`). ``LEN`` counts ``TYPE SEQ payload``; ``XOR``
is the XOR of ``LEN TYPE SEQ payload``. One device per serial line; the server is the poll master: it polls the
device (``POLL`` acknowledging the last report it got), the device answers with its oldest unacknowledged report or
``NOTHING``; the server writes lamp commands and the lamp answers ``ACK``.

What the protocol does not carry (:attr:`VendorPollDialect.capabilities`): no round tag and no event time on
reports, no betting time on ``OPEN`` (it decodes with ``ms`` 0, :data:`NO_BETTING_TIME`: the bench's lamp, told by
the declaration, shows betting open until ``CLOSE``), no HELLO (no identities), no token sensor (``CONSOLE TOKENS``);
round ids are unsigned 32-bit numbers.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from harness.wire.dialects.base import (
    ComposedCodec,
    DeviceEnd,
    Dialect,
    EndSettings,
    FrameCodec,
    Integrity,
    LineSpec,
    MessageMap,
    ProtocolCapabilities,
    RoleEvent,
    ServerEnd,
)
from harness.wire.dialects.parts import StxEtxFramer
from harness.wire.frame_errors import BadFrame, EncodeError, ErrorReason
from harness.wire.line_events import Delivered, LinkChanged, Received, Rejected
from harness.wire.messages import (
    LAMP_COMMANDS,
    Ack,
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Drop,
    DropItem,
    Frame,
    Heartbeat,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    Message,
    Problem,
    ProblemReason,
    ReaderRearranged,
    Reassembled,
    ReshakeReason,
    Resolved,
    Result,
    ShakeEnd,
    ShakeStart,
    Source,
    VoidClause,
)


@dataclass(frozen=True, slots=True)
class VendorPoll(Message):
    """The master asks the device on the line for its oldest report and acknowledges report ``ack`` (0: none)."""

    TYPE: ClassVar[str] = "POLL"
    SOURCES: ClassVar[frozenset[Source]] = frozenset({Source.SERVER})
    CONTROL: ClassVar[bool] = True
    ack: int


POLL, NOTHING, ACK = 0x01, 0x02, 0x03
ROLES = (Source.BOWL, Source.SHAKER, Source.READER, Source.LAMP, Source.CONSOLE)
#: Data messages: code -> (sender, class).
CODES: dict[int, tuple[Source, type[Message]]] = {
    0x20: (Source.BOWL, BowlOn),
    0x21: (Source.BOWL, BowlOff),
    0x30: (Source.SHAKER, ShakeStart),
    0x31: (Source.SHAKER, ShakeEnd),
    0x32: (Source.SHAKER, Drop),
    0x40: (Source.READER, Result),
    0x41: (Source.READER, ReaderRearranged),
    0x50: (Source.CONSOLE, Reassembled),
    0x51: (Source.CONSOLE, ConsoleRearranged),
    0x52: (Source.CONSOLE, Problem),
    0x53: (Source.CONSOLE, Resolved),
    0x60: (Source.SERVER, LampOpen),
    0x61: (Source.SERVER, LampClose),
    0x62: (Source.SERVER, LampReshake),
    0x63: (Source.SERVER, LampPause),
    0x64: (Source.SERVER, LampResume),
    0x65: (Source.SERVER, LampVoid),
}
CODE_OF = {cls: code for code, (_src, cls) in CODES.items()}
ITEMS, REASONS = tuple(DropItem), tuple(ProblemReason)
RESHAKES, CLAUSES = tuple(ReshakeReason), tuple(VoidClause)
NO_TOKEN = 0xFF
#: The betting time an OPEN decodes with: none is on the wire (``betting_time_on_open`` is not declared).
NO_BETTING_TIME = 0


class Xor(Integrity):
    """One byte: the XOR of the body's bytes."""

    name = "XOR"

    @staticmethod
    def xor(body: bytes) -> int:
        out = 0
        for b in body:
            out ^= b
        return out

    def seal(self, body: bytes) -> bytes:
        return body + bytes((self.xor(body),))

    def open(self, sealed: bytes) -> bytes | None:
        return sealed[:-1] if sealed and self.xor(sealed[:-1]) == sealed[-1] else None


def _round(value: object) -> bytes:
    if not isinstance(value, str) or not value.isdigit() or (len(value) > 1 and value[0] == "0"):
        raise EncodeError(f"round: must be a number 0..4294967295 without leading zeros; got {value!r}")
    number = int(value)
    if number > 2**32 - 1:
        raise EncodeError(f"round: must be a number 0..4294967295; got {value!r}")
    return number.to_bytes(4, "big")


def _pick(name: str, value: object, allowed: tuple[object, ...]) -> int:
    if value not in allowed:
        raise EncodeError(f"{name}: must be one of {', '.join(map(str, allowed))}; got {value!r}")
    return allowed.index(value)


def _token(value: object) -> int:
    if value is None:
        return NO_TOKEN
    if type(value) is not int or not 0 <= value <= 3:
        raise EncodeError(f"token: must be 0..3 or none; got {value!r}")
    return value


def _faces(value: object, letters: str) -> bytes:
    if not isinstance(value, str) or len(value) != 4 or set(value) - set(letters):
        raise EncodeError(f"faces: must be 4 of {letters}; got {value!r}")
    return value.encode("ascii")


def _payload(msg: Message) -> bytes:
    if isinstance(msg, BowlOff):
        return bytes((int(msg.touch is True), _token(msg.token)))
    if isinstance(msg, Drop):
        return bytes((_pick("item", msg.item, ITEMS), _token(msg.token)))
    if isinstance(msg, Result):
        return _faces(msg.faces, "RWSU") + bytes((int(msg.overlap is True),))
    if isinstance(msg, ReaderRearranged):
        return _faces(msg.faces, "RW")
    if isinstance(msg, Problem):
        return bytes((_pick("reason", msg.reason, REASONS),))
    if isinstance(msg, LampReshake):
        return _round(msg.round) + bytes((_pick("reason", msg.reason, RESHAKES),))
    if isinstance(msg, LampVoid):
        return _round(msg.round) + bytes((_pick("clause", msg.clause, CLAUSES),))
    if isinstance(msg, LampOpen | LampClose | LampPause | LampResume):
        return _round(msg.round)  # OPEN's betting time is not on this wire
    return b""


class VendorMap(MessageMap):
    """``LEN TYPE SEQ payload`` ↔ semantic frames."""

    def encode(self, frame: Frame) -> bytes:
        msg = frame.message
        if frame.round is not None or frame.at is not None:
            raise EncodeError("round/at: this protocol carries no round tag and no event time")
        if not 0 <= frame.seq <= 255:
            raise EncodeError(f"seq: must be 0..255; got {frame.seq!r}")
        if isinstance(msg, VendorPoll):
            if not 0 <= msg.ack <= 255:
                raise EncodeError(f"ack: must be 0..255; got {msg.ack!r}")
            code, payload = POLL, bytes((msg.ack,))
        elif isinstance(msg, Heartbeat):
            code, payload = NOTHING, bytes((_pick("src", frame.src, ROLES),))
        elif isinstance(msg, Ack):
            code, payload = ACK, bytes((msg.of & 0xFF,))
        elif type(msg) in CODE_OF and CODES[CODE_OF[type(msg)]][0] is frame.src:
            code, payload = CODE_OF[type(msg)], _payload(msg)
        else:
            raise EncodeError(f"type: {frame.src} {msg.TYPE} is not a message of this protocol")
        inner = bytes((code, frame.seq)) + payload
        return bytes((len(inner),)) + inner

    def decode(self, body: bytes) -> Frame | BadFrame:
        if len(body) < 3 or body[0] != len(body) - 1:
            return BadFrame(ErrorReason.SYNTAX, body, "LEN does not match the frame")
        code, seq, payload = body[1], body[2], body[3:]
        try:
            return self._decode(code, seq, payload)
        except (IndexError, ValueError, UnicodeDecodeError) as exc:
            return BadFrame(ErrorReason.FIELD, body, f"type 0x{code:02x}: {exc}", seq)

    @staticmethod
    def _decode(code: int, seq: int, p: bytes) -> Frame | BadFrame:
        def size(n: int) -> None:
            if len(p) != n:
                raise ValueError(f"payload of {len(p)} bytes, not {n}")

        def token(b: int) -> int | None:
            if b != NO_TOKEN and b > 3:
                raise ValueError(f"token {b}")
            return None if b == NO_TOKEN else b

        def round_id() -> str:
            return str(int.from_bytes(p[:4], "big"))

        def faces(raw: bytes, letters: str) -> str:
            text = raw.decode("ascii")
            if set(text) - set(letters):
                raise ValueError(f"faces {text!r}")
            return text

        def flag(b: int) -> bool:
            if b > 1:
                raise ValueError(f"flag {b}")
            return b == 1

        if code == POLL:
            size(1)
            return Frame(0, Source.SERVER, VendorPoll(p[0]))
        if code == NOTHING:
            size(1)
            return Frame(0, ROLES[p[0]], Heartbeat())
        if code == ACK:
            size(1)
            return Frame(0, Source.LAMP, Ack(p[0]))
        if code not in CODES or seq == 0:
            return BadFrame(ErrorReason.TYPE, bytes((code, seq)) + p, f"no data message 0x{code:02x}", seq)
        src, cls = CODES[code]
        msg: Message
        if cls is BowlOff:
            size(2)
            msg = BowlOff(flag(p[0]), token(p[1]))
        elif cls is Drop:
            size(2)
            msg = Drop(ITEMS[p[0]], token(p[1]))
        elif cls is Result:
            size(5)
            msg = Result(faces(p[:4], "RWSU"), flag(p[4]))
        elif cls is ReaderRearranged:
            size(4)
            msg = ReaderRearranged(faces(p, "RW"))
        elif cls is Problem:
            size(1)
            msg = Problem(REASONS[p[0]])
        elif cls is LampOpen:
            size(4)
            msg = LampOpen(round_id(), NO_BETTING_TIME)
        elif cls is LampReshake:
            size(5)
            msg = LampReshake(round_id(), RESHAKES[p[4]])
        elif cls is LampVoid:
            size(5)
            msg = LampVoid(round_id(), CLAUSES[p[4]])
        elif cls in (LampClose, LampPause, LampResume):
            size(4)
            msg = cls(round_id())
        else:
            size(0)
            msg = cls()
        return Frame(seq, src, msg)


def vendor_codec(framer: type[StxEtxFramer] = StxEtxFramer) -> ComposedCodec:
    """The vendor's codec: ``framer`` (STX/ETX with DLE stuffing), the XOR check and :class:`VendorMap`."""
    return ComposedCodec(framer, Xor(), VendorMap())


def _next(seq: int) -> int:
    return 1 if seq >= 255 else seq + 1


class VendorDeviceEnd(DeviceEnd):
    """The device on one line: answers each POLL with its oldest unacknowledged report (the same seq until a POLL
    acknowledges it) or NOTHING, and each lamp write with ACK; never speaks unpolled. Reports lose their round tag
    and event time (the protocol has none); a report the protocol has no frame for (``CONSOLE TOKENS``) is not one
    of this table's and is not queued."""

    def __init__(self, codec: FrameCodec, line: LineSpec, settings: EndSettings) -> None:
        self.roles = line.roles
        self.role = line.roles[0]
        self.codec = codec
        self.silence_s = settings.silence_s
        self.decoder = codec.decoder()
        self.queue: deque[Message] = deque()
        self.flight: tuple[int, Message] | None = None
        self.seq = 0
        self.up = False
        self.opened = False
        self.last_rx = 0.0
        self.last_write: Frame | None = None
        self._out = bytearray()
        self._events: list[RoleEvent] = []

    def open(self, now: float) -> None:
        self.opened, self.last_rx = True, now
        self.decoder = self.codec.decoder()

    def close(self) -> None:
        self.opened = False
        if self.up:
            self.up = False
            self._events.append((self.role, LinkChanged(False, "port closed")))

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        if src is not self.role:
            raise ValueError(f"this line carries {self.role.value}, not {src.value}")
        if type(message) in CODE_OF:
            self.queue.append(message)

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self._events.append((self.role, Rejected(item)))
                continue
            self.last_rx = now
            if not self.up:
                self.up = True
                self._events.append((self.role, LinkChanged(True, "polled by the master")))
            msg = item.message
            if isinstance(msg, VendorPoll):
                self._answer(msg.ack)
            elif type(msg) in LAMP_COMMANDS and self.role is Source.LAMP:
                if item != self.last_write:
                    self.last_write = item
                    self._events.append((self.role, Received(item)))
                self._out += self.codec.encode(Frame(0, self.role, Ack(item.seq)))
            else:
                bad = BadFrame(ErrorReason.TYPE, b"", f"{item.src} {msg.TYPE} on the device side", item.seq)
                self._events.append((self.role, Rejected(bad)))
        return self.take_events()

    def _answer(self, ack: int) -> None:
        if self.flight is not None and ack == self.flight[0]:
            self._events.append((self.role, Delivered(*self.flight)))
            self.flight = None
        if self.flight is None and self.queue:
            self.seq = _next(self.seq)
            self.flight = (self.seq, self.queue.popleft())
        if self.flight is None:
            self._out += self.codec.encode(Frame(0, self.role, Heartbeat()))
        else:
            self._out += self.codec.encode(Frame(self.flight[0], self.role, self.flight[1]))

    def poll(self, now: float) -> list[RoleEvent]:
        if self.up and now >= self.last_rx + self.silence_s - 1e-6:
            self.up = False
            self._events.append((self.role, LinkChanged(False, f"not polled for {self.silence_s:g} s")))
        return self.take_events()

    def next_deadline(self) -> float | None:
        return self.last_rx + self.silence_s if self.opened and self.up else None

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[RoleEvent]:
        events, self._events = self._events, []
        return events

    def pending(self) -> int:
        return len(self.queue) + (self.flight is not None)


class VendorServerEnd(ServerEnd):
    """The poll master of one line: one request at a time, a lamp write (until ACKed) before a poll, a poll every
    ``poll_interval_s`` (at once again while the device has reports), each repeated after ``response_timeout_s``;
    each new report handed on once; the device reported silent after ``silence_s`` without a reply."""

    def __init__(self, dialect: Dialect, codec: FrameCodec, line: LineSpec, settings: EndSettings, now: float) -> None:
        self.roles = line.roles
        self.role = line.roles[0]
        self.codec = codec
        self.decoder = codec.decoder()
        self.interval = float(dialect.options["poll_interval_s"])
        self.timeout = float(dialect.options["response_timeout_s"])
        self.silence_s = settings.silence_s
        self.writes: deque[Message] = deque()
        self.write_seq = 0
        self.ack = 0
        self.last_seq: int | None = None
        self.due = now  # when the next request goes (or the one out is repeated)
        self.waiting = False
        self.last_rx = now
        self.up = True
        self._out = bytearray()

    def _request(self, now: float) -> None:
        if self.writes:
            raw = self.codec.encode(Frame(self.write_seq, Source.SERVER, self.writes[0]))
        else:
            raw = self.codec.encode(Frame(0, Source.SERVER, VendorPoll(self.ack)))
        self._out += raw
        self.waiting, self.due = True, now + self.timeout

    def send(self, message: Message, now: float) -> None:
        if self.role is not Source.LAMP or type(message) not in LAMP_COMMANDS:
            raise ValueError(f"only lamp commands are written, on the lamp's line; not {type(message).__name__}")
        self.codec.encode(Frame(1, Source.SERVER, message))  # refuse a bad command now (EncodeError)
        self.writes.append(message)
        if len(self.writes) == 1:
            self.write_seq = _next(self.write_seq)

    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                continue
            self.last_rx, self.up, self.waiting = now, True, False
            msg = item.message
            if isinstance(msg, Ack):
                if self.writes and msg.of == self.write_seq:
                    self.writes.popleft()
                    if self.writes:
                        self.write_seq = _next(self.write_seq)
                self.due = now
            elif isinstance(msg, Heartbeat):
                self.due = now + self.interval
            else:
                if item.seq != self.last_seq:
                    self.last_seq = item.seq
                    out.append(item)
                self.ack = item.seq
                self.due = now  # poll again at once: it acknowledges this report and fetches the next
        return out

    def tick(self, now: float) -> list[Source]:
        if now >= self.due - 1e-6:
            self._request(now)
        if self.up and now >= self.last_rx + self.silence_s - 1e-6:
            self.up = False
            return [self.role]
        return []

    def next_deadline(self) -> float | None:
        return min(self.due, self.last_rx + self.silence_s) if self.up else self.due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out


class VendorPollDialect(Dialect):
    """The vendor's polled binary protocol (see the module doc)."""

    name = "vendor-poll"
    summary = "STX/LEN/TYPE/SEQ/payload/XOR/ETX with DLE stuffing, one device per line, the server polls"
    dialogue = "poll"
    defaults: ClassVar[dict[str, float]] = {"poll_interval_s": 0.05, "response_timeout_s": 0.02}
    server_keys = ("poll_interval_s", "response_timeout_s")
    capabilities = ProtocolCapabilities(
        round_tags=False,
        event_times=False,
        identities=False,
        token_sensor=False,
        betting_time_on_open=False,
        round_ids="numeric",
    )

    def codec(self) -> FrameCodec:
        return vendor_codec()

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return VendorDeviceEnd(self.codec(), line, settings)

    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        return VendorServerEnd(self, self.codec(), line, settings, now)


__all__ = ["VendorDeviceEnd", "VendorMap", "VendorPoll", "VendorPollDialect", "VendorServerEnd", "Xor", "vendor_codec"]
