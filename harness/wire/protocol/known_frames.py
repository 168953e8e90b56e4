"""The decoder's fast path: the message part of every valid frame seen, decoded once (docs/performance.md).

A device repeats a few dozen message parts, so :func:`known_frame` decodes a repeat by a dictionary lookup and a CRC.
Guarantees: :func:`known_frame` returns a frame only when :func:`~harness.wire.protocol.decoder.parse_frame`'s full
checks would return the same frame, and None whenever it cannot tell (the full checks then judge); :data:`KNOWN`
holds at most ``KNOWN_MAX`` entries and is emptied when full. Messages are frozen, so frames may share them.
"""

from __future__ import annotations

from binascii import crc_hqx as _crc_hqx
from dataclasses import fields as dataclass_fields
from typing import NamedTuple

from harness.wire.protocol.fields import MAX_AT_DIGITS, MAX_SEQ
from harness.wire.protocol.messages import PROTOCOL_VERSION, TAGGABLE, Frame, Message, Source


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
KNOWN: dict[bytes, _Known] = {}  # ``SRC TYPE fields [round=]`` of valid frames, less any ``at=``; emptied when full
KNOWN_MAX = 1024
_VERSION = b"%d" % PROTOCOL_VERSION
_AT_SEP = b" at="
# hot path: a Frame filled through its slot descriptors, as the frozen dataclass __init__ does, less its overhead.
_new = object.__new__
_SET_SEQ, _SET_SRC, _SET_MESSAGE, _SET_VERSION, _SET_ROUND, _SET_AT = (
    getattr(Frame, f.name).__set__ for f in dataclass_fields(Frame)
)


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
    at: int | None = None
    known = KNOWN.get(rest)
    if known is None:  # a device data message with its event time?
        head, sep, at_text = rest.rpartition(_AT_SEP)
        known = KNOWN.get(head) if sep else None
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
