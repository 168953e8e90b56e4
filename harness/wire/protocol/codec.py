"""The frame layer: encode frames to bytes and decode a byte stream back to frames (docs/protocol.md §2, §3, §8).

This module owns what wraps a message body: version, seq, src, type, the optional round tag and event
time, the CRC, the length limit and resynchronisation. The value of each field of a message body is
checked and converted by :mod:`harness.wire.protocol.fields`.

:func:`encode` refuses (raises :class:`EncodeError`) a frame that breaks the protocol, so a bad
frame never leaves the bench by accident. :class:`FrameDecoder` never raises on input: it resynchronises
on ``$``, reports every corrupt, truncated or invalid frame as a :class:`BadFrame`, and returns a
:class:`Frame` only for a frame that passed every check.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from harness.errors import XocdiaError
from harness.wire.protocol.fields import (
    LAYOUT,
    MAX_AT_DIGITS,
    MAX_SEQ,
    UINT,
    FieldError,
    cross_check,
    enc_at,
    enc_value,
    trailing,
)
from harness.wire.protocol.messages import (
    CATALOGUE,
    PROTOCOL_VERSION,
    TAGGABLE,
    Frame,
    NakReason,
    Source,
)

__all__ = [
    "MAX_AT_DIGITS",
    "MAX_FRAME",
    "MAX_SEQ",
    "NAK_FOR",
    "BadFrame",
    "EncodeError",
    "ErrorReason",
    "FrameDecoder",
    "crc16",
    "encode",
    "encode_body",
    "parse_frame",
]

MAX_FRAME = 128
_HEX4 = re.compile(rb"[0-9A-F]{4}\Z")
# hot path: bound by assignment, not by the import: CPython 3.11 compiles ``<imported name>.match(...)`` without
# LOAD_METHOD (a bound method per call), which slows parse_frame down.
_UINT = UINT


def crc16(body: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of ``body``; ``crc16(b"123456789") == 0x29B1``."""
    return binascii.crc_hqx(body, 0xFFFF)


class EncodeError(XocdiaError, ValueError):
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
class BadFrame:
    """Bytes that were not accepted (a record the decoder returns, never raises); ``seq``/``src`` set when the CRC
    was good (it may be NAKed)."""

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


# --- encoding -------------------------------------------------------------------------------------


def encode_body(frame: Frame) -> bytes:
    """The frame's body (between ``$`` and ``*``). Raises :class:`EncodeError` for an invalid frame."""
    msg = frame.message
    cls = type(msg)
    if cls not in LAYOUT:
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
        for name, (enc, _dec) in LAYOUT[cls]:
            try:
                parts.append(f"{name}={enc(getattr(msg, name))}")
            except FieldError as exc:
                raise FieldError(f"{name}: {exc}") from None
        cross_check(msg)
        if frame.round is not None:
            if cls not in TAGGABLE:
                raise FieldError("round: only device data messages (not HELLO, not the lamp) carry a round tag")
            try:
                parts.append(f"round={enc_value(frame.round)}")
            except FieldError as exc:
                raise FieldError(f"round: {exc}") from None
        if frame.at is not None:
            if cls not in TAGGABLE:
                raise FieldError("at: only device data messages (not HELLO, not the lamp) carry an event time")
            parts.append(f"at={enc_at(frame.at)}")
    except FieldError as exc:
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


def parse_frame(raw: bytes) -> Frame | BadFrame:
    """Check and decode one complete frame (``$`` .. ``\\r\\n``). Never raises."""
    if len(raw) > MAX_FRAME:
        return BadFrame(ErrorReason.TOO_LONG, raw, f"{len(raw)} bytes, the limit is {MAX_FRAME}")
    if len(raw) < 9 or raw[0:1] != b"$" or raw[-2:] != b"\r\n" or raw[-7:-6] != b"*" or not _HEX4.match(raw[-6:-2]):
        return BadFrame(ErrorReason.SYNTAX, raw, "frame must be $BODY*XXXX\\r\\n (XXXX upper-case hex)")
    body = raw[1:-7]
    want = int(raw[-6:-2], 16)
    got = crc16(body)
    if want != got:
        return BadFrame(ErrorReason.CRC, raw, f"crc {want:04X} in frame, {got:04X} computed")
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        return BadFrame(ErrorReason.SYNTAX, raw, "body is not ASCII")
    parts = text.split(" ")
    if len(parts) < 4 or "" in parts or not _UINT.match(parts[0]) or not _UINT.match(parts[1]):
        return BadFrame(ErrorReason.SYNTAX, raw, "must be 'VER SEQ SRC TYPE' then fields, one space apart")
    seq = int(parts[1])
    try:
        src = Source(parts[2])
    except ValueError:
        src = None
    if int(parts[0]) != PROTOCOL_VERSION:
        return BadFrame(ErrorReason.VERSION, raw, f"version {parts[0]}, this end speaks 1", seq, src)
    if seq > MAX_SEQ:
        return BadFrame(ErrorReason.SYNTAX, raw, f"seq {seq} above {MAX_SEQ}")
    if src is None:
        return BadFrame(ErrorReason.TYPE, raw, f"unknown src {parts[2]!r}", seq, None)
    cls = CATALOGUE.get((src, parts[3]))
    if cls is None:
        return BadFrame(ErrorReason.TYPE, raw, f"{src!s} does not send {parts[3]!r}", seq, src)
    if (seq == 0) != cls.CONTROL:
        what = "0 for a control frame" if cls.CONTROL else "1..65535 for a data frame"
        return BadFrame(ErrorReason.SYNTAX, raw, f"{cls.TYPE}: seq must be {what}, got {seq}", seq, src)
    layout = LAYOUT[cls]
    given = parts[4:]
    try:
        tag, at = trailing(cls, given[len(layout) :])
    except FieldError as exc:
        return BadFrame(ErrorReason.FIELD, raw, f"{cls.TYPE}: {exc}", seq, src)
    if tag is not None or at is not None:
        del given[len(layout) :]
    if len(given) != len(layout):
        names = " ".join(n for n, _ in layout) or "no fields"
        return BadFrame(ErrorReason.FIELD, raw, f"{cls.TYPE} takes {names}; got {len(given)} fields", seq, src)
    values: dict[str, Any] = {}
    try:
        for (name, (_enc, dec)), item in zip(layout, given, strict=True):
            key, eq, value = item.partition("=")
            if key != name or not eq:
                raise FieldError(f"expected field {name}=..., got {item!r}")
            try:
                values[name] = dec(value)
            except FieldError as exc:
                raise FieldError(f"{name}: {exc}") from None
        msg = cls(**values)
        cross_check(msg)
    except FieldError as exc:
        return BadFrame(ErrorReason.FIELD, raw, f"{cls.TYPE}: {exc}", seq, src)
    return Frame(seq=seq, src=src, message=msg, version=PROTOCOL_VERSION, round=tag, at=at)


class FrameDecoder:
    """A resynchronising stream decoder: feed it bytes in any slicing, get frames and errors in order.

    Guarantees: never raises on any input; returns a :class:`Frame` only for a complete frame that
    passed every check of docs/protocol.md §8; every discarded byte is in some :class:`BadFrame`.
    """

    __slots__ = ("_buf", "_skipping")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._skipping = False  # discarding the rest of an over-long frame until the next '$'

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        """Consume ``data``; return the frames and errors completed by it, in stream order."""
        buf = self._buf
        buf += data
        out: list[Frame | BadFrame] = []
        pos = 0
        end = len(buf)
        while pos < end:
            if buf[pos] != 0x24:  # not '$': garbage, or the tail of an over-long frame
                start = buf.find(b"$", pos)
                stop = end if start < 0 else start
                if not self._skipping:
                    out.append(BadFrame(ErrorReason.GARBAGE, bytes(buf[pos:stop]), "bytes outside a frame"))
                pos = stop
                if start >= 0:
                    self._skipping = False
                continue
            self._skipping = False
            nl = buf.find(b"\n", pos + 1, pos + MAX_FRAME)
            nxt = buf.find(b"$", pos + 1, nl if nl >= 0 else pos + MAX_FRAME + 1)
            if nxt >= 0:
                out.append(BadFrame(ErrorReason.TRUNCATED, bytes(buf[pos:nxt]), "frame cut by a new '$'"))
                pos = nxt
                continue
            if nl >= 0:
                out.append(parse_frame(bytes(buf[pos : nl + 1])))
                pos = nl + 1
                continue
            if end - pos > MAX_FRAME:
                out.append(BadFrame(ErrorReason.TOO_LONG, bytes(buf[pos : pos + MAX_FRAME]), "no end within 128 bytes"))
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
