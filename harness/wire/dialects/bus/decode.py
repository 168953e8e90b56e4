"""Semantic frames from ``xocdia-bus`` bodies (docs/dialects/xocdia-bus.md §3-§4), read strictly.

Guarantees: :func:`decode_body` never raises; a body that is not exactly one well-formed message (unknown address or
type, a report from the wrong address, a field out of range, bytes left over) comes back as a BadFrame (``syntax``,
``type`` or ``field``) that names what is wrong and, where the body is trustworthy enough, its seq and sender.
"""

from __future__ import annotations

from typing import Any

from harness.wire.dialects.bus.catalogue import (
    ACK,
    AT_LIMIT,
    CLAUSES,
    DROP_ITEMS,
    FLAG_AT32,
    FLAG_ATLONG,
    FLAG_ROUND,
    HELLO,
    LAMP_CODES,
    MAX_MS,
    NAK,
    NAKS,
    NO_TOKEN,
    NOTHING,
    POLL,
    PROBLEMS,
    REPORT_CODES,
    RESHAKES,
    ROLE_AT,
    UINT32,
    FieldError,
    Poll,
)
from harness.wire.frame_errors import BadFrame, ErrorReason
from harness.wire.messages import (
    TAGGABLE,
    Ack,
    BowlOff,
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
    Problem,
    ReaderRearranged,
    Result,
    Source,
)
from harness.wire.text.fields import VALUE


class _Reader:
    """Reads fields off a body; raises FieldError at the first one that is missing or malformed."""

    __slots__ = ("body", "pos")

    def __init__(self, body: bytes, pos: int) -> None:
        self.body, self.pos = body, pos

    def take(self, n: int, name: str) -> bytes:
        end = self.pos + n
        if end > len(self.body):
            raise FieldError(f"{name}: body ends early")
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
            raise FieldError(f"{name}: {raw!r} is not 1-32 characters of A-Z a-z 0-9 . _ : -")
        return value

    def index(self, name: str, allowed: tuple[Any, ...]) -> Any:
        n = self.byte(name)
        if n >= len(allowed):
            raise FieldError(f"{name}: code {n} is not one of 0..{len(allowed) - 1}")
        return allowed[n]

    def bool(self, name: str) -> bool:
        n = self.byte(name)
        if n > 1:
            raise FieldError(f"{name}: must be 0 or 1, got {n}")
        return n == 1

    def token(self) -> int | None:
        n = self.byte("token")
        if n == NO_TOKEN:
            return None
        if n > 3:
            raise FieldError(f"token: must be 0..3 or 0xFF, got {n}")
        return n

    def faces(self, allowed: str) -> str:
        raw = self.take(4, "faces").decode("latin-1")
        if raw.strip(allowed):
            raise FieldError(f"faces: must be 4 characters of {allowed}, got {raw!r}")
        return raw

    def uint(self, name: str, size: int, low: int, high: int) -> int:
        n = int.from_bytes(self.take(size, name), "big")
        if not low <= n <= high:
            raise FieldError(f"{name}: must be {low}..{high}, got {n}")
        return n

    def end(self) -> None:
        if self.pos != len(self.body):
            raise FieldError(f"{len(self.body) - self.pos} byte(s) after the last field")


def _read_payload(cls: type[Message], r: _Reader) -> Message:
    if cls is Hello:
        return Hello(r.text("id"), r.uint("proto", 2, 1, 65535), r.text("fw"))
    if cls is BowlOff:
        touch, token = r.bool("touch"), r.token()
        if touch != (token is not None):
            raise FieldError("token: must be 0..3 when touch=1 and 0xFF when touch=0")
        return BowlOff(touch, token)
    if cls is Drop:
        item, token = r.index("item", DROP_ITEMS), r.token()
        if (item is DropItem.TOKEN) != (token is not None):
            raise FieldError("token: must be 0..3 when item=token and 0xFF otherwise")
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
        raise FieldError(f"flags: unknown bits in 0x{flags:02X}")
    if flags & FLAG_AT32 and flags & FLAG_ATLONG:
        raise FieldError("flags: at given in both forms")
    tag = r.text("round") if flags & FLAG_ROUND else None
    at: int | None = None
    if flags & FLAG_AT32:
        at = int.from_bytes(r.take(4, "at"), "big")
    elif flags & FLAG_ATLONG:
        size = r.byte("at")
        raw = r.take(size, "at")
        at = int.from_bytes(raw, "big")
        if not 5 <= size <= 14 or raw[0] == 0 or not UINT32 <= at < AT_LIMIT:
            raise FieldError("at: the long form holds 2^32..10^32-1 in 5-14 bytes, no leading zero byte")
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
    except FieldError as exc:
        return BadFrame(ErrorReason.FIELD, body, f"type 0x{code:02X}: {exc}", seq, role)
    src = Source.SERVER if cls in LAMP_CODES.values() else role
    return Frame(seq, src, msg, round=tag, at=at)
