"""Encode frames to bytes and decode a byte stream back to frames (docs/protocol.md §2, §3, §8).

:func:`encode` refuses (raises :class:`EncodeError`) a frame that breaks the protocol, so a bad
frame never leaves the bench by accident. :class:`FrameDecoder` never raises on input: it resynchronises
on ``$``, reports every corrupt, truncated or invalid frame as a :class:`FrameError`, and returns a
:class:`Frame` only for a frame that passed every check.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from harness.protocol.messages import (
    CATALOGUE,
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    TAGGABLE,
    BowlOff,
    Drop,
    DropItem,
    Frame,
    Message,
    NakReason,
    ProblemReason,
    ReshakeReason,
    Source,
    VoidClause,
)

MAX_FRAME = 128
MAX_SEQ = 65535
_VALUE = re.compile(r"[A-Za-z0-9._:-]{1,32}\Z")
_UINT = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")
_HEX4 = re.compile(rb"[0-9A-F]{4}\Z")
_KEY = re.compile(r"[a-z_]+\Z")
MAX_AT_DIGITS = 32  # an event time is a §2 value: at most 32 characters
_AT = re.compile(r"(?:0|[1-9][0-9]{0,31})\Z")


def crc16(body: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of ``body``; ``crc16(b"123456789") == 0x29B1``."""
    return binascii.crc_hqx(body, 0xFFFF)


class EncodeError(ValueError):
    """A frame that cannot be put on the wire; the message names the field and what is allowed."""


class ErrorReason(StrEnum):
    """Why received bytes were not accepted as a frame (docs/protocol.md §8)."""

    GARBAGE = "garbage"
    TRUNCATED = "truncated"
    TOO_LONG = "too_long"
    SYNTAX = "syntax"
    CRC = "crc"
    VERSION = "version"
    TYPE = "type"
    FIELD = "field"


NAK_FOR: dict[ErrorReason, NakReason] = {
    ErrorReason.VERSION: NakReason.VERSION,
    ErrorReason.TYPE: NakReason.TYPE,
    ErrorReason.FIELD: NakReason.FIELD,
}


@dataclass(frozen=True, slots=True)
class FrameError:
    """Bytes that were not accepted; ``seq``/``src`` set when the CRC was good (it may be NAKed)."""

    reason: ErrorReason
    raw: bytes
    detail: str
    seq: int | None = None
    src: Source | None = None

    @property
    def nak(self) -> NakReason | None:
        """The NAK reason owed for this error, or None when the frame must be dropped silently."""
        if self.seq is None or self.seq == 0:
            return None
        return NAK_FOR.get(self.reason)


# --- field value codecs ---------------------------------------------------------------------------


class _FieldError(ValueError):
    pass


def _enc_value(v: Any) -> str:
    if not isinstance(v, str) or not _VALUE.match(v):
        raise _FieldError(f"must be 1-32 characters of A-Z a-z 0-9 . _ : -, got {v!r}")
    return v


def _enc_uint(limit: int, low: int = 0) -> Callable[[Any], str]:
    def enc(v: Any) -> str:
        if type(v) is not int or not low <= v <= limit:
            raise _FieldError(f"must be a whole number {low}..{limit}, got {v!r}")
        return str(v)

    return enc


def _dec_uint(limit: int, low: int = 0) -> Callable[[str], Any]:
    def dec(s: str) -> int:
        if not _UINT.match(s) or not low <= int(s) <= limit:
            raise _FieldError(f"must be a whole number {low}..{limit}, got {s!r}")
        return int(s)

    return dec


def _enc_bool(v: Any) -> str:
    if type(v) is not bool:
        raise _FieldError(f"must be a bool, got {v!r}")
    return "1" if v else "0"


def _dec_bool(s: str) -> bool:
    if s not in ("0", "1"):
        raise _FieldError(f"must be 0 or 1, got {s!r}")
    return s == "1"


def _enc_token(v: Any) -> str:
    if v is None:
        return "-"
    if type(v) is not int or not 0 <= v <= 3:
        raise _FieldError(f"must be a token 0..3 or None, got {v!r}")
    return str(v)


def _dec_token(s: str) -> int | None:
    if s == "-":
        return None
    if s not in ("0", "1", "2", "3"):
        raise _FieldError(f"must be a token 0..3 or -, got {s!r}")
    return int(s)


def _faces(allowed: str) -> tuple[Callable[[Any], str], Callable[[str], Any]]:
    def check(v: Any) -> str:
        if not isinstance(v, str) or len(v) != 4 or any(c not in allowed for c in v):
            raise _FieldError(f"must be 4 characters of {allowed}, got {v!r}")
        return v

    return check, check


def _enum(cls: type[StrEnum]) -> tuple[Callable[[Any], str], Callable[[str], Any]]:
    allowed = "|".join(m.value for m in cls)

    def enc(v: Any) -> str:
        if not isinstance(v, cls):
            raise _FieldError(f"must be one of {allowed}, got {v!r}")
        return str(v.value)

    def dec(s: str) -> Any:
        try:
            return cls(s)
        except ValueError:
            raise _FieldError(f"must be one of {allowed}, got {s!r}") from None

    return enc, dec


_Codec = tuple[Callable[[Any], str], Callable[[str], Any]]
_BY_NAME: dict[str, _Codec] = {
    "id": (_enc_value, _enc_value),
    "fw": (_enc_value, _enc_value),
    "round": (_enc_value, _enc_value),
    "proto": (_enc_uint(MAX_SEQ, 1), _dec_uint(MAX_SEQ, 1)),
    "of": (_enc_uint(MAX_SEQ, 1), _dec_uint(MAX_SEQ, 1)),
    "ms": (_enc_uint(86_400_000), _dec_uint(86_400_000)),
    "touch": (_enc_bool, _dec_bool),
    "overlap": (_enc_bool, _dec_bool),
    "token": (_enc_token, _dec_token),
    "item": _enum(DropItem),
    "clause": _enum(VoidClause),
}
_BY_CLASS_FIELD: dict[tuple[str, str], _Codec] = {
    ("Nak", "reason"): _enum(NakReason),
    ("Problem", "reason"): _enum(ProblemReason),
    ("LampReshake", "reason"): _enum(ReshakeReason),
    ("Result", "faces"): _faces("RWSU"),
    ("ReaderRearranged", "faces"): _faces("RW"),
}


def _layout(cls: type[Message]) -> tuple[tuple[str, _Codec], ...]:
    out = []
    for f in fields(cls):
        codec = _BY_CLASS_FIELD.get((cls.__name__, f.name)) or _BY_NAME[f.name]
        out.append((f.name, codec))
    return tuple(out)


_LAYOUT: dict[type[Message], tuple[tuple[str, _Codec], ...]] = {cls: _layout(cls) for cls in MESSAGE_TYPES}


def _enc_at(v: Any) -> str:
    if type(v) is not int or v < 0 or len(str(v)) > MAX_AT_DIGITS:
        raise _FieldError(f"at: must be a whole number of milliseconds, 0 or more, at most 32 digits, got {v!r}")
    return str(v)


_OPTIONAL = ("round", "at")  # the optional trailing fields of a device data message, in wire order


def _trailing(cls: type[Message], extra: list[str]) -> tuple[str | None, int | None]:
    """The optional round tag and event time among the fields after the catalogue's (docs/protocol.md §6,
    revisions 1.1 and 1.2): ``(None, None)`` when ``extra`` holds neither (any other surplus is left for the
    field-count check). Raises _FieldError naming the field when one is misplaced, repeated or malformed."""
    keys = [item.partition("=")[0] for item in extra]
    if not any(k in _OPTIONAL for k in keys):
        return None, None
    if cls not in TAGGABLE:
        name = next(k for k in keys if k in _OPTIONAL)
        raise _FieldError(f"{name}: only device data messages (not HELLO, not the lamp) carry round= or at=")
    for name in _OPTIONAL:
        if keys.count(name) > 1:
            raise _FieldError(f"{name}: given {keys.count(name)} times, at most once")
    if keys == ["at", "round"]:
        raise _FieldError("at: must come after round (catalogue fields, then round=, then at=)")
    if keys not in (["round"], ["at"], ["round", "at"]):
        raise _FieldError(f"{' '.join(extra)!r}: after the catalogue's fields only round=<id> then at=<ms> may follow")
    values = {key: item.partition("=")[2] for key, item in zip(keys, extra, strict=True)}
    tag = values.get("round")
    if tag is not None and not _VALUE.match(tag):
        raise _FieldError(f"round: {tag!r} is not a value (§2)")
    text = values.get("at")
    if text is not None and not _AT.match(text):
        raise _FieldError(
            f"at: {text!r} is not a whole number of milliseconds (no sign, no leading zeros, 1-32 digits)"
        )
    return tag, None if text is None else int(text)


def _cross_check(msg: Message) -> None:
    """Rules between fields of one message (docs/protocol.md §6)."""
    if isinstance(msg, BowlOff) and (msg.touch != (msg.token is not None)):
        raise _FieldError("token: must be 0..3 when touch=1 and - when touch=0")
    if isinstance(msg, Drop) and ((msg.item is DropItem.TOKEN) != (msg.token is not None)):
        raise _FieldError("token: must be 0..3 when item=token and - otherwise")


# --- encoding -------------------------------------------------------------------------------------


def encode_body(frame: Frame) -> bytes:
    """The frame's body (between ``$`` and ``*``). Raises :class:`EncodeError` for an invalid frame."""
    msg = frame.message
    cls = type(msg)
    if cls not in _LAYOUT:
        raise EncodeError(f"not a protocol message: {cls.__name__}")
    if frame.src not in cls.SOURCES:
        allowed = ", ".join(sorted(s.value for s in cls.SOURCES))
        raise EncodeError(f"{cls.TYPE}: src must be one of {allowed}, got {frame.src!s}")
    if type(frame.version) is not int or not 0 <= frame.version <= 9999:
        raise EncodeError(f"version must be a whole number, got {frame.version!r}")
    if cls.CONTROL and frame.seq != 0:
        raise EncodeError(f"{cls.TYPE} is a control frame: seq must be 0, got {frame.seq!r}")
    if not cls.CONTROL and (type(frame.seq) is not int or not 1 <= frame.seq <= MAX_SEQ):
        raise EncodeError(f"{cls.TYPE} is a data frame: seq must be 1..{MAX_SEQ}, got {frame.seq!r}")
    parts = [str(frame.version), str(frame.seq), frame.src.value, cls.TYPE]
    try:
        for name, (enc, _dec) in _LAYOUT[cls]:
            try:
                parts.append(f"{name}={enc(getattr(msg, name))}")
            except _FieldError as exc:
                raise _FieldError(f"{name}: {exc}") from None
        _cross_check(msg)
        if frame.round is not None:
            if cls not in TAGGABLE:
                raise _FieldError("round: only device data messages (not HELLO, not the lamp) carry a round tag")
            try:
                parts.append(f"round={_enc_value(frame.round)}")
            except _FieldError as exc:
                raise _FieldError(f"round: {exc}") from None
        if frame.at is not None:
            if cls not in TAGGABLE:
                raise _FieldError("at: only device data messages (not HELLO, not the lamp) carry an event time")
            parts.append(f"at={_enc_at(frame.at)}")
    except _FieldError as exc:
        raise EncodeError(f"{frame.src!s} {cls.TYPE}: {exc}") from None
    return " ".join(parts).encode("ascii")


def encode(frame: Frame) -> bytes:
    """The complete frame, ``$`` to CRLF. Raises :class:`EncodeError` for an invalid or over-long frame."""
    body = encode_body(frame)
    out = b"$%s*%04X\r\n" % (body, crc16(body))
    if len(out) > MAX_FRAME:
        raise EncodeError(f"frame is {len(out)} bytes, the limit is {MAX_FRAME}")
    return out


# --- decoding -------------------------------------------------------------------------------------


def parse_frame(raw: bytes) -> Frame | FrameError:
    """Check and decode one complete frame (``$`` .. ``\\r\\n``). Never raises."""
    if len(raw) > MAX_FRAME:
        return FrameError(ErrorReason.TOO_LONG, raw, f"{len(raw)} bytes, the limit is {MAX_FRAME}")
    if len(raw) < 9 or raw[0:1] != b"$" or raw[-2:] != b"\r\n" or raw[-7:-6] != b"*" or not _HEX4.match(raw[-6:-2]):
        return FrameError(ErrorReason.SYNTAX, raw, "frame must be $BODY*XXXX\\r\\n (XXXX upper-case hex)")
    body = raw[1:-7]
    want = int(raw[-6:-2], 16)
    got = crc16(body)
    if want != got:
        return FrameError(ErrorReason.CRC, raw, f"crc {want:04X} in frame, {got:04X} computed")
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return FrameError(ErrorReason.SYNTAX, raw, "body is not ASCII")
    parts = text.split(" ")
    if len(parts) < 4 or "" in parts or not _UINT.match(parts[0]) or not _UINT.match(parts[1]):
        return FrameError(ErrorReason.SYNTAX, raw, "must be 'VER SEQ SRC TYPE' then fields, one space apart")
    seq = int(parts[1])
    try:
        src = Source(parts[2])
    except ValueError:
        src = None
    if int(parts[0]) != PROTOCOL_VERSION:
        return FrameError(ErrorReason.VERSION, raw, f"version {parts[0]}, this end speaks 1", seq, src)
    if seq > MAX_SEQ:
        return FrameError(ErrorReason.SYNTAX, raw, f"seq {seq} above {MAX_SEQ}")
    if src is None:
        return FrameError(ErrorReason.TYPE, raw, f"unknown src {parts[2]!r}", seq, None)
    cls = CATALOGUE.get((src, parts[3]))
    if cls is None:
        return FrameError(ErrorReason.TYPE, raw, f"{src!s} does not send {parts[3]!r}", seq, src)
    if (seq == 0) != cls.CONTROL:
        what = "0 for a control frame" if cls.CONTROL else "1..65535 for a data frame"
        return FrameError(ErrorReason.SYNTAX, raw, f"{cls.TYPE}: seq must be {what}, got {seq}", seq, src)
    layout = _LAYOUT[cls]
    given = parts[4:]
    try:
        tag, at = _trailing(cls, given[len(layout) :])
    except _FieldError as exc:
        return FrameError(ErrorReason.FIELD, raw, f"{cls.TYPE}: {exc}", seq, src)
    if tag is not None or at is not None:
        del given[len(layout) :]
    if len(given) != len(layout):
        names = " ".join(n for n, _ in layout) or "no fields"
        return FrameError(ErrorReason.FIELD, raw, f"{cls.TYPE} takes {names}; got {len(given)} fields", seq, src)
    values: dict[str, Any] = {}
    try:
        for (name, (_enc, dec)), item in zip(layout, given, strict=True):
            key, eq, value = item.partition("=")
            if key != name or not eq:
                raise _FieldError(f"expected field {name}=..., got {item!r}")
            try:
                values[name] = dec(value)
            except _FieldError as exc:
                raise _FieldError(f"{name}: {exc}") from None
        msg = cls(**values)
        _cross_check(msg)
    except _FieldError as exc:
        return FrameError(ErrorReason.FIELD, raw, f"{cls.TYPE}: {exc}", seq, src)
    return Frame(seq=seq, src=src, message=msg, version=PROTOCOL_VERSION, round=tag, at=at)


class FrameDecoder:
    """A resynchronising stream decoder: feed it bytes in any slicing, get frames and errors in order.

    Guarantees: never raises on any input; returns a :class:`Frame` only for a complete frame that
    passed every check of docs/protocol.md §8; every discarded byte is in some :class:`FrameError`.
    """

    __slots__ = ("_buf", "_skipping")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._skipping = False  # discarding the rest of an over-long frame until the next '$'

    def feed(self, data: bytes) -> list[Frame | FrameError]:
        """Consume ``data``; return the frames and errors completed by it, in stream order."""
        buf = self._buf
        buf += data
        out: list[Frame | FrameError] = []
        pos = 0
        end = len(buf)
        while pos < end:
            if buf[pos] != 0x24:  # not '$': garbage, or the tail of an over-long frame
                start = buf.find(b"$", pos)
                stop = end if start < 0 else start
                if not self._skipping:
                    out.append(FrameError(ErrorReason.GARBAGE, bytes(buf[pos:stop]), "bytes outside a frame"))
                pos = stop
                if start >= 0:
                    self._skipping = False
                continue
            self._skipping = False
            nl = buf.find(b"\n", pos + 1, pos + MAX_FRAME)
            nxt = buf.find(b"$", pos + 1, nl if nl >= 0 else pos + MAX_FRAME + 1)
            if nxt >= 0:
                out.append(FrameError(ErrorReason.TRUNCATED, bytes(buf[pos:nxt]), "frame cut by a new '$'"))
                pos = nxt
                continue
            if nl >= 0:
                out.append(parse_frame(bytes(buf[pos : nl + 1])))
                pos = nl + 1
                continue
            if end - pos > MAX_FRAME:
                out.append(
                    FrameError(ErrorReason.TOO_LONG, bytes(buf[pos : pos + MAX_FRAME]), "no end within 128 bytes")
                )
                self._skipping = True
                pos += MAX_FRAME
                continue
            break  # an incomplete frame: wait for more bytes
        del buf[:pos]
        return out

    @property
    def pending(self) -> int:
        """Bytes held for an incomplete frame."""
        return len(self._buf)
