"""``xocdia-bus`` bodies from semantic frames (docs/dialects/xocdia-bus.md §3-§4): ``ADDR TYPE SEQ``, the message's
fields as fixed bytes or length-prefixed text, then, for device reports, the trailer (flags, round tag, event time as
a uint32 or in its long form).

Guarantees: :func:`encode_body` returns the one canonical body of a frame or raises EncodeError naming the field; it
never writes a body the decoder (:mod:`~harness.wire.dialects.bus.decode`) would refuse.
"""

from __future__ import annotations

from typing import Any

from harness.wire.dialects.bus.catalogue import (
    ACK,
    ADDRESS,
    AT_LIMIT,
    CLAUSES,
    CODE_OF,
    DROP_ITEMS,
    FLAG_AT32,
    FLAG_ATLONG,
    FLAG_ROUND,
    HELLO,
    LAMP_CODES,
    MAX_MS,
    MAX_SEQ,
    NAK,
    NAKS,
    NO_TOKEN,
    NOTHING,
    POLL,
    PROBLEMS,
    RESHAKES,
    UINT32,
    FieldError,
    Poll,
)
from harness.wire.frame_errors import EncodeError
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


def _text(name: str, v: Any) -> bytes:
    if not isinstance(v, str) or not VALUE.match(v):
        raise FieldError(f"{name}: must be 1-32 characters of A-Z a-z 0-9 . _ : -, got {v!r}")
    return bytes((len(v),)) + v.encode("ascii")


def _index(name: str, v: Any, allowed: tuple[Any, ...]) -> bytes:
    if v not in allowed or not isinstance(v, type(allowed[0])):
        raise FieldError(f"{name}: must be one of {'|'.join(str(a) for a in allowed)}, got {v!r}")
    return bytes((allowed.index(v),))


def _bool(name: str, v: Any) -> bytes:
    if type(v) is not bool:
        raise FieldError(f"{name}: must be a bool, got {v!r}")
    return b"\x01" if v else b"\x00"


def _token(v: Any) -> bytes:
    if v is None:
        return bytes((NO_TOKEN,))
    if type(v) is not int or not 0 <= v <= 3:
        raise FieldError(f"token: must be a token 0..3 or None, got {v!r}")
    return bytes((v,))


def _faces(v: Any, allowed: str) -> bytes:
    if not isinstance(v, str) or len(v) != 4 or v.strip(allowed):
        raise FieldError(f"faces: must be 4 characters of {allowed}, got {v!r}")
    return v.encode("ascii")


def _uint(name: str, v: Any, low: int, high: int, size: int) -> bytes:
    if type(v) is not int or not low <= v <= high:
        raise FieldError(f"{name}: must be a whole number {low}..{high}, got {v!r}")
    return v.to_bytes(size, "big")


def _payload(msg: Message) -> bytes:
    """The catalogue fields of a report, HELLO or lamp command."""
    if isinstance(msg, Hello):
        return _text("id", msg.id) + _uint("proto", msg.proto, 1, 65535, 2) + _text("fw", msg.fw)
    if isinstance(msg, BowlOff):
        if msg.touch != (msg.token is not None):
            raise FieldError("token: must be 0..3 when touch=1 and None when touch=0")
        return _bool("touch", msg.touch) + _token(msg.token)
    if isinstance(msg, Drop):
        if (msg.item is DropItem.TOKEN) != (msg.token is not None):
            raise FieldError("token: must be 0..3 when item=token and None otherwise")
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
            raise FieldError(f"at: must be a whole number of milliseconds, 0 or more, at most 32 digits, got {at!r}")
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
        raise FieldError(f"{name}: must be {low}..{MAX_SEQ} on the bus, got {seq!r}")
    return seq


def encode_body(frame: Frame) -> bytes:
    """The body (``ADDR TYPE SEQ`` and fields) of ``frame``. Raises EncodeError naming the field."""
    msg = frame.message
    src = frame.src
    name = f"{src!s} {msg.TYPE or type(msg).__name__}"
    try:
        if frame.version != 1:
            raise FieldError(f"version: the bus carries version 1 only, got {frame.version!r}")
        if src not in msg.SOURCES:
            raise FieldError(f"src: {msg.TYPE} is not sent by {src!s}")
        if (frame.round is not None or frame.at is not None) and type(msg) not in TAGGABLE:
            raise FieldError("round/at: only device reports (not HELLO, not the lamp, not control) carry them")
        if isinstance(msg, Poll):
            addr = ADDRESS.get(msg.device)
            if addr is None:
                raise FieldError(f"device: must be a device, got {msg.device!r}")
            if frame.seq != 0:
                raise FieldError(f"seq: POLL is a control frame, seq must be 0, got {frame.seq!r}")
            return bytes((addr, POLL, _seq("ack", msg.ack, 0)))
        if type(msg) in LAMP_CODES.values():
            if src is not Source.SERVER:
                raise FieldError("src: lamp commands come from SRV")
            head = bytes((ADDRESS[Source.LAMP], CODE_OF[type(msg)], _seq("seq", frame.seq, 1)))
            return head + _payload(msg)
        addr = ADDRESS.get(src)
        if addr is None:
            raise FieldError(f"src: {msg.TYPE} replies come from a device, not {src!s}")
        if isinstance(msg, Heartbeat | Ack | Nak):
            if frame.seq != 0:
                raise FieldError(f"seq: {msg.TYPE} is a control frame, seq must be 0, got {frame.seq!r}")
            if isinstance(msg, Heartbeat):
                return bytes((addr, NOTHING, 0))
            if isinstance(msg, Ack):
                return bytes((addr, ACK, _seq("of", msg.of, 1)))
            return bytes((addr, NAK, _seq("of", msg.of, 1))) + _index("reason", msg.reason, NAKS)
        if isinstance(msg, Hello):
            return bytes((addr, HELLO, _seq("seq", frame.seq, 1))) + _payload(msg)
        code = CODE_OF.get(type(msg))
        if code is None:
            raise FieldError(f"type: {type(msg).__name__} has no bus encoding")
        head = bytes((addr, code, _seq("seq", frame.seq, 1)))
        return head + _payload(msg) + _trailer(frame.round, frame.at)
    except FieldError as exc:
        raise EncodeError(f"xocdia-bus {name}: {exc}") from None
