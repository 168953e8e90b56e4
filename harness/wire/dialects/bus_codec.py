"""The frames of ``xocdia-bus`` (docs/dialects/xocdia-bus.md): a start byte, a length byte, a binary body and a
CRC-16/MODBUS, low byte first. The body is ``ADDR TYPE SEQ`` and the message's fields.

- :class:`BusFramer`: the parts library's length-prefixed framer that *hunts* for frames: a candidate whose check
  fails costs only its start byte (the scan resumes at the next start byte inside it), so a cut or corrupted frame
  never takes the frame after it down with it.
- :class:`BusMessageMap`: bodies ↔ semantic frames (one type byte per message, fields as fixed bytes or
  length-prefixed text, the round tag as text and the event time as a uint32 with a long form).
- :class:`Poll`: the bus master's poll request, the one message this dialect adds to the protocol's catalogue.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from harness.wire.dialects.base import ComposedCodec, Integrity, MessageMap
from harness.wire.dialects.parts import Crc16Modbus, LengthPrefixedFramer
from harness.wire.protocol.codec import BadFrame, EncodeError, ErrorReason
from harness.wire.protocol.fields import VALUE
from harness.wire.protocol.messages import (
    TAGGABLE,
    Ack,
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Drop,
    DropItem,
    Frame,
    Heartbeat,
    Hello,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    Message,
    Nak,
    NakReason,
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
    TokensPlaced,
    VoidClause,
)

START = 0xA5
#: Largest value of the length byte (body and CRC); the longest defined frame (a HELLO with 32-character id and fw)
#: has 73.
MAX_LEN = 128
MIN_LEN = 5  # ADDR TYPE SEQ + CRC
MAX_SEQ = 255
MAX_MS = 86_400_000
UINT32 = 1 << 32
AT_LIMIT = 10**32  # an event time has at most 32 decimal digits (docs/protocol.md §6)

#: Bus addresses, fixed by role.
ADDRESS: dict[Source, int] = {
    Source.BOWL: 1,
    Source.SHAKER: 2,
    Source.READER: 3,
    Source.LAMP: 4,
    Source.CONSOLE: 5,
}
ROLE_AT: dict[int, Source] = {a: s for s, a in ADDRESS.items()}


@dataclass(frozen=True, slots=True)
class Poll(Message):
    """The master asks ``device`` for its oldest queued report and acknowledges the report ``ack`` it got last from
    it (0: none). A control frame (seq 0)."""

    TYPE: ClassVar[str] = "POLL"
    SOURCES: ClassVar[frozenset[Source]] = frozenset({Source.SERVER})
    CONTROL: ClassVar[bool] = True
    device: Source
    ack: int


# --- type codes ----------------------------------------------------------------------------------------------------

POLL = 0x01
NOTHING, ACK, NAK, HELLO = 0x80, 0x81, 0x82, 0x90
#: Lamp commands (requests to the lamp's address): code -> class.
LAMP_CODES: dict[int, type[Message]] = {
    0x10: LampOpen,
    0x11: LampClose,
    0x12: LampReshake,
    0x13: LampPause,
    0x14: LampResume,
    0x15: LampVoid,
}
#: Device reports: code -> (role, class).
REPORT_CODES: dict[int, tuple[Source, type[Message]]] = {
    0xA0: (Source.BOWL, BowlOn),
    0xA1: (Source.BOWL, BowlOff),
    0xB0: (Source.SHAKER, ShakeStart),
    0xB1: (Source.SHAKER, ShakeEnd),
    0xB2: (Source.SHAKER, Drop),
    0xC0: (Source.READER, Result),
    0xC1: (Source.READER, ReaderRearranged),
    0xE0: (Source.CONSOLE, TokensPlaced),
    0xE1: (Source.CONSOLE, Reassembled),
    0xE2: (Source.CONSOLE, ConsoleRearranged),
    0xE3: (Source.CONSOLE, Problem),
    0xE4: (Source.CONSOLE, Resolved),
}
_CODE_OF: dict[type[Message], int] = {
    **{cls: code for code, cls in LAMP_CODES.items()},
    **{cls: code for code, (_src, cls) in REPORT_CODES.items()},
}

#: Enumerations as one byte each (the value's index).
DROP_ITEMS = (DropItem.BOWL, DropItem.PLATE, DropItem.TOKEN)
PROBLEMS = (ProblemReason.EQUIPMENT, ProblemReason.RESHAKE_CAP)
RESHAKES = (ReshakeReason.DROP, ReshakeReason.STANDING)
CLAUSES = (VoidClause.SH_4A, VoidClause.SH_4B, VoidClause.SH_5, VoidClause.ERR_3)
NAKS = (NakReason.VERSION, NakReason.TYPE, NakReason.FIELD, NakReason.STATE)
NO_TOKEN = 0xFF

FLAG_ROUND, FLAG_AT32, FLAG_ATLONG = 0x01, 0x02, 0x04


class _Field(ValueError):
    """A field that cannot be encoded or decoded (internal; becomes EncodeError or a ``field`` BadFrame)."""


# --- encoding ------------------------------------------------------------------------------------------------------


def _text(name: str, v: Any) -> bytes:
    if not isinstance(v, str) or not VALUE.match(v):
        raise _Field(f"{name}: must be 1-32 characters of A-Z a-z 0-9 . _ : -, got {v!r}")
    return bytes((len(v),)) + v.encode("ascii")


def _index(name: str, v: Any, allowed: tuple[Any, ...]) -> bytes:
    if v not in allowed or not isinstance(v, type(allowed[0])):
        raise _Field(f"{name}: must be one of {'|'.join(str(a) for a in allowed)}, got {v!r}")
    return bytes((allowed.index(v),))


def _bool(name: str, v: Any) -> bytes:
    if type(v) is not bool:
        raise _Field(f"{name}: must be a bool, got {v!r}")
    return b"\x01" if v else b"\x00"


def _token(v: Any) -> bytes:
    if v is None:
        return bytes((NO_TOKEN,))
    if type(v) is not int or not 0 <= v <= 3:
        raise _Field(f"token: must be a token 0..3 or None, got {v!r}")
    return bytes((v,))


def _faces(v: Any, allowed: str) -> bytes:
    if not isinstance(v, str) or len(v) != 4 or v.strip(allowed):
        raise _Field(f"faces: must be 4 characters of {allowed}, got {v!r}")
    return v.encode("ascii")


def _uint(name: str, v: Any, low: int, high: int, size: int) -> bytes:
    if type(v) is not int or not low <= v <= high:
        raise _Field(f"{name}: must be a whole number {low}..{high}, got {v!r}")
    return v.to_bytes(size, "big")


def _payload(msg: Message) -> bytes:
    """The catalogue fields of a report, HELLO or lamp command."""
    if isinstance(msg, Hello):
        return _text("id", msg.id) + _uint("proto", msg.proto, 1, 65535, 2) + _text("fw", msg.fw)
    if isinstance(msg, BowlOff):
        if msg.touch != (msg.token is not None):
            raise _Field("token: must be 0..3 when touch=1 and None when touch=0")
        return _bool("touch", msg.touch) + _token(msg.token)
    if isinstance(msg, Drop):
        if (msg.item is DropItem.TOKEN) != (msg.token is not None):
            raise _Field("token: must be 0..3 when item=token and None otherwise")
        return _index("item", msg.item, DROP_ITEMS) + _token(msg.token)
    if isinstance(msg, Result):
        return _faces(msg.faces, "RWSU") + _bool("overlap", msg.overlap)
    if isinstance(msg, ReaderRearranged):
        return _faces(msg.faces, "RW")
    if isinstance(msg, Problem):
        return _index("reason", msg.reason, PROBLEMS)
    if isinstance(msg, LampOpen):
        return _text("round", msg.round) + _uint("ms", msg.ms, 0, MAX_MS, 4)
    if isinstance(msg, LampReshake):
        return _text("round", msg.round) + _index("reason", msg.reason, RESHAKES)
    if isinstance(msg, LampVoid):
        return _text("round", msg.round) + _index("clause", msg.clause, CLAUSES)
    if isinstance(msg, LampClose | LampPause | LampResume):
        return _text("round", msg.round)
    return b""


def _trailer(round_: str | None, at: int | None) -> bytes:
    flags = 0
    out = b""
    if round_ is not None:
        flags |= FLAG_ROUND
        out += _text("round", round_)
    if at is not None:
        if type(at) is not int or not 0 <= at < AT_LIMIT:
            raise _Field(f"at: must be a whole number of milliseconds, 0 or more, at most 32 digits, got {at!r}")
        if at < UINT32:
            flags |= FLAG_AT32
            out += at.to_bytes(4, "big")
        else:
            flags |= FLAG_ATLONG
            size = (at.bit_length() + 7) // 8
            out += bytes((size,)) + at.to_bytes(size, "big")
    return bytes((flags,)) + out


def _seq(name: str, seq: Any, low: int) -> int:
    if type(seq) is not int or not low <= seq <= MAX_SEQ:
        raise _Field(f"{name}: must be {low}..{MAX_SEQ} on the bus, got {seq!r}")
    return seq


def encode_body(frame: Frame) -> bytes:
    """The body (``ADDR TYPE SEQ`` and fields) of ``frame``. Raises EncodeError naming the field."""
    msg = frame.message
    src = frame.src
    name = f"{src!s} {msg.TYPE or type(msg).__name__}"
    try:
        if frame.version != 1:
            raise _Field(f"version: the bus carries version 1 only, got {frame.version!r}")
        if src not in msg.SOURCES:
            raise _Field(f"src: {msg.TYPE} is not sent by {src!s}")
        if (frame.round is not None or frame.at is not None) and type(msg) not in TAGGABLE:
            raise _Field("round/at: only device reports (not HELLO, not the lamp, not control) carry them")
        if isinstance(msg, Poll):
            addr = ADDRESS.get(msg.device)
            if addr is None:
                raise _Field(f"device: must be a device, got {msg.device!r}")
            if frame.seq != 0:
                raise _Field(f"seq: POLL is a control frame, seq must be 0, got {frame.seq!r}")
            return bytes((addr, POLL, _seq("ack", msg.ack, 0)))
        if type(msg) in LAMP_CODES.values():
            if src is not Source.SERVER:
                raise _Field("src: lamp commands come from SRV")
            head = bytes((ADDRESS[Source.LAMP], _CODE_OF[type(msg)], _seq("seq", frame.seq, 1)))
            return head + _payload(msg)
        addr = ADDRESS.get(src)
        if addr is None:
            raise _Field(f"src: {msg.TYPE} replies come from a device, not {src!s}")
        if isinstance(msg, Heartbeat | Ack | Nak):
            if frame.seq != 0:
                raise _Field(f"seq: {msg.TYPE} is a control frame, seq must be 0, got {frame.seq!r}")
            if isinstance(msg, Heartbeat):
                return bytes((addr, NOTHING, 0))
            if isinstance(msg, Ack):
                return bytes((addr, ACK, _seq("of", msg.of, 1)))
            return bytes((addr, NAK, _seq("of", msg.of, 1))) + _index("reason", msg.reason, NAKS)
        if isinstance(msg, Hello):
            return bytes((addr, HELLO, _seq("seq", frame.seq, 1))) + _payload(msg)
        code = _CODE_OF.get(type(msg))
        if code is None:
            raise _Field(f"type: {type(msg).__name__} has no bus encoding")
        head = bytes((addr, code, _seq("seq", frame.seq, 1)))
        return head + _payload(msg) + _trailer(frame.round, frame.at)
    except _Field as exc:
        raise EncodeError(f"xocdia-bus {name}: {exc}") from None


# --- decoding ------------------------------------------------------------------------------------------------------


class _Reader:
    """Reads fields off a body; raises _Field at the first one that is missing or malformed."""

    __slots__ = ("body", "pos")

    def __init__(self, body: bytes, pos: int) -> None:
        self.body, self.pos = body, pos

    def take(self, n: int, name: str) -> bytes:
        end = self.pos + n
        if end > len(self.body):
            raise _Field(f"{name}: body ends early")
        out = self.body[self.pos : end]
        self.pos = end
        return out

    def byte(self, name: str) -> int:
        return self.take(1, name)[0]

    def text(self, name: str) -> str:
        size = self.byte(name)
        raw = self.take(size, name)
        value = raw.decode("latin-1")
        if not VALUE.match(value):
            raise _Field(f"{name}: {raw!r} is not 1-32 characters of A-Z a-z 0-9 . _ : -")
        return value

    def index(self, name: str, allowed: tuple[Any, ...]) -> Any:
        n = self.byte(name)
        if n >= len(allowed):
            raise _Field(f"{name}: code {n} is not one of 0..{len(allowed) - 1}")
        return allowed[n]

    def bool(self, name: str) -> bool:
        n = self.byte(name)
        if n > 1:
            raise _Field(f"{name}: must be 0 or 1, got {n}")
        return n == 1

    def token(self) -> int | None:
        n = self.byte("token")
        if n == NO_TOKEN:
            return None
        if n > 3:
            raise _Field(f"token: must be 0..3 or 0xFF, got {n}")
        return n

    def faces(self, allowed: str) -> str:
        raw = self.take(4, "faces").decode("latin-1")
        if raw.strip(allowed):
            raise _Field(f"faces: must be 4 characters of {allowed}, got {raw!r}")
        return raw

    def uint(self, name: str, size: int, low: int, high: int) -> int:
        n = int.from_bytes(self.take(size, name), "big")
        if not low <= n <= high:
            raise _Field(f"{name}: must be {low}..{high}, got {n}")
        return n

    def end(self) -> None:
        if self.pos != len(self.body):
            raise _Field(f"{len(self.body) - self.pos} byte(s) after the last field")


def _read_payload(cls: type[Message], r: _Reader) -> Message:
    if cls is Hello:
        return Hello(r.text("id"), r.uint("proto", 2, 1, 65535), r.text("fw"))
    if cls is BowlOff:
        touch, token = r.bool("touch"), r.token()
        if touch != (token is not None):
            raise _Field("token: must be 0..3 when touch=1 and 0xFF when touch=0")
        return BowlOff(touch, token)
    if cls is Drop:
        item, token = r.index("item", DROP_ITEMS), r.token()
        if (item is DropItem.TOKEN) != (token is not None):
            raise _Field("token: must be 0..3 when item=token and 0xFF otherwise")
        return Drop(item, token)
    if cls is Result:
        return Result(r.faces("RWSU"), r.bool("overlap"))
    if cls is ReaderRearranged:
        return ReaderRearranged(r.faces("RW"))
    if cls is Problem:
        return Problem(r.index("reason", PROBLEMS))
    if cls is LampOpen:
        return LampOpen(r.text("round"), r.uint("ms", 4, 0, MAX_MS))
    if cls is LampReshake:
        return LampReshake(r.text("round"), r.index("reason", RESHAKES))
    if cls is LampVoid:
        return LampVoid(r.text("round"), r.index("clause", CLAUSES))
    if cls in (LampClose, LampPause, LampResume):
        return cls(r.text("round"))
    return cls()


def _read_trailer(r: _Reader) -> tuple[str | None, int | None]:
    flags = r.byte("flags")
    if flags & ~(FLAG_ROUND | FLAG_AT32 | FLAG_ATLONG):
        raise _Field(f"flags: unknown bits in 0x{flags:02X}")
    if flags & FLAG_AT32 and flags & FLAG_ATLONG:
        raise _Field("flags: at given in both forms")
    tag = r.text("round") if flags & FLAG_ROUND else None
    at: int | None = None
    if flags & FLAG_AT32:
        at = int.from_bytes(r.take(4, "at"), "big")
    elif flags & FLAG_ATLONG:
        size = r.byte("at")
        raw = r.take(size, "at")
        at = int.from_bytes(raw, "big")
        if not 5 <= size <= 14 or raw[0] == 0 or not UINT32 <= at < AT_LIMIT:
            raise _Field("at: the long form holds 2^32..10^32-1 in 5-14 bytes, no leading zero byte")
    return tag, at


def decode_body(body: bytes) -> Frame | BadFrame:
    """The frame a body stands for, or a BadFrame (``syntax``, ``type``, ``field``). Never raises."""
    if len(body) < 3:
        return BadFrame(ErrorReason.SYNTAX, body, "a body is at least ADDR TYPE SEQ")
    addr, code, seq = body[0], body[1], body[2]
    role = ROLE_AT.get(addr)
    if role is None:
        return BadFrame(ErrorReason.SYNTAX, body, f"address {addr} is not 1..5")
    r = _Reader(body, 3)
    try:
        if code == POLL:
            r.end()
            return Frame(0, Source.SERVER, Poll(role, seq))
        if code in (NOTHING, ACK, NAK):
            if (seq == 0) != (code == NOTHING):
                return BadFrame(ErrorReason.SYNTAX, body, f"type 0x{code:02X}: seq {seq} not allowed", None, role)
            if code == NOTHING:
                r.end()
                return Frame(0, role, Heartbeat())
            if code == ACK:
                r.end()
                return Frame(0, role, Ack(seq))
            reason = r.index("reason", NAKS)
            r.end()
            return Frame(0, role, Nak(seq, reason))
        if code == HELLO:
            cls: type[Message] = Hello
        elif code in LAMP_CODES:
            if role is not Source.LAMP:
                return BadFrame(ErrorReason.TYPE, body, f"lamp command 0x{code:02X} to address {addr}", seq, role)
            cls = LAMP_CODES[code]
        elif code in REPORT_CODES:
            owner, cls = REPORT_CODES[code]
            if owner is not role:
                return BadFrame(ErrorReason.TYPE, body, f"{owner!s} report 0x{code:02X} from address {addr}", seq, role)
        else:
            return BadFrame(ErrorReason.TYPE, body, f"unknown type 0x{code:02X}", seq, role)
        if seq == 0:
            return BadFrame(ErrorReason.SYNTAX, body, f"type 0x{code:02X}: seq must be 1..255", None, role)
        msg = _read_payload(cls, r)
        tag: str | None = None
        at: int | None = None
        if cls in TAGGABLE:
            tag, at = _read_trailer(r)
        r.end()
    except _Field as exc:
        return BadFrame(ErrorReason.FIELD, body, f"type 0x{code:02X}: {exc}", seq, role)
    src = Source.SERVER if cls in LAMP_CODES.values() else role
    return Frame(seq, src, msg, round=tag, at=at)


class BusMessageMap(MessageMap):
    """Bodies ↔ semantic frames (docs/dialects/xocdia-bus.md §3-§4)."""

    def encode(self, frame: Frame) -> bytes:
        return encode_body(frame)

    def decode(self, body: bytes) -> Frame | BadFrame:
        return decode_body(body)


# --- framing -------------------------------------------------------------------------------------------------------


class BusFramer(LengthPrefixedFramer):
    """``0xA5 LEN body CRC`` frames, hunted for: at each start byte a candidate of ``LEN`` bytes is taken only when
    its check holds. A candidate whose check fails (``crc``) or whose length is impossible (``syntax``) is reported up
    to the next start byte inside it, where the hunt resumes; a candidate still incomplete when a later start byte
    already begins a whole checked frame was cut short (``truncated``), and so was a checked candidate when a start
    byte inside it begins a whole, checked and well-formed frame reaching past it (the cut frame's CRC was completed
    by the next frame's first bytes). Bytes before any start byte are ``garbage``.
    Never raises; buffers at most one incomplete candidate (``2 + MAX_LEN`` bytes)."""

    def __init__(self, integrity: Integrity | None = None, accept: Callable[[bytes], bool] | None = None) -> None:
        super().__init__(start=START, length_bytes=1, max_frame=MAX_LEN)
        self.integrity = integrity or Crc16Modbus()
        #: Whether a checked body is a well-formed message: a frame found inside another must be, to cut it short.
        self.accept: Callable[[bytes], bool] = accept or (lambda body: True)

    def _complete_ok(self, buf: bytearray, at: int) -> int:
        """The end of a whole checked frame starting at ``at``, or -1 (bad), or 0 (incomplete)."""
        if len(buf) < at + 2:
            return 0
        size = buf[at + 1]
        if not MIN_LEN <= size <= MAX_LEN:
            return -1
        end = at + 2 + size
        if len(buf) < end:
            return 0
        return end if self.integrity.open(bytes(buf[at + 2 : end])) is not None else -1

    def _overlap(self, buf: bytearray, at: int, end: int) -> int:
        """For a checked candidate ``buf[at:end]``: the position of a start byte inside it that begins a whole, checked
        and well-formed frame reaching past it (the candidate is a cut frame whose CRC the next frame's first bytes
        happened to complete: one chance in 256 when cut one byte short, as the start byte 0xA5 then ends it, one in
        65 536 otherwise); -1 to wait, when its last byte is a start byte followed by a plausible length (such a
        frame may still be arriving; a real frame ending in 0xA5 is followed by a start byte or by nothing); else 0."""
        start = self.start
        inner = buf.find(start, at + 1, end)
        while inner >= 0:
            other = self._complete_ok(buf, inner)
            if other > end and self.accept(bytes(buf[inner + 2 : other - 2])):
                return inner
            inner = buf.find(start, inner + 1, end)
        last = end - 1
        plausible = len(buf) > end and MIN_LEN <= buf[end] <= MAX_LEN
        if buf[last] == start and plausible and not self._complete_ok(buf, last):
            return -1
        return 0

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        buf = self._buf
        buf += data
        out: list[bytes | BadFrame] = []
        pos = 0
        start = self.start
        try:
            while pos < len(buf):
                at = buf.find(start, pos)
                if at < 0:
                    out.append(BadFrame(ErrorReason.GARBAGE, bytes(buf[pos:]), "bytes outside a frame"))
                    pos = len(buf)
                    break
                if at > pos:
                    out.append(BadFrame(ErrorReason.GARBAGE, bytes(buf[pos:at]), "bytes outside a frame"))
                    pos = at
                end = self._complete_ok(buf, at)
                if end > 0:
                    inner = self._overlap(buf, at, end)
                    if inner < 0:
                        break
                    if inner:
                        out.append(BadFrame(ErrorReason.TRUNCATED, bytes(buf[at:inner]), "a new frame began inside it"))
                        pos = inner
                        continue
                    out.append(bytes(buf[at + 2 : end]))
                    pos = end
                    continue
                nxt = buf.find(start, at + 1)
                if end < 0:
                    size = buf[at + 1]
                    cut = len(buf) if nxt < 0 else nxt
                    if MIN_LEN <= size <= MAX_LEN:
                        out.append(BadFrame(ErrorReason.CRC, bytes(buf[at:cut]), "CRC-16/MODBUS check failed"))
                    else:
                        out.append(BadFrame(ErrorReason.SYNTAX, bytes(buf[at:cut]), f"bad length {size}"))
                    pos = cut
                    continue
                # incomplete: cut short if a later start byte already begins a whole checked frame
                later = nxt
                while later >= 0 and self._complete_ok(buf, later) <= 0:
                    later = buf.find(start, later + 1)
                if later < 0:
                    break
                out.append(BadFrame(ErrorReason.TRUNCATED, bytes(buf[at:later]), "a new frame began"))
                pos = later
        finally:
            del buf[:pos]
        return out


def bus_codec() -> ComposedCodec:
    """The bus codec: :class:`BusFramer` (hunting on CRC-16/MODBUS), CRC-16/MODBUS and :class:`BusMessageMap`."""
    integrity = Crc16Modbus()
    return ComposedCodec(partial(BusFramer, integrity, _well_formed), integrity, BusMessageMap())


def _well_formed(body: bytes) -> bool:
    return isinstance(decode_body(body), Frame)


CODEC = bus_codec()
