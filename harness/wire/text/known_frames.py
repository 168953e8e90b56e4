"""The decoder's fast path: the message part of every valid frame seen, decoded once (docs/performance.md).

A device repeats a few dozen message parts, so :func:`known_frame` decodes a repeat by a dictionary lookup and a CRC.
A one-field message whose value changes from frame to frame (``ACK of=<seq>``, the lamp's ``CLOSE round=<id>``) is
decoded from its type's template (:data:`TEMPLATES`): a lookup of the text before its value, and the field's own
decoder for the value. Guarantees: :func:`known_frame` returns a frame only when
:func:`~harness.wire.text.decoder.parse_frame`'s full checks would return the same frame, and None whenever it
cannot tell (the full checks then judge); :data:`KNOWN` holds at most ``KNOWN_MAX`` entries and is emptied when
full. Messages are frozen, so frames may share them.
"""

from __future__ import annotations

import re
from binascii import crc_hqx as _crc_hqx
from collections.abc import Callable
from dataclasses import fields as dataclass_fields
from typing import Any, NamedTuple

from harness.wire.messages import CATALOGUE, PROTOCOL_VERSION, TAGGABLE, Frame, Message, Source
from harness.wire.text.fields import CROSS_CHECKED, LAYOUT, MAX_AT_DIGITS, MAX_SEQ, FieldError


class _Known(NamedTuple):
    """What the text after ``VER SEQ`` of a valid frame without an event time decodes to. That text alone decides
    the src, the message and the round tag; the header adds only seq, which must be 0 exactly when ``control``;
    a ``taggable`` message may also end with `` at=<ms>``."""

    src: Source
    message: Message
    round: str | None
    control: bool
    taggable: bool


class _Template(NamedTuple):
    """A one-field message type that never carries a round tag or an event time, known by the text before its
    value (``SRC TYPE name``): the frame's src, the message class, the field's decoder, and whether it is a control
    message (seq 0)."""

    src: Source
    cls: type[Message]
    decode: Callable[[str], Any]
    control: bool


#: Every one-field message type without a round tag or event time (and without a rule between fields), by the text
#: before its value.
TEMPLATES: dict[bytes, _Template] = {
    f"{src.value} {cls.TYPE} {LAYOUT[cls][0][0]}".encode("ascii"): _Template(
        src, cls, LAYOUT[cls][0][1][1], cls.CONTROL
    )
    for (src, _type), cls in CATALOGUE.items()
    if len(LAYOUT[cls]) == 1 and cls not in TAGGABLE and cls not in CROSS_CHECKED
}
# a value a template may hand to its field's decoder (which still judges it): no space, no line end, ASCII
_TEMPLATE_VALUE = re.compile(rb"[A-Za-z0-9._:-]{1,32}\Z")

# hot path: a device repeats a few dozen message parts, so each is decoded once (frozen messages may be shared).
KNOWN: dict[bytes, _Known] = {}  # ``SRC TYPE fields [round=]`` of valid frames, less any ``at=``; emptied when full
KNOWN_MAX = 1024
_VERSION = b"%d" % PROTOCOL_VERSION
_AT_SEP = b" at="
# hot path: a Frame filled through its slot descriptors, as the frozen dataclass __init__ does, less its overhead.
_new = object.__new__
_SET_SEQ, _SET_SRC, _SET_MESSAGE, _SET_VERSION, _SET_ROUND, _SET_AT = (
    getattr(Frame, f.name).__set__ for f in dataclass_fields(Frame)
)


def new_frame(seq: int, src: Source, message: Message, round: str | None, at: int | None) -> Frame:
    """``Frame(seq, src, message, PROTOCOL_VERSION, round, at)``, the same frozen frame built faster (no checks: the
    caller's values are already valid)."""
    frame = _new(Frame)
    _SET_SEQ(frame, seq)
    _SET_SRC(frame, src)
    _SET_MESSAGE(frame, message)
    _SET_VERSION(frame, PROTOCOL_VERSION)
    _SET_ROUND(frame, round)
    _SET_AT(frame, at)
    return frame


def remember(body: bytes, frame: Frame) -> None:
    """Keep the message part of a valid frame's ``body`` for :func:`known_frame`."""
    if len(KNOWN) >= KNOWN_MAX:
        KNOWN.clear()
    rest = body.split(b" ", 2)[2]
    if frame.at is not None:
        rest = rest.rpartition(_AT_SEP)[0]  # at= is the last field; without it the frame is as valid
    cls = type(frame.message)
    KNOWN[rest] = _Known(frame.src, frame.message, frame.round, cls.CONTROL, cls in TAGGABLE)


def known_frame(piece: bytes) -> Frame | None:
    """The frame ``b"$" + piece`` if it is valid and its message part is in :data:`KNOWN`; None when that cannot
    be told this way (only the decoder's full checks may then judge it). The caller keeps ``piece`` shorter than
    128 bytes. A piece accepted holds no ``\\n`` but its last byte (no valid message part holds one): it is one whole
    frame, as the stream decoder would have cut it."""
    body = piece[:-7]
    if piece[-7:] != b"*%04X\r\n" % _crc_hqx(body, 0xFFFF):  # hot path: syntax of the tail and CRC, one test
        return None
    parts = body.split(b" ", 2)
    if len(parts) != 3:
        return None
    ver, seq_text, rest = parts
    if ver != _VERSION or not seq_text.isdigit():
        return None
    if len(seq_text) > 1 and (seq_text[0] == 0x30 or len(seq_text) > 5):  # a leading zero, or too many digits
        return None
    seq = int(seq_text)
    if seq > MAX_SEQ:
        return None
    at: int | None = None
    known = KNOWN.get(rest)
    if known is None:  # a device data message with its event time?
        head, sep, at_text = rest.rpartition(_AT_SEP)
        known = KNOWN.get(head) if sep else None
        if known is None:
            return _templated(seq, rest)
        if not known.taggable or not at_text.isdigit():
            return None
        if len(at_text) > 1 and (at_text[0] == 0x30 or len(at_text) > MAX_AT_DIGITS):
            return None
        at = int(at_text)
    src, msg, tag, control, _taggable = known
    if (seq == 0) is not control:
        return None
    return new_frame(seq, src, msg, tag, at)


def _templated(seq: int, rest: bytes) -> Frame | None:
    """The frame of a one-field message of :data:`TEMPLATES` with ``seq`` and message part ``rest``, when its
    value passes the field's decoder (its part is then remembered); None when that cannot be told this way."""
    head, sep, text = rest.rpartition(b"=")
    template = TEMPLATES.get(head) if sep else None
    if template is None or (seq == 0) is not template.control or not _TEMPLATE_VALUE.match(text):
        return None
    try:
        message = template.cls(template.decode(text.decode("ascii")))  # type: ignore[call-arg]
    except FieldError:
        return None
    if len(KNOWN) >= KNOWN_MAX:
        KNOWN.clear()
    KNOWN[rest] = _Known(template.src, message, None, template.control, False)  # as the full checks' remember()
    return new_frame(seq, template.src, message, None, None)
