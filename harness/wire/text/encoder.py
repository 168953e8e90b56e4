"""Frames to bytes (docs/protocol.md §2, §3): ``$VER SEQ SRC TYPE fields [round=] [at=]*CRC\r\n``.

Guarantees: :func:`encode` returns the one canonical encoding of a valid frame, at most :data:`MAX_FRAME` bytes, and
raises :class:`EncodeError` naming the field for a frame that breaks the protocol, so a bad frame never leaves the
bench by accident. Each field's value is checked and written by :mod:`harness.wire.text.fields`.
"""

from __future__ import annotations

from binascii import crc_hqx as _crc_hqx
from collections.abc import Callable
from typing import Any, NamedTuple

from harness.wire.frame_errors import EncodeError
from harness.wire.messages import TAGGABLE, Frame, Message, Source
from harness.wire.text.envelope import MAX_FRAME
from harness.wire.text.fields import CROSS_CHECKED, LAYOUT, MAX_SEQ, FieldError, cross_check, enc_at, enc_value


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
