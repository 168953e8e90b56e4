"""``xocdia-jsonl``: a JSON-lines result reader over TCP, like a camera or OCR reader (docs/dialects/xocdia-jsonl.md).

The reader is the only device this dialect carries: it pushes what it reads as one UTF-8 JSON object per line, with
its own device-clock timestamp (``ts``, milliseconds → the frame's event time ``at``), the round tag and a confidence
per token. The other devices of the table speak the *companion* dialect (option ``companion``, default
``xocdia-ascii``) on their own lines, so a table mixes serial devices and a networked camera.

The dialogue is the reader's own, not :class:`~harness.wire.protocol.link.Link`'s: the reader numbers its data objects
(``hello``, ``result``, ``rearranged``) once per power-up and never restarts the numbering on a reconnect, so the server
suppresses a result it already has even when the reader re-sends it on a new connection (the acknowledgement was lost
with the old one). Stop and wait, retransmission, heartbeats and silence follow docs/protocol.md §4-§5.

Confidence: the emulated reader sends ``1.0`` for every token it reads (R, W, S) and ``0.0`` for a token it cannot read
(U); a receiver reads a token below ``min_confidence`` as ``U`` (a ``rearranged`` read with such a token is refused).
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, NoReturn

from harness.wire.dialects.base import (
    ComposedCodec,
    DeviceEnd,
    Dialect,
    DialectError,
    EndSettings,
    FrameCodec,
    Framer,
    LineSpec,
    MessageMap,
    RoleEvent,
    ServerEnd,
    StreamDecoder,
)
from harness.wire.dialects.parts import NoIntegrity
from harness.wire.protocol.codec import NAK_FOR, BadFrame, EncodeError, ErrorReason, crc16, parse_frame
from harness.wire.protocol.link import Delivered, LinkChanged, LinkEvent, Refused, Rejected
from harness.wire.protocol.messages import (
    Ack,
    Frame,
    Heartbeat,
    Hello,
    Message,
    Nak,
    NakReason,
    ReaderRearranged,
    Result,
    Source,
)

#: The longest line, ``\n`` included.
MAX_LINE = 4096
#: Data objects are numbered 1..MAX_SEQ in one run of the reader (power-up to power-down); no wrap.
MAX_SEQ = 2**31 - 1
#: The largest device time: exact as a JSON number in every implementation (2^53 - 1).
MAX_TS = 2**53 - 1
DEFAULT_MIN_CONFIDENCE = 0.5
VERSION = 1
RETRY_S = 0.2
FAST_RETRIES = 5
SLOW_RETRY_S = 1.0
#: Data sequence numbers a server remembers (per line, per run) to suppress duplicates.
REMEMBER = 64

_VALUE = re.compile(r"[A-Za-z0-9._:-]{1,32}\Z")
_FACES = re.compile(r"[RWSU]{4}\Z")
_FACES_RW = re.compile(r"[RW]{4}\Z")
_ENVELOPE = frozenset({"v", "src", "type"})
#: type -> (required keys, optional keys) besides v, src and type.
_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "hello": (frozenset({"seq", "id", "proto", "fw"}), frozenset()),
    "result": (frozenset({"seq", "faces", "overlap", "confidence"}), frozenset({"round", "ts"})),
    "rearranged": (frozenset({"seq", "faces", "confidence"}), frozenset({"round", "ts"})),
    "hb": (frozenset(), frozenset()),
    "ack": (frozenset({"of"}), frozenset()),
    "nak": (frozenset({"of", "reason"}), frozenset()),
}
#: Who may send each type.
_SENDERS: dict[str, frozenset[Source]] = {
    "hello": frozenset({Source.READER}),
    "result": frozenset({Source.READER}),
    "rearranged": frozenset({Source.READER}),
    "hb": frozenset({Source.READER, Source.SERVER}),
    "ack": frozenset({Source.SERVER}),
    "nak": frozenset({Source.SERVER}),
}
_DATA = frozenset({"hello", "result", "rearranged"})
_CONTROL = frozenset({"hb", "ack", "nak"})
_SRC = {"READER": Source.READER, "SRV": Source.SERVER}
_NAK_REASONS = {r.value: r for r in NakReason}


# --- values ------------------------------------------------------------------------------------------------------


class _Bad(Exception):
    """A field error inside :meth:`JsonlMap.decode` (never escapes it)."""

    def __init__(self, reason: ErrorReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _is_int(value: object) -> bool:
    return type(value) is int  # bool is not an int here


def _int(obj: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = obj[key]
    if not _is_int(value) or not low <= value <= high:
        raise _Bad(ErrorReason.FIELD, f"{key}: must be a whole number {low}..{high}, got {_show(value)}")
    return int(value)


def _text(obj: Mapping[str, Any], key: str) -> str:
    value = obj[key]
    if type(value) is not str or not _VALUE.match(value):
        raise _Bad(ErrorReason.FIELD, f"{key}: must be 1 to 32 characters of A-Z a-z 0-9 . _ : -, got {_show(value)}")
    return value


def _show(value: object) -> str:
    text = json.dumps(value) if isinstance(value, str | int | float | bool) or value is None else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _confidence(obj: Mapping[str, Any]) -> list[float]:
    value = obj["confidence"]
    if type(value) is not list or len(value) != 4:
        raise _Bad(ErrorReason.FIELD, f"confidence: must be a list of 4 numbers, got {_show(value)}")
    out: list[float] = []
    for i, c in enumerate(value):
        if type(c) not in (int, float) or not 0.0 <= c <= 1.0:  # NaN fails the comparison; bool is refused
            raise _Bad(ErrorReason.FIELD, f"confidence[{i}]: must be a number 0..1, got {_show(c)}")
        out.append(float(c))
    return out


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


# --- framing ------------------------------------------------------------------------------------------------------


class LineFramer(Framer):
    """Lines ending in ``\\n``, at most ``max_line`` bytes with the ``\\n``. An empty line (``\\n`` or ``\\r\\n``) is
    a keepalive and yields nothing; a line too long is reported once (``too_long``) and skipped to its ``\\n``, so the
    tail of an over-long line is never taken for an object."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._skipping = False

    def wrap(self, sealed: bytes) -> bytes:
        return sealed + b"\n"

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        out: list[bytes | BadFrame] = []
        buf = self._buf
        buf += data
        start = 0
        limit = self.max_line
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                rest = len(buf) - start
                if self._skipping:
                    start = len(buf)
                elif rest >= limit:  # no room left for the '\n'
                    out.append(BadFrame(ErrorReason.TOO_LONG, bytes(buf[start : start + limit]), "line too long"))
                    self._skipping = True
                    start = len(buf)
                break
            if self._skipping:
                self._skipping = False
            else:
                line = bytes(buf[start:end])
                if len(line) + 1 > limit:
                    out.append(BadFrame(ErrorReason.TOO_LONG, line[:limit], "line too long"))
                elif line and line != b"\r":
                    out.append(line)
            start = end + 1
        del buf[:start]
        return out


# --- message map --------------------------------------------------------------------------------------------------


def _conf_text(faces: str) -> str:
    return ",".join("0.0" if f == "U" else "1.0" for f in faces)


class JsonlMap(MessageMap):
    """One JSON object (a line without its ``\\n``) ↔ a semantic frame. A token whose confidence is below
    ``min_confidence`` reads ``U``."""

    def __init__(self, min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> None:
        self.min_confidence = min_confidence

    # encoding: canonical, compact, keys in the order of the spec
    def encode(self, frame: Frame) -> bytes:
        msg, src, seq = frame.message, frame.src, frame.seq
        if frame.version != VERSION:
            raise EncodeError(f"version: xocdia-jsonl speaks version {VERSION}, got {frame.version!r}")
        kind = _TYPE_OF.get(type(msg))
        if kind is None or src not in _SENDERS[kind]:
            raise EncodeError(
                f"{src!s} {msg.TYPE}: xocdia-jsonl carries only the reader's hello, result, rearranged and hb, and the"
                " server's ack, nak and hb"
            )
        head = f'{{"v":1,"src":"{src.value}","type":"{kind}"'
        if kind in _DATA:
            if not _is_int(seq) or not 1 <= seq <= MAX_SEQ:
                raise EncodeError(f"{kind}: seq must be 1..{MAX_SEQ}, got {seq!r}")
            head += f',"seq":{seq}'
        elif seq != 0:
            raise EncodeError(f"{kind} is a control object: seq must be 0, got {seq!r}")
        if (frame.round is not None or frame.at is not None) and kind not in ("result", "rearranged"):
            raise EncodeError(f"{kind}: only result and rearranged carry round and ts")
        if isinstance(msg, Hello):
            if not (isinstance(msg.id, str) and _VALUE.match(msg.id)):
                raise EncodeError(f"hello: id must be 1 to 32 characters of A-Z a-z 0-9 . _ : -, got {msg.id!r}")
            if not (isinstance(msg.fw, str) and _VALUE.match(msg.fw)):
                raise EncodeError(f"hello: fw must be 1 to 32 characters of A-Z a-z 0-9 . _ : -, got {msg.fw!r}")
            if not _is_int(msg.proto) or not 0 <= msg.proto <= 65535:
                raise EncodeError(f"hello: proto must be 0..65535, got {msg.proto!r}")
            body = f'{head},"id":"{msg.id}","proto":{msg.proto},"fw":"{msg.fw}"}}'
        elif isinstance(msg, Result | ReaderRearranged):
            faces = msg.faces
            pattern = _FACES if isinstance(msg, Result) else _FACES_RW
            if not isinstance(faces, str) or not pattern.match(faces):
                allowed = "R, W, S or U" if isinstance(msg, Result) else "R or W"
                raise EncodeError(f"{kind}: faces must be 4 of {allowed}, got {faces!r}")
            body = f'{head},"faces":"{faces}"'
            if isinstance(msg, Result):
                if type(msg.overlap) is not bool:
                    raise EncodeError(f"result: overlap must be a bool, got {msg.overlap!r}")
                body += ',"overlap":true' if msg.overlap else ',"overlap":false'
            body += f',"confidence":[{_conf_text(faces)}]'
            if frame.round is not None:
                if not (isinstance(frame.round, str) and _VALUE.match(frame.round)):
                    raise EncodeError(f"{kind}: round must be 1 to 32 characters of A-Z a-z 0-9 . _ : -")
                body += f',"round":"{frame.round}"'
            if frame.at is not None:
                if not _is_int(frame.at) or not 0 <= frame.at <= MAX_TS:
                    raise EncodeError(f"{kind}: ts (the event time at) must be 0..{MAX_TS} ms, got {frame.at!r}")
                body += f',"ts":{frame.at}'
            body += "}"
        elif isinstance(msg, Ack):
            if not _is_int(msg.of) or not 1 <= msg.of <= MAX_SEQ:
                raise EncodeError(f"ack: of must be 1..{MAX_SEQ}, got {msg.of!r}")
            body = f'{head},"of":{msg.of}}}'
        elif isinstance(msg, Nak):
            if not _is_int(msg.of) or not 1 <= msg.of <= MAX_SEQ:
                raise EncodeError(f"nak: of must be 1..{MAX_SEQ}, got {msg.of!r}")
            if not isinstance(msg.reason, NakReason):
                raise EncodeError(f"nak: reason must be one of {', '.join(_NAK_REASONS)}, got {msg.reason!r}")
            body = f'{head},"of":{msg.of},"reason":"{msg.reason.value}"}}'
        else:  # Heartbeat
            body = head + "}"
        return body.encode("ascii")

    # decoding: strict schema
    def decode(self, body: bytes) -> Frame | BadFrame:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return BadFrame(ErrorReason.SYNTAX, body, "not UTF-8")
        try:
            obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except RecursionError:
            return BadFrame(ErrorReason.SYNTAX, body, "not JSON: nested too deep")
        except ValueError as exc:
            return BadFrame(ErrorReason.SYNTAX, body, f"not JSON: {str(exc)[:80]}")
        if type(obj) is not dict:
            return BadFrame(ErrorReason.SYNTAX, body, "not a JSON object")
        seq: int | None = None
        src_text = obj.get("src")
        src = _SRC.get(src_text) if type(src_text) is str else None
        kind = obj.get("type")
        raw_seq = obj.get("seq")
        control = type(kind) is str and kind in _CONTROL
        if src is Source.READER and type(raw_seq) is int and 1 <= raw_seq <= MAX_SEQ and not control:
            seq = raw_seq  # trustworthy enough to answer with a nak
        try:
            v = obj.get("v")
            if not _is_int(v):
                raise _Bad(ErrorReason.FIELD, f"v: must be the whole number {VERSION}, got {_show(v)}")
            if type(kind) is not str:
                raise _Bad(ErrorReason.FIELD, f"type: must be a string, got {_show(kind)}")
            if type(src_text) is not str:
                raise _Bad(ErrorReason.FIELD, f"src: must be READER or SRV, got {_show(src_text)}")
            if v != VERSION:
                raise _Bad(ErrorReason.VERSION, f"v {v}: this end speaks {VERSION}")
            if src is None:
                raise _Bad(ErrorReason.TYPE, f"src {_show(src_text)}: only READER and SRV speak on this line")
            keys = _KEYS.get(kind)
            if keys is None:
                raise _Bad(ErrorReason.TYPE, f"unknown type {_show(kind)}")
            if src not in _SENDERS[kind]:
                raise _Bad(ErrorReason.TYPE, f"{src.value} does not send {kind}")
            required, optional = keys
            given = obj.keys() - _ENVELOPE
            missing = sorted(required - given)
            if missing:
                raise _Bad(ErrorReason.FIELD, f"{kind}: missing {', '.join(missing)}")
            extra = sorted(given - required - optional)
            if extra:
                raise _Bad(ErrorReason.FIELD, f"{kind}: unknown key {extra[0]!r}")
            return self._frame(kind, src, obj)
        except _Bad as bad:
            return BadFrame(bad.reason, body, bad.detail, seq, src)

    def _frame(self, kind: str, src: Source, obj: dict[str, Any]) -> Frame:
        msg: Message
        if kind == "hb":
            return Frame(0, src, Heartbeat())
        if kind == "ack":
            return Frame(0, src, Ack(_int(obj, "of", 1, MAX_SEQ)))
        if kind == "nak":
            of = _int(obj, "of", 1, MAX_SEQ)
            reason = _NAK_REASONS.get(obj["reason"]) if type(obj["reason"]) is str else None
            if reason is None:
                raise _Bad(ErrorReason.FIELD, f"reason: must be one of {', '.join(_NAK_REASONS)}")
            return Frame(0, src, Nak(of, reason))
        seq = _int(obj, "seq", 1, MAX_SEQ)
        if kind == "hello":
            msg = Hello(_text(obj, "id"), _int(obj, "proto", 0, 65535), _text(obj, "fw"))
            return Frame(seq, src, msg)
        faces = obj["faces"]
        pattern = _FACES if kind == "result" else _FACES_RW
        if type(faces) is not str or not pattern.match(faces):
            allowed = "R, W, S or U" if kind == "result" else "R or W"
            raise _Bad(ErrorReason.FIELD, f"faces: must be 4 of {allowed}, got {_show(faces)}")
        confidence = _confidence(obj)
        low = [i for i, c in enumerate(confidence) if c < self.min_confidence and faces[i] != "U"]
        if low:
            if kind == "rearranged":
                raise _Bad(
                    ErrorReason.FIELD,
                    f"rearranged: token {low[0]} read with confidence {confidence[low[0]]:g},"
                    f" below {self.min_confidence:g}",
                )
            faces = "".join("U" if i in low else f for i, f in enumerate(faces))
        round_tag = _text(obj, "round") if "round" in obj else None
        at = _int(obj, "ts", 0, MAX_TS) if "ts" in obj else None
        if kind == "result":
            overlap = obj["overlap"]
            if type(overlap) is not bool:
                raise _Bad(ErrorReason.FIELD, f"overlap: must be true or false, got {_show(overlap)}")
            msg = Result(faces, overlap)
        else:
            msg = ReaderRearranged(faces)
        return Frame(seq, src, msg, round=round_tag, at=at)


_TYPE_OF: dict[type[Message], str] = {
    Hello: "hello",
    Result: "result",
    ReaderRearranged: "rearranged",
    Heartbeat: "hb",
    Ack: "ack",
    Nak: "nak",
}


def golden_frame(case: Mapping[str, Any], line: int = 0) -> Frame:
    """The frame a golden vector names: ``seq`` and ``message``, read through the ASCII protocol's parser. Raises
    ValueError naming the line when it does not parse."""
    seq = int(case["seq"])
    body = f"1 {min(seq, 1)} {case['message']}".encode("ascii")  # the ASCII parser stops at seq 65535
    parsed = parse_frame(b"$%s*%04X\r\n" % (body, crc16(body)))
    if isinstance(parsed, BadFrame):
        raise ValueError(f"golden vector line {line}: {parsed.reason.value}: {parsed.detail}")
    return replace(parsed, seq=seq)


def jsonl_codec(min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> FrameCodec:
    """The dialect's codec: :class:`LineFramer`, no integrity check (TCP), :class:`JsonlMap`."""
    return ComposedCodec(LineFramer, NoIntegrity(), JsonlMap(min_confidence))


# --- the reader's end -------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    message: Message
    round: str | None
    at: int | None
    seq: int | None = None  # fixed when first sent, kept across reconnects


@dataclass(slots=True)
class _Flight:
    item: _Item
    raw: bytes
    due: float
    tries: int = 0


class ReaderEnd(DeviceEnd):
    """The reader's end of its line: hello on every connection, then its reads, one unacknowledged at a time.

    Sequence numbers belong to the reader's run, not to a connection: a read that was not acknowledged when the
    connection dropped is re-sent after the next hello with its own ``seq``, so the server can tell it is a copy."""

    def __init__(self, codec: FrameCodec, settings: EndSettings) -> None:
        self.roles = (Source.READER,)
        self.codec = codec
        self.hello = Hello(f"READER-{settings.unit}", 1, settings.firmware)
        self.require_ack = settings.require_ack
        self.heartbeat_s = settings.heartbeat_s
        self.silence_s = settings.silence_s
        self.decoder: StreamDecoder = codec.decoder()
        self.queue: deque[_Item] = deque()
        self.inflight: _Flight | None = None
        self.opened = False
        self.up = False
        self._next_seq = 1
        self._last_rx = 0.0
        self._last_tx = 0.0
        self._out = bytearray()
        self._events: list[LinkEvent] = []

    def _tag(self, events: list[LinkEvent]) -> list[RoleEvent]:
        return [(Source.READER, e) for e in events]

    def open(self, now: float) -> None:
        flight, self.inflight = self.inflight, None
        if flight is not None:
            self.queue.appendleft(flight.item)
        if not (self.queue and isinstance(self.queue[0].message, Hello)):
            self.queue.appendleft(_Item(self.hello, None, None))  # an unacknowledged hello keeps its seq
        self.decoder = self.codec.decoder()
        self._out.clear()
        self._out += b"\n"  # ends whatever the last connection left half-written at the other end
        self.opened = True
        self._last_rx = now
        self._pump(now)

    def close(self) -> None:
        self.opened = False
        if self.up:
            self.up = False
            self._events.append(LinkChanged(False, "connection closed"))

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        if src is not Source.READER:
            raise ValueError(f"this line carries READER, not {src.value}")
        if not isinstance(message, Result | ReaderRearranged):
            raise ValueError(f"the reader sends RESULT and REARRANGED, not {message.TYPE}")
        self.codec.encode(Frame(1, Source.READER, message, round=round, at=at))  # refuse it now, not when it goes out
        self.queue.append(_Item(message, round, at))
        self._pump(now)

    def _emit(self, raw: bytes, now: float) -> None:
        self._out += raw
        self._last_tx = now

    def _pump(self, now: float) -> None:
        if not self.opened:
            return
        while self.queue and self.inflight is None:
            item = self.queue.popleft()
            if item.seq is None:
                if self._next_seq > MAX_SEQ:  # the run's numbers are used up: a new run, introduced by its hello
                    self._next_seq = 1
                    self.queue.appendleft(item)
                    item = _Item(self.hello, None, None)
                item.seq = self._next_seq
                self._next_seq += 1
            raw = self.codec.encode(Frame(item.seq, Source.READER, item.message, round=item.round, at=item.at))
            self._emit(raw, now)
            if self.require_ack:
                self.inflight = _Flight(item, raw, now + RETRY_S)

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self._events.append(Rejected(item))
                continue
            if item.src is not Source.SERVER:
                self._events.append(Rejected(BadFrame(ErrorReason.TYPE, b"", f"the reader does not take {item.src}")))
                continue
            self._last_rx = now
            if not self.up:
                self.up = True
                self._events.append(LinkChanged(True, "object from SRV"))
            msg = item.message
            flight = self.inflight
            if isinstance(msg, Ack | Nak) and flight is not None and msg.of == flight.item.seq:
                self.inflight = None
                if isinstance(msg, Ack):
                    self._events.append(Delivered(msg.of, flight.item.message))
                else:
                    self._events.append(Refused(msg.of, flight.item.message, msg.reason))
                self._pump(now)
        return self.take_events()

    def poll(self, now: float) -> list[RoleEvent]:
        flight = self.inflight
        if self.opened and flight is not None and now >= flight.due:
            flight.tries += 1
            if flight.tries == FAST_RETRIES + 1 and self.up:
                self.up = False
                self._events.append(
                    LinkChanged(False, f"no ack for seq {flight.item.seq} after {FAST_RETRIES} retries")
                )
            flight.due = now + (SLOW_RETRY_S if flight.tries > FAST_RETRIES else RETRY_S)
            self._emit(flight.raw, now)
        if self.up and now >= self._last_rx + self.silence_s:
            self.up = False
            self._events.append(LinkChanged(False, f"nothing received for {self.silence_s:g} s"))
        if self.opened and now >= self._last_tx + self.heartbeat_s:
            self._emit(self.codec.encode(Frame(0, Source.READER, Heartbeat())), now)
        return self.take_events()

    def next_deadline(self) -> float | None:
        if not self.opened:
            return None
        times = [self._last_tx + self.heartbeat_s]
        if self.inflight is not None:
            times.append(self.inflight.due)
        if self.up:
            times.append(self._last_rx + self.silence_s)
        soonest = min(times)
        return None if math.isinf(soonest) else soonest

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[RoleEvent]:
        events, self._events = self._events, []
        return self._tag(events)

    def pending(self) -> int:
        return len(self.queue) + (self.inflight is not None)


# --- a server's end -----------------------------------------------------------------------------------------------


class ReaderServerEnd(ServerEnd):
    """A server's end of the reader's line: acknowledges every data object, suppresses copies by ``seq`` within the
    reader's run, sends ``hb`` when quiet and reports silence. Delivers a ``hello`` only when it starts a new run
    (``seq`` 1): a hello that continues a run (a reconnect) changes nothing the server knows."""

    def __init__(self, codec: FrameCodec, settings: EndSettings, now: float) -> None:
        self.roles = (Source.READER,)
        self.codec = codec
        self.decoder = codec.decoder()
        self.heartbeat_s = settings.heartbeat_s
        self.silence_s = settings.silence_s
        self.up = True  # expected up from the start: a reader silent since the line opened is reported
        self._seen: deque[int] = deque(maxlen=REMEMBER)
        self._last_hello: int | None = None  # seq of the hello accepted last, while nothing was accepted after it
        self._last_rx = now
        self._last_tx = now
        self._out = bytearray()

    def _control(self, message: Message, now: float) -> None:
        self._out += self.codec.encode(Frame(0, Source.SERVER, message))
        self._last_tx = now

    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                nak = NAK_FOR.get(item.reason) if item.seq else None
                if nak is not None and item.src is Source.READER and item.seq is not None:
                    self._control(Nak(item.seq, nak), now)
                continue
            if item.src is not Source.READER:
                out.append(BadFrame(ErrorReason.TYPE, b"", f"{item.src} {item.message.TYPE} on the reader's line"))
                continue
            self._last_rx = now
            self.up = True
            msg = item.message
            if isinstance(msg, Heartbeat):
                continue
            seq = item.seq
            if isinstance(msg, Hello):
                if msg.proto != VERSION:
                    self._control(Nak(seq, NakReason.VERSION), now)
                    continue
                self._control(Ack(seq), now)
                if seq == self._last_hello:
                    continue  # the hello just accepted, again
                self._last_hello = seq
                if seq == 1:  # a new run: its numbers start again
                    self._seen.clear()
                    self._seen.append(seq)
                    out.append(item)
                elif seq not in self._seen:
                    self._seen.append(seq)
                continue
            self._control(Ack(seq), now)
            if seq in self._seen:
                continue  # a copy of a read already delivered
            self._seen.append(seq)
            self._last_hello = None
            out.append(item)
        return out

    def send(self, message: Message, now: float) -> None:
        raise ValueError(f"the reader takes no commands ({message.TYPE}): xocdia-jsonl carries only the reader")

    def tick(self, now: float) -> list[Source]:
        silent: list[Source] = []
        if self.up and now >= self._last_rx + self.silence_s:
            self.up = False
            silent.append(Source.READER)
        if now >= self._last_tx + self.heartbeat_s:
            self._control(Heartbeat(), now)
        return silent

    def next_deadline(self) -> float | None:
        due = self._last_tx + self.heartbeat_s
        if self.up:
            due = min(due, self._last_rx + self.silence_s)
        return None if math.isinf(due) else due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out


# --- the dialect ------------------------------------------------------------------------------------------------


class JsonlReaderDialect(Dialect):
    """The reader on a TCP line in JSON lines; the other devices in the companion dialect."""

    name = "xocdia-jsonl"
    summary = (
        "JSON-lines result reader over TCP (socket://): reads with the reader's own timestamps and per-token"
        " confidence, acknowledged by seq; the other devices speak the companion dialect"
    )
    dialogue = "push"
    carries = frozenset({Source.READER})
    integrity_checked = False  # TCP checks the bytes; the schema is checked strictly instead
    golden_file = "protocol/xocdia-jsonl/golden.jsonl"
    defaults: ClassVar[Mapping[str, Any]] = {
        "companion": "xocdia-ascii",
        "companion_options": {},
        "min_confidence": DEFAULT_MIN_CONFIDENCE,
    }
    server_keys = ("min_confidence",)

    def configure(self, options: Mapping[str, Any]) -> None:
        from harness.wire.dialects.registry import load_dialect, names  # lazy: the registry names this module

        level = options["min_confidence"]
        if type(level) not in (int, float) or not 0.0 <= level <= 1.0:
            raise DialectError(f"devices.options.min_confidence: must be a number 0..1; got {level!r}")
        self.min_confidence = float(level)
        companion = options["companion"]
        allowed = [n for n in names() if n != self.name]
        hint = f"allowed: {', '.join(allowed)} (or 'package.module:Class')"
        if not isinstance(companion, str) or not companion or companion == self.name:
            raise DialectError(f"devices.options.companion: must name another dialect; got {companion!r}; {hint}")
        companion_options = options["companion_options"]
        if not isinstance(companion_options, Mapping):
            raise DialectError(
                "devices.options.companion_options: must be a mapping (the companion's options);"
                f" got {companion_options!r}"
            )
        try:
            self.companion = load_dialect(companion, companion_options, field="devices.options.companion")
        except DialectError as exc:
            text = str(exc)
            if text.startswith("devices.options.companion: unknown dialect"):
                raise DialectError(f"devices.options.companion: unknown dialect {companion!r}; {hint}") from None
            if text.startswith("devices.options:"):  # the companion refused one of its options
                text = "devices.options.companion_options:" + text.removeprefix("devices.options:")
            elif text.startswith("devices.options."):
                text = "devices.options.companion_options." + text.removeprefix("devices.options.")
            raise DialectError(text) from None
        if isinstance(self.companion, JsonlReaderDialect):
            raise DialectError(f"devices.options.companion: must name another dialect; got {companion!r}; {hint}")
        self._codec = jsonl_codec(self.min_confidence)

    def lines(self, roles: Sequence[Source]) -> list[LineSpec]:
        """The reader's TCP line (``reader``), then the companion's lines for the other roles."""
        out = [LineSpec("reader", (Source.READER,), "tcp", self)] if Source.READER in roles else []
        others = [r for r in roles if r is not Source.READER]
        if others:
            lacking = [r.value for r in others if r not in self.companion.carries]
            if lacking:
                raise DialectError(
                    f"devices.options.companion: {self.companion.name!r} does not carry {', '.join(lacking)};"
                    " the companion must carry every device but the reader"
                )
            out += self.companion.lines(others)
        return out

    def codec(self) -> FrameCodec:
        return self._codec

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        if line.roles != (Source.READER,):
            return self.companion.device_end(line, settings)
        return ReaderEnd(self._codec, settings)

    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        if line.roles != (Source.READER,):
            return self.companion.server_end(line, settings, now)
        return ReaderServerEnd(self._codec, settings, now)

    def parse_golden(self, text: str) -> list[tuple[Frame, bytes]]:
        """The canonical vectors of :attr:`golden_file`: each line's ``bytes`` (the exact line) and its frame, written
        as ``seq`` and ``message`` (the message in the text of docs/protocol.md: ``READER RESULT faces=RWRR overlap=0
        round=12 at=5000``). Vectors marked ``"canonical": false`` only decode to their frame and are left out."""
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            case = json.loads(line)
            if not case.get("canonical", True):
                continue
            out.append((golden_frame(case, n), case["bytes"].encode("utf-8")))
        return out

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["companion"] = self.companion.name
        out["medium"] = "tcp"
        return out
