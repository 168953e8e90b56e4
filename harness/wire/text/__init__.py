"""The frame layer: encode frames to bytes and decode a byte stream back to frames (docs/protocol.md §2, §3, §8).

This module owns what wraps a message body: version, seq, src, type, the optional round tag and event
time, the CRC, the length limit and resynchronisation. The value of each field of a message body is
checked and converted by :mod:`harness.wire.text.fields`.

:func:`encode` refuses (raises :class:`EncodeError`) a frame that breaks the protocol, so a bad
frame never leaves the bench by accident. :class:`FrameDecoder` never raises on input: it resynchronises
on ``$``, reports every corrupt, truncated or invalid frame as a :class:`BadFrame`, and returns a
:class:`Frame` only for a frame that passed every check.
The frame's envelope (limit, CRC, error records) is :mod:`harness.wire.text.envelope`, encoding
:mod:`harness.wire.text.encoder`, decoding :mod:`harness.wire.text.decoder` (with its fast path for repeats,
:mod:`harness.wire.text.known_frames`); the names below stay importable from here.
"""

from __future__ import annotations

from harness.wire.frame_errors import NAK_FOR, BadFrame, EncodeError, ErrorReason
from harness.wire.text.decoder import FrameDecoder, parse_frame
from harness.wire.text.encoder import encode, encode_body
from harness.wire.text.envelope import MAX_FRAME, crc16
from harness.wire.text.fields import MAX_AT_DIGITS, MAX_SEQ
from harness.wire.text.known_frames import KNOWN as _KNOWN  # noqa: F401  (the decoder's cache, as text._KNOWN)

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
