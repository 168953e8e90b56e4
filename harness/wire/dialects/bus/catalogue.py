"""The numbers of ``xocdia-bus`` (docs/dialects/xocdia-bus.md §2-§4): frame limits, the address of each role, the
type code of each message, the one-byte codes of enumerations and the trailer's flag bits, plus :class:`Poll`, the
bus master's poll request (the one message this dialect adds to the protocol's catalogue), the data seq's wrap
(:func:`next_seq`) and the slack both ends of a line allow a deadline (:data:`EPS`).

Guarantees: every table here is a bijection on what it maps (an address per role, a code per message class), shared
unchanged by the encoder (:mod:`~harness.wire.dialects.bus.encode`), the decoder
(:mod:`~harness.wire.dialects.bus.decode`) and the framer (:mod:`~harness.wire.dialects.bus.framer`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.wire.messages import (
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Drop,
    DropItem,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    Message,
    NakReason,
    Problem,
    ProblemReason,
    ReaderRearranged,
    Reassembled,
    ReshakeReason,
    Resolved,
    Result,
    ShakeEnd,
    ShakeStart,
    Source,
    TokensPlaced,
    VoidClause,
)

START = 0xA5
#: Largest value of the length byte (body and CRC); the longest defined frame (a HELLO with 32-character id and fw)
#: has 73.
MAX_LEN = 128
MIN_LEN = 5  # ADDR TYPE SEQ + CRC
MAX_SEQ = 255
MAX_MS = 86_400_000
UINT32 = 1 << 32
AT_LIMIT = 10**32  # an event time has at most 32 decimal digits (docs/protocol.md §6)

#: Bus addresses, fixed by role.
ADDRESS: dict[Source, int] = {
    Source.BOWL: 1,
    Source.SHAKER: 2,
    Source.READER: 3,
    Source.LAMP: 4,
    Source.CONSOLE: 5,
}
ROLE_AT: dict[int, Source] = {a: s for s, a in ADDRESS.items()}


@dataclass(frozen=True, slots=True)
class Poll(Message):
    """The master asks ``device`` for its oldest queued report and acknowledges the report ``ack`` it got last from
    it (0: none). A control frame (seq 0)."""

    TYPE: ClassVar[str] = "POLL"
    SOURCES: ClassVar[frozenset[Source]] = frozenset({Source.SERVER})
    CONTROL: ClassVar[bool] = True
    device: Source
    ack: int


# --- type codes ----------------------------------------------------------------------------------------------------

POLL = 0x01
NOTHING, ACK, NAK, HELLO = 0x80, 0x81, 0x82, 0x90
#: Lamp commands (requests to the lamp's address): code -> class.
LAMP_CODES: dict[int, type[Message]] = {
    0x10: LampOpen,
    0x11: LampClose,
    0x12: LampReshake,
    0x13: LampPause,
    0x14: LampResume,
    0x15: LampVoid,
}
#: Device reports: code -> (role, class).
REPORT_CODES: dict[int, tuple[Source, type[Message]]] = {
    0xA0: (Source.BOWL, BowlOn),
    0xA1: (Source.BOWL, BowlOff),
    0xB0: (Source.SHAKER, ShakeStart),
    0xB1: (Source.SHAKER, ShakeEnd),
    0xB2: (Source.SHAKER, Drop),
    0xC0: (Source.READER, Result),
    0xC1: (Source.READER, ReaderRearranged),
    0xE0: (Source.CONSOLE, TokensPlaced),
    0xE1: (Source.CONSOLE, Reassembled),
    0xE2: (Source.CONSOLE, ConsoleRearranged),
    0xE3: (Source.CONSOLE, Problem),
    0xE4: (Source.CONSOLE, Resolved),
}
#: Message class -> type code (the inverse of LAMP_CODES and REPORT_CODES).
CODE_OF: dict[type[Message], int] = {
    **{cls: code for code, cls in LAMP_CODES.items()},
    **{cls: code for code, (_src, cls) in REPORT_CODES.items()},
}

#: Enumerations as one byte each (the value's index).
DROP_ITEMS = (DropItem.BOWL, DropItem.PLATE, DropItem.TOKEN)
PROBLEMS = (ProblemReason.EQUIPMENT, ProblemReason.RESHAKE_CAP)
RESHAKES = (ReshakeReason.DROP, ReshakeReason.STANDING)
CLAUSES = (VoidClause.SH_4A, VoidClause.SH_4B, VoidClause.SH_5, VoidClause.ERR_3)
NAKS = (NakReason.VERSION, NakReason.TYPE, NakReason.FIELD, NakReason.STATE)
NO_TOKEN = 0xFF

FLAG_ROUND, FLAG_AT32, FLAG_ATLONG = 0x01, 0x02, 0x04

#: Slack when comparing the time with a deadline: a caller woken at ``next_deadline()`` minus a float rounding error
#: still finds the work due (the in-process bench arms its timers a microsecond early).
EPS = 1e-6


def next_seq(seq: int) -> int:
    """The data seq after ``seq``: 1..255, wrapping to 1 (0 is the control frames')."""
    return 1 if seq >= 255 else seq + 1


class FieldError(ValueError):
    """A field that cannot be encoded or decoded. Never escapes the bus codec: the encoder turns it into an
    EncodeError, the decoder into a ``field`` BadFrame."""
