"""Lotus Tables' polled binary controller protocol ("lotus-bin") as a kit-side dialect: ``LotusBinDialect``.

The older Lotus controller (server option ``--controller-protocol bin``) speaks only when polled. The server is the
poll master: every 100 ms it sends a poll (or a lamp command) and waits up to 250 ms for the controller's one reply.
Frames, with DLE stuffing (README.md, "Polled binary controller")::

    STX LEN TYPE SEQ PAYLOAD... XOR ETX
    STX 0x02, ETX 0x03; inside a frame 0x02, 0x03 and 0x10 are sent as DLE (0x10) followed by the byte XOR 0x40.
    LEN: the bytes of TYPE SEQ PAYLOAD; XOR: of LEN TYPE SEQ PAYLOAD.

    P seq [ack]              the server's poll; ack: the seq of the last event it accepted (0: none)
    C seq code round4 [arg]  a lamp command (round: 4 bytes, big-endian); OPEN carries no betting time
    E seq dev code [args]    the controller's reply with its oldest unacknowledged event (no round tag, no time)
    N 0                      the controller's reply when it has nothing to say

The controller keeps an event until a poll acknowledges its ``seq`` (1-255, cycling) and repeats it in every reply
until then; the server delivers each event once. A command is delivered once per ``seq``; the server repeats it
until a reply comes within 250 ms. The camera stays on its own JSON line, in the companion dialect ``lotus``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from lotus_dialect import LotusDialect

from harness.lab import (
    Ack,
    BadFrame,
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Delivered,
    DeviceEnd,
    Dialect,
    DialectError,
    Drop,
    DropItem,
    EncodeError,
    EndSettings,
    ErrorReason,
    Frame,
    FrameCodec,
    Heartbeat,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    LineSpec,
    LinkChanged,
    Message,
    NoiseKind,
    Problem,
    ProblemReason,
    ProtocolCapabilities,
    Reassembled,
    Received,
    Rejected,
    ReshakeReason,
    Resolved,
    RoleEvent,
    ServerEnd,
    ShakeEnd,
    ShakeStart,
    Source,
    StreamDecoder,
    TokensPlaced,
    VoidClause,
)

STX, ETX, DLE = 0x02, 0x03, 0x10
POLL_S = 0.1
REPLY_S = 0.25
MAX_FRAME = 64
MAX_ROUND = 2**32 - 1
_ROLES = (Source.BOWL, Source.SHAKER, Source.LAMP, Source.CONSOLE)

_NONE = 0xFF
_DEV = {Source.BOWL: ord("B"), Source.SHAKER: ord("S"), Source.CONSOLE: ord("D")}
_SRC = {v: k for k, v in _DEV.items()}
_SIMPLE: dict[type[Message], tuple[int, int]] = {
    BowlOn: (ord("B"), ord("N")),
    ShakeStart: (ord("S"), ord("S")),
    ShakeEnd: (ord("S"), ord("E")),
    TokensPlaced: (ord("D"), ord("T")),
    Reassembled: (ord("D"), ord("A")),
    ConsoleRearranged: (ord("D"), ord("R")),
    Resolved: (ord("D"), ord("K")),
}
_SIMPLE_CLS = {v: k for k, v in _SIMPLE.items()}
_ITEM = {DropItem.BOWL: ord("B"), DropItem.PLATE: ord("P"), DropItem.TOKEN: ord("T")}
_REASON = {ProblemReason.EQUIPMENT: ord("E"), ProblemReason.RESHAKE_CAP: ord("C")}
_RESHAKE = {ReshakeReason.DROP: ord("D"), ReshakeReason.STANDING: ord("S")}
_VOID = {VoidClause.SH_4A: ord("a"), VoidClause.SH_4B: ord("b"), VoidClause.SH_5: ord("5"), VoidClause.ERR_3: ord("3")}
_LAMP = {LampOpen: ord("O"), LampClose: ord("C"), LampPause: ord("P"), LampResume: ord("U")}
_LAMP_CLS = {v: k for k, v in _LAMP.items()}


def _stuff(data: bytes) -> bytes:
    out = bytearray()
    for b in data:
        out += bytes((DLE, b ^ 0x40)) if b in (STX, ETX, DLE) else bytes((b,))
    return bytes(out)


def seal(kind: str, seq: int, payload: bytes) -> bytes:
    """The wire bytes of one frame. Raises EncodeError for a ``seq`` outside 0-255 or a frame too long."""
    if not 0 <= seq <= 255:
        raise EncodeError(f"seq: must be 0..255; got {seq}")
    inner = bytes((ord(kind), seq)) + payload
    if len(inner) > MAX_FRAME:
        raise EncodeError(f"frame: at most {MAX_FRAME} bytes; got {len(inner)}")
    body = bytes((len(inner),)) + inner
    check = 0
    for b in body:
        check ^= b
    return bytes((STX,)) + _stuff(body + bytes((check,))) + bytes((ETX,))


def _token(token: int | None) -> int:
    return _NONE if token is None else token


def _round(text: str) -> bytes:
    if not text.isdigit() or int(text) > MAX_ROUND or (len(text) > 1 and text[0] == "0"):
        raise EncodeError(f"round: lotus-bin rounds are numbers 0..{MAX_ROUND}; got {text!r}")
    return int(text).to_bytes(4, "big")


class BinCodec(FrameCodec):
    """Frames of the polled controller line ↔ STX/ETX frames. A poll is ``Frame(seq, SRV, Ack(of))``; the
    controller's empty reply is ``Frame(0, LAMP, Heartbeat())``."""

    def encode(self, frame: Frame) -> bytes:
        msg = frame.message
        if frame.src is Source.SERVER:
            if isinstance(msg, Ack):
                if not 0 <= msg.of <= 255:
                    raise EncodeError(f"ack: must be 0..255; got {msg.of}")
                return seal("P", frame.seq, bytes((msg.of,)))
            code = _LAMP.get(type(msg))
            if isinstance(msg, LampReshake):
                return seal("C", frame.seq, bytes((ord("R"),)) + _round(msg.round) + bytes((_RESHAKE[msg.reason],)))
            if isinstance(msg, LampVoid):
                return seal("C", frame.seq, bytes((ord("V"),)) + _round(msg.round) + bytes((_VOID[msg.clause],)))
            if code is not None and isinstance(msg, LampOpen | LampClose | LampPause | LampResume):
                return seal("C", frame.seq, bytes((code,)) + _round(msg.round))
            raise EncodeError(f"message: the lotus-bin lamp takes no {type(msg).__name__}")
        if isinstance(msg, Heartbeat):
            return seal("N", 0, b"")
        if frame.src not in _DEV:
            raise EncodeError(f"src: the lotus-bin controller carries BOWL, SHAKER, CONSOLE, not {frame.src.value}")
        if isinstance(msg, BowlOff):
            payload = bytes((ord("B"), ord("F"), int(msg.touch), _token(msg.token)))
        elif isinstance(msg, Drop):
            payload = bytes((ord("S"), ord("D"), _ITEM[msg.item], _token(msg.token)))
        elif isinstance(msg, Problem):
            payload = bytes((ord("D"), ord("P"), _REASON[msg.reason]))
        elif type(msg) in _SIMPLE:
            payload = bytes(_SIMPLE[type(msg)])
        else:
            raise EncodeError(f"message: the lotus-bin controller does not carry {type(msg).__name__}")
        if payload[0] != _DEV[frame.src]:
            raise EncodeError(f"src: {frame.src.value} does not send {type(msg).__name__}")
        return seal("E", frame.seq, payload)

    def decoder(self) -> StreamDecoder:
        return _BinDecoder()


def _parse(inner: bytes, raw: bytes) -> Frame | BadFrame:
    kind, seq, p = chr(inner[0]), inner[1], inner[2:]
    tok = {_NONE: None, 0: 0, 1: 1, 2: 2, 3: 3}
    try:
        if kind == "P" and len(p) == 1:
            return Frame(seq, Source.SERVER, Ack(p[0]))
        if kind == "N" and not p:
            return Frame(0, Source.LAMP, Heartbeat())
        if kind == "C" and len(p) >= 5:
            code, rid, args = p[0], str(int.from_bytes(p[1:5], "big")), p[5:]
            message: Message
            if code == ord("R") and len(args) == 1:
                message = LampReshake(rid, {v: k for k, v in _RESHAKE.items()}[args[0]])
            elif code == ord("V") and len(args) == 1:
                message = LampVoid(rid, {v: k for k, v in _VOID.items()}[args[0]])
            elif code in _LAMP_CLS and not args:
                cls = _LAMP_CLS[code]
                message = LampOpen(rid, 0) if cls is LampOpen else cls(rid)
            else:
                return BadFrame(ErrorReason.TYPE, raw, f"unknown lamp command {code:#04x}")
            return Frame(seq, Source.SERVER, message)
        if kind == "E" and len(p) >= 2 and p[0] in _SRC:
            src, key = _SRC[p[0]], (p[0], p[1])
            if key in _SIMPLE_CLS and len(p) == 2:
                return Frame(seq, src, _SIMPLE_CLS[key]())
            if key == (ord("B"), ord("F")) and len(p) == 4 and p[2] in (0, 1):
                return Frame(seq, src, BowlOff(bool(p[2]), tok[p[3]]))
            if key == (ord("S"), ord("D")) and len(p) == 4:
                return Frame(seq, src, Drop({v: k for k, v in _ITEM.items()}[p[2]], tok[p[3]]))
            if key == (ord("D"), ord("P")) and len(p) == 3:
                return Frame(seq, src, Problem({v: k for k, v in _REASON.items()}[p[2]]))
            return BadFrame(ErrorReason.TYPE, raw, f"unknown event {bytes(p[:2])!r}", seq, src)
    except KeyError as exc:
        return BadFrame(ErrorReason.FIELD, raw, f"bad field value {exc}")
    return BadFrame(ErrorReason.TYPE, raw, f"unknown frame type {kind!r} with {len(p)} payload byte(s)")


class _BinDecoder:
    """STX … ETX frames with DLE stuffing; bytes outside a frame are ``garbage``. Never raises."""

    def __init__(self) -> None:
        self.frame: bytearray | None = None
        self.escaped = False
        self.junk = bytearray()

    def _flush(self, out: list[Frame | BadFrame]) -> None:
        if self.junk:
            out.append(BadFrame(ErrorReason.GARBAGE, bytes(self.junk), "bytes outside a frame"))
            self.junk.clear()

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for b in data:
            if b == STX:
                self._flush(out)
                if self.frame is not None:
                    out.append(BadFrame(ErrorReason.TRUNCATED, bytes(self.frame), "a frame cut by a new STX"))
                self.frame, self.escaped = bytearray(), False
            elif self.frame is None:
                self.junk.append(b)
            elif b == ETX:
                body, self.frame = bytes(self.frame), None
                if self.escaped:
                    out.append(BadFrame(ErrorReason.SYNTAX, body, "DLE before ETX"))
                else:
                    out.append(self._frame(body))
            elif self.escaped:
                self.frame.append(b ^ 0x40)
                self.escaped = False
            elif b == DLE:
                self.escaped = True
            else:
                self.frame.append(b)
                if len(self.frame) > MAX_FRAME + 2:
                    out.append(BadFrame(ErrorReason.TOO_LONG, bytes(self.frame), f"over {MAX_FRAME} bytes"))
                    self.frame = None
        self._flush(out)
        return out

    @staticmethod
    def _frame(body: bytes) -> Frame | BadFrame:
        if len(body) < 4 or body[0] != len(body) - 2:
            return BadFrame(ErrorReason.SYNTAX, body, "LEN does not match the frame")
        check = 0
        for b in body[:-1]:
            check ^= b
        if check != body[-1]:
            return BadFrame(ErrorReason.CRC, body, "XOR check failed")
        return _parse(body[1:-1], body)


# --- the dialogue ------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Event:
    seq: int
    src: Source
    message: Message


class BinDeviceEnd(DeviceEnd):
    """The polled controller: answers each poll or command with its oldest unacknowledged event (or nothing), drops
    an event once a poll acknowledges it, delivers each lamp command once per ``seq``; speaks only when polled."""

    def __init__(self, codec: BinCodec, settings: EndSettings, camera: FrameCodec | None = None) -> None:
        self.codec, self.roles, self.settings = codec, _ROLES, settings
        self.camera = camera  # a forged read goes out in the camera's own format
        self.decoder: StreamDecoder = codec.decoder()
        self.queue: deque[_Event] = deque()
        self.seq = 0
        self.last_cmd: int | None = None
        self.forged: deque[bytes] = deque()
        self.last_forged = 0
        self.opened = self.up = False
        self._last_rx = 0.0
        self._out = bytearray()
        self._events: list[RoleEvent] = []

    def open(self, now: float) -> None:
        self.opened, self.decoder, self._last_rx, self.last_cmd = True, self.codec.decoder(), now, None

    def close(self) -> None:
        self.opened = False
        if self.up:
            self.up = False
            self._events += [(r, LinkChanged(False, "connection closed")) for r in self.roles]

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        if src not in _DEV:
            raise ValueError(f"the lotus-bin controller reports for BOWL, SHAKER, CONSOLE, not {src}")
        self.seq = self.seq % 255 + 1
        self.codec.encode(Frame(self.seq, src, message))  # refuse it now, not when it is polled
        self.queue.append(_Event(self.seq, src, message))

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self._events.append((Source.LAMP, Rejected(item)))
                continue
            if item.src is not Source.SERVER:
                continue
            self._last_rx = now
            if not self.up:
                self.up = True
                self._events += [(r, LinkChanged(True, "polled")) for r in self.roles]
            msg = item.message
            if isinstance(msg, Ack):
                if self.queue and msg.of == self.queue[0].seq:
                    done = self.queue.popleft()
                    self._events.append((done.src, Delivered(done.seq, done.message)))
            elif item.seq != self.last_cmd:
                self.last_cmd = item.seq
                self._events.append((Source.LAMP, Received(item)))
            while self.opened and self.forged:  # what was forged since the last poll goes first, as one burst
                self._out += self.forged.popleft()
            if self.opened:
                head = self.queue[0] if self.queue else None
                reply = Frame(0, Source.LAMP, Heartbeat()) if head is None else Frame(head.seq, head.src, head.message)
                self._out += self.codec.encode(reply)
        return self.take_events()

    def poll(self, now: float) -> list[RoleEvent]:
        if self.up and now >= self._last_rx + self.settings.silence_s:
            self.up = False
            self._events += [(r, LinkChanged(False, "no poll")) for r in self.roles]
        return self.take_events()

    def next_deadline(self) -> float | None:
        due = self._last_rx + self.settings.silence_s if self.up else math.inf
        return None if math.isinf(due) else due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[RoleEvent]:
        events, self._events = self._events, []
        return events

    def pending(self) -> int:
        return len(self.queue)

    # Forging (harness.wire.dialects.capabilities): what is forged goes in the reply to the next poll, before the
    # controller's own answer (neither delayed nor renumbered), numbered 128 ahead of the controller's own numbers.
    def _forged_seq(self) -> int:
        seq = (self.seq + 127) % 255 + 1
        self.last_forged = seq if seq != self.last_forged else seq % 255 + 1
        return self.last_forged

    def forge(self, frame: Frame, now: float) -> int:
        """Put ``frame`` in the reply to the next poll, before the controller's own answer, as if ``frame.src`` sent it
        (a reader's read in the camera's JSON); returns its number. Raises EncodeError for what neither format can
        express, ValueError for a control message."""
        if isinstance(frame.message, Ack | Heartbeat):
            raise ValueError("a forged frame carries a device's data message, not the dialogue's own")
        seq = self._forged_seq()
        self.forged.append(self.forged_bytes(replace(frame, seq=seq)))
        return seq

    def forged_bytes(self, frame: Frame) -> bytes:
        """The bytes :meth:`forge` answers a poll with for ``frame``, numbered ``frame.seq``: a reader's read in the
        camera's JSON, every other report in the controller's binary, which carries no event time (ForgeEncoding:
        harness.wire.dialects.capabilities); writes nothing. Raises EncodeError for what neither format can
        express."""
        codec = self.camera if frame.src is Source.READER and self.camera is not None else self.codec
        return codec.encode(Frame(frame.seq, frame.src, frame.message, round=frame.round))

    def noise_kinds(self) -> frozenset[NoiseKind]:
        """Every kind: an unknown code, a bad field value, a missing field."""
        return frozenset(NoiseKind)

    def forge_noise(self, kind: NoiseKind, src: Source, now: float) -> int:
        """Put one frame of ``kind`` in the reply to the next poll, before the controller's own answer, as if ``src``
        sent it (its XOR holds); returns its number. Raises EncodeError for a device the controller does not carry."""
        if src not in _DEV:
            raise EncodeError(f"src: the lotus-bin controller carries BOWL, SHAKER, CONSOLE, not {src.value}")
        dev = _DEV[src]
        known = {Source.BOWL: b"BF", Source.SHAKER: b"SD", Source.CONSOLE: b"DP"}[src]  # a report with arguments
        payload = {
            NoiseKind.UNKNOWN_TYPE: bytes((dev, ord("?"))),
            NoiseKind.BAD_FIELD: known + b"\x09" + (b"" if src is Source.CONSOLE else bytes((_NONE,))),
            NoiseKind.MISSING_FIELD: known,
        }[kind]
        seq = self._forged_seq()
        self.forged.append(seal("E", seq, payload))
        return seq


class BinServerEnd(ServerEnd):
    """The poll master: a poll (acknowledging the last event taken) or the oldest queued lamp command every
    :data:`POLL_S`, one request at a time, each waiting :data:`REPLY_S` for its reply; a command is repeated until a
    reply comes. Delivers each event once."""

    def __init__(self, codec: BinCodec, settings: EndSettings, now: float) -> None:
        self.codec, self.roles, self.settings = codec, _ROLES, settings
        self.decoder = codec.decoder()
        self.commands: deque[tuple[int, Message]] = deque()
        self.seq = 0
        self.ack = 0
        self.acked = True  # the last event taken has been acknowledged by a poll
        self.waiting: tuple[float, bool] | None = None  # (deadline, is a command)
        self.next_poll = now
        self.up = True
        self._last_rx = now
        self._out = bytearray()

    def _next_seq(self) -> int:
        self.seq = self.seq % 255 + 1
        return self.seq

    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                continue
            if item.src is Source.SERVER or self.waiting is None:
                continue  # only a reply to the request in flight counts
            self._last_rx, self.up = now, True
            if self.waiting[1]:
                self.commands.popleft()
            self.waiting = None
            if not isinstance(item.message, Heartbeat) and item.seq != self.ack:
                self.ack, self.acked = item.seq, False
                out.append(item)
        return out

    def send(self, message: Message, now: float) -> None:
        self.commands.append((self._next_seq(), message))

    def tick(self, now: float) -> list[Source]:
        silent: list[Source] = []
        if self.waiting is not None and now >= self.waiting[0]:
            self.waiting = None  # no reply: the next cycle asks again
        if self.waiting is None and now >= self.next_poll:
            command = self.commands[0] if self.commands and self.acked else None
            if command is None:
                self._out += self.codec.encode(Frame(self._next_seq(), Source.SERVER, Ack(self.ack)))
                self.acked = True
            else:
                self._out += self.codec.encode(Frame(command[0], Source.SERVER, command[1]))
            self.waiting = (now + REPLY_S, command is not None)
            self.next_poll = now + POLL_S
        if self.up and now >= self._last_rx + self.settings.silence_s:
            self.up = False
            silent = list(self.roles)
        return silent

    def next_deadline(self) -> float | None:
        due = self.next_poll if self.waiting is None else min(self.waiting[0], max(self.next_poll, self.waiting[0]))
        if self.up:
            due = min(due, self._last_rx + self.settings.silence_s)
        return due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out


class LotusBinDialect(Dialect):
    """Lotus Tables' older table: the polled binary controller (bowl, shaker, desk, lamp); the camera, a push device,
    on its own JSON line in the companion dialect :class:`lotus_dialect.LotusDialect`. Both TCP, dialled by the
    server."""

    name = "lotus-bin"
    summary = "Lotus Tables, polled: STX/LEN/TYPE/SEQ/payload/XOR/ETX with DLE stuffing, 100 ms polls; camera: lotus"
    dialogue = "poll"
    carries = frozenset(_ROLES)
    capabilities: ClassVar[ProtocolCapabilities] = ProtocolCapabilities(
        round_tags=False,  # the controller's events carry no round: the server ties them to the round in play
        event_times=False,
        identities=False,
        confidence=False,
        betting_time_on_open=False,  # the lamp's OPEN carries no betting time
        round_ids="numeric",
    )
    defaults: ClassVar[Mapping[str, Any]] = {"camera_confidence": 0.97}

    def configure(self, options: Mapping[str, Any]) -> None:
        level = options["camera_confidence"]
        if type(level) not in (int, float) or not 0.0 <= level <= 1.0:
            raise DialectError(f"devices.options.camera_confidence: must be a number 0..1; got {level!r}")
        self.bin_codec = BinCodec()
        self.companion = LotusDialect({"camera_confidence": level})

    def lines(self, roles: Sequence[Source]) -> list[LineSpec]:
        """``controller`` (BOWL, SHAKER, LAMP, CONSOLE: polled), then the companion's ``camera`` (READER)."""
        ctl = tuple(r for r in _ROLES if r in roles)
        out = [LineSpec("controller", ctl, "tcp", self)] if ctl else []
        if Source.READER in roles:
            out += self.companion.lines([Source.READER])
        return out

    def codec(self) -> FrameCodec:
        return self.bin_codec

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        if line.roles == (Source.READER,):
            return self.companion.device_end(line, settings)
        return BinDeviceEnd(self.bin_codec, settings, self.companion.camera_codec)

    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        if line.roles == (Source.READER,):
            return self.companion.server_end(line, settings, now)
        return BinServerEnd(self.bin_codec, settings, now)
