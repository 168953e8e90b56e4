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
from binascii import crc_hqx as _crc_hqx
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from enum import StrEnum
from typing import Any, NamedTuple

from harness.errors import XocdiaError
from harness.wire.protocol.fields import (
    CROSS_CHECKED,
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
    Message,
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


class _Encoding(NamedTuple):
    """What encoding a message type needs, looked up once per frame."""

    type: str
    sources: frozenset[Source]
    control: bool
    fields: tuple[tuple[str, Callable[[Any], str]], ...]  # (name, encoder) in wire order
    cross_checked: bool
    taggable: bool


# hot path: each message type's encoding facts in one lookup (the class attributes and LAYOUT cost one each).
_ENCODING: dict[type[Message], _Encoding] = {
    cls: _Encoding(
        cls.TYPE,
        cls.SOURCES,
        cls.CONTROL,
        tuple((name, enc) for name, (enc, _dec) in layout),
        cls in CROSS_CHECKED,
        cls in TAGGABLE,
    )
    for cls, layout in LAYOUT.items()
}
_SOURCE_TEXT: dict[Source, str] = {s: s.value for s in Source}


def encode_body(frame: Frame) -> bytes:
    """The frame's body (between ``$`` and ``*``). Raises :class:`EncodeError` for an invalid frame."""
    msg = frame.message
    cls = type(msg)
    spec = _ENCODING.get(cls)
    if spec is None:
        raise EncodeError(f"not a protocol message: {cls.__name__}")
    src = frame.src
    if src not in spec.sources:
        allowed = ", ".join(sorted(s.value for s in spec.sources))
        raise EncodeError(f"{spec.type}: src must be one of {allowed}, got {src!s}")
    version, seq = frame.version, frame.seq
    if type(version) is not int or not 0 <= version <= 9999:
        raise EncodeError(f"version must be a whole number, got {version!r}")
    if spec.control:
        if seq != 0:
            raise EncodeError(f"{spec.type} is a control frame: seq must be 0, got {seq!r}")
    elif type(seq) is not int or not 1 <= seq <= MAX_SEQ:
        raise EncodeError(f"{spec.type} is a data frame: seq must be 1..{MAX_SEQ}, got {seq!r}")
    parts = [str(version), str(seq), _SOURCE_TEXT[src] if type(src) is Source else src.value, spec.type]
    try:
        for name, enc in spec.fields:
            try:
                parts.append(f"{name}={enc(getattr(msg, name))}")
            except FieldError as exc:
                raise FieldError(f"{name}: {exc}") from None
        if spec.cross_checked:
            cross_check(msg)
        tag, at = frame.round, frame.at
        if tag is not None:
            if not spec.taggable:
                raise FieldError("round: only device data messages (not HELLO, not the lamp) carry a round tag")
            try:
                parts.append(f"round={enc_value(tag)}")
            except FieldError as exc:
                raise FieldError(f"round: {exc}") from None
        if at is not None:
            if not spec.taggable:
                raise FieldError("at: only device data messages (not HELLO, not the lamp) carry an event time")
            parts.append(f"at={enc_at(at)}")
    except FieldError as exc:
        raise EncodeError(f"{src!s} {spec.type}: {exc}") from None
    return " ".join(parts).encode("ascii")


def encode(frame: Frame) -> bytes:
    """The complete frame, ``$`` to CRLF. Raises :class:`EncodeError` for an invalid or over-long frame."""
    body = encode_body(frame)
    out = b"$%s*%04X\r\n" % (body, _crc_hqx(body, 0xFFFF))
    if len(out) > MAX_FRAME:
        raise EncodeError(f"frame is {len(out)} bytes, the limit is {MAX_FRAME}")
    return out


# --- decoding -------------------------------------------------------------------------------------

_SOURCE_OF: dict[str, Source] = {s.value: s for s in Source}


def parse_frame(raw: bytes) -> Frame | BadFrame:
    """Check and decode one complete frame (``$`` .. ``\\r\\n``). Never raises."""
    if type(raw) is bytes and 9 <= len(raw) <= MAX_FRAME and raw[0] == 0x24:  # '$'
        frame = _known(raw[1:])
        if frame is not None:
            return frame
    return _parse_new(raw)


def _parse_new(raw: bytes) -> Frame | BadFrame:
    """:func:`_parse_checked`, remembering the message part of a valid frame for :func:`_known`."""
    result = _parse_checked(raw)
    if type(result) is Frame:
        _remember(bytes(raw[1:-7]), result)
    return result


def _parse_checked(raw: bytes) -> Frame | BadFrame:
    """Every check of docs/protocol.md §8 on one complete frame, in order (what :func:`parse_frame` does when
    :func:`_known` cannot vouch for the frame)."""
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
    src = _SOURCE_OF.get(parts[2])
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
    tag: str | None = None
    at: int | None = None
    if len(given) > len(layout):  # only a surplus can hold a round tag or an event time
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


class _Known(NamedTuple):
    """What the text after ``VER SEQ`` of a valid frame without an event time decodes to. That text alone decides
    the src, the message and the round tag; the header adds only seq, which must be 0 exactly when ``control``;
    a ``taggable`` message may also end with `` at=<ms>``."""

    src: Source
    message: Message
    round: str | None
    control: bool
    taggable: bool


# hot path: a device repeats a few dozen message parts, so each is decoded once (frozen messages may be shared).
_KNOWN: dict[bytes, _Known] = {}  # ``SRC TYPE fields [round=]`` of valid frames, less any ``at=``; emptied when full
_KNOWN_MAX = 1024
_VERSION = b"%d" % PROTOCOL_VERSION
_AT_SEP = b" at="
# hot path: a Frame filled through its slot descriptors, as the frozen dataclass __init__ does, less its overhead.
_new = object.__new__
_SET_SEQ, _SET_SRC, _SET_MESSAGE, _SET_VERSION, _SET_ROUND, _SET_AT = (
    getattr(Frame, f.name).__set__ for f in dataclass_fields(Frame)
)


def _remember(body: bytes, frame: Frame) -> None:
    """Keep the message part of a valid frame's ``body`` for :func:`_known`."""
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    rest = body.split(b" ", 2)[2]
    if frame.at is not None:
        rest = rest.rpartition(_AT_SEP)[0]  # at= is the last field; without it the frame is as valid
    cls = type(frame.message)
    _KNOWN[rest] = _Known(frame.src, frame.message, frame.round, cls.CONTROL, cls in TAGGABLE)


def _known(piece: bytes) -> Frame | None:
    """The frame ``b"$" + piece`` if it is valid and its message part is in :data:`_KNOWN`; None when that cannot
    be told this way (only :func:`_parse_checked` may then judge the frame). The caller keeps ``piece`` shorter than
    128 bytes. A piece accepted holds no ``\\n`` but its last byte (no valid message part holds one): it is one whole
    frame, as the stream decoder would have cut it."""
    body = piece[:-7]
    if piece[-7:] != b"*%04X\r\n" % _crc_hqx(body, 0xFFFF):  # hot path: syntax of the tail and CRC, one test
        return None
    parts = body.split(b" ", 2)
    if len(parts) != 3:
        return None
    ver, seq_text, rest = parts
    at: int | None = None
    known = _KNOWN.get(rest)
    if known is None:  # a device data message with its event time?
        head, sep, at_text = rest.rpartition(_AT_SEP)
        known = _KNOWN.get(head) if sep else None
        if known is None or not known.taggable or not at_text.isdigit():
            return None
        if len(at_text) > 1 and (at_text[0] == 0x30 or len(at_text) > MAX_AT_DIGITS):
            return None
        at = int(at_text)
    if ver != _VERSION or not seq_text.isdigit():
        return None
    if len(seq_text) > 1 and (seq_text[0] == 0x30 or len(seq_text) > 5):  # a leading zero, or too many digits
        return None
    seq = int(seq_text)
    src, msg, tag, control, _taggable = known
    if seq > MAX_SEQ or (seq == 0) is not control:
        return None
    frame = _new(Frame)
    _SET_SEQ(frame, seq)
    _SET_SRC(frame, src)
    _SET_MESSAGE(frame, msg)
    _SET_VERSION(frame, PROTOCOL_VERSION)
    _SET_ROUND(frame, tag)
    _SET_AT(frame, at)
    return frame


class FrameDecoder:
    """A resynchronising stream decoder: feed it bytes in any slicing, get frames and errors in order.

    Guarantees: never raises on any input; returns a :class:`Frame` only for a complete frame that
    passed every check of docs/protocol.md §8; every discarded byte is in some :class:`BadFrame`.
    """

    __slots__ = ("_buf", "_skipping")

    def __init__(self) -> None:
        self._buf = b""  # an incomplete frame: '$' and at most 127 more bytes, no '\n'
        self._skipping = False  # discarding the rest of an over-long frame until the next '$'

    def feed(self, data: bytes) -> list[Frame | BadFrame]:
        """Consume ``data``; return the frames and errors completed by it, in stream order."""
        # hot path: one split on '$' per feed; a whole known frame per piece is the common case (see _known).
        data = self._buf + data if self._buf else bytes(data)
        self._buf = b""
        pieces = data.split(b"$")
        out: list[Frame | BadFrame] = []
        lead = pieces[0]  # before the first '$': garbage, or the tail of an over-long frame
        if lead and not self._skipping:
            out.append(BadFrame(ErrorReason.GARBAGE, lead, "bytes outside a frame"))
        last = len(pieces) - 1
        if not last:
            return out
        self._skipping = False
        for piece in pieces[1:last]:
            frame = _known(piece) if len(piece) < MAX_FRAME else None
            if frame is None:
                self._piece(piece, False, out)
            else:
                out.append(frame)
        piece = pieces[last]  # often incomplete when fed in small reads: not worth a CRC until it ends in CRLF
        frame = _known(piece) if len(piece) < MAX_FRAME and piece[-2:] == b"\r\n" else None
        if frame is None:
            self._piece(piece, True, out)
        else:
            out.append(frame)
        return out

    def _piece(self, piece: bytes, last: bool, out: list[Frame | BadFrame]) -> None:
        """Judge the bytes after one '$' up to the next (``last``: up to the end of what was fed)."""
        n = len(piece)
        nl = piece.find(b"\n", 0, MAX_FRAME - 1)
        if nl == n - 1 and nl >= 0:  # one whole frame, which _known could not vouch for
            out.append(_parse_new(b"$" + piece))
        elif nl >= 0:
            out.append(parse_frame(b"$" + piece[: nl + 1]))
            out.append(BadFrame(ErrorReason.GARBAGE, piece[nl + 1 :], "bytes outside a frame"))
        elif n >= MAX_FRAME:
            out.append(BadFrame(ErrorReason.TOO_LONG, b"$" + piece[: MAX_FRAME - 1], "no end within 128 bytes"))
            self._skipping = last
        elif not last:
            out.append(BadFrame(ErrorReason.TRUNCATED, b"$" + piece, "frame cut by a new '$'"))
        else:
            self._buf = b"$" + piece  # an incomplete frame: wait for more bytes

    @property
    def pending(self) -> int:
        """Bytes held for an incomplete frame."""
        return len(self._buf)
