"""The frame's envelope (docs/protocol.md §2, §8): its size limit, its CRC, and the records of a frame refused.

Guarantees: :func:`crc16` is CRC-16/CCITT-FALSE; :class:`BadFrame` is a record the decoders return, never raise, with
``seq`` and ``src`` only where the CRC was good; :data:`NAK_FOR` names the NAK owed for each error that earns one (all
others are dropped silently); :class:`EncodeError` is what an encoder raises for a frame that breaks the protocol.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass
from enum import StrEnum

from harness.errors import XocdiaError
from harness.wire.protocol.messages import NakReason, Source

MAX_FRAME = 128


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
