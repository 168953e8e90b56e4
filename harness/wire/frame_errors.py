"""What a dialect says about bytes it did not accept, and what an encoder raises (docs/protocol.md §8): shared by
every dialect.

Guarantees: :class:`BadFrame` is a record the decoders return, never raise, with ``seq`` and ``src`` only where the
frame's integrity check passed; :data:`NAK_FOR` names the NAK owed for each error that earns one (all others are
dropped silently); :class:`EncodeError` is what an encoder raises for a frame that breaks the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from harness.errors import XocdiaError
from harness.wire.messages import NakReason, Source


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
