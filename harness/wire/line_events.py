"""What a line end reports to its owner, in every dialect: a frame received, bytes rejected, a frame delivered or
refused by the peer, the link going up or down. Frozen records; a dialect's ends return lists of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame, Message, NakReason


@dataclass(frozen=True, slots=True)
class Received:
    """A new data frame from the peer, accepted and acknowledged: act on it (duplicates are not reported)."""

    frame: Frame


@dataclass(frozen=True, slots=True)
class Rejected:
    """Bytes that were not a valid frame (reported, never acted on)."""

    error: BadFrame


@dataclass(frozen=True, slots=True)
class Delivered:
    """The peer acknowledged our data frame ``seq`` carrying ``message``."""

    seq: int
    message: Message


@dataclass(frozen=True, slots=True)
class Refused:
    """The peer NAKed our data frame ``seq``; it is not retransmitted."""

    seq: int
    message: Message
    reason: NakReason


@dataclass(frozen=True, slots=True)
class LinkChanged:
    """The link went up (a valid frame arrived) or down (silence, or retries exhausted)."""

    up: bool
    why: str


LinkEvent = Received | Rejected | Delivered | Refused | LinkChanged
