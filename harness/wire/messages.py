"""Every message of the table wire protocol (docs/protocol.md §6) as a frozen dataclass.

A message knows its wire ``TYPE``, which ends may send it (``SOURCES``), whether it is a control
frame (``CONTROL``: ACK, NAK, HB carry ``seq=0`` and are never acknowledged) and its fields in wire
order (the dataclass field order). Values are validated by :mod:`harness.wire.text`, not here, so
that a test can build a message with a bad value and check that the encoder refuses it; the one exception is a read's
optional per-token confidence (:data:`Confidence`), checked when the read is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

PROTOCOL_VERSION = 1


class Source(StrEnum):
    """Who sent a frame: one of the five devices, or the game server (``SRV``)."""

    BOWL = "BOWL"
    SHAKER = "SHAKER"
    READER = "READER"
    LAMP = "LAMP"
    CONSOLE = "CONSOLE"
    SERVER = "SRV"


DEVICES: tuple[Source, ...] = (Source.BOWL, Source.SHAKER, Source.READER, Source.LAMP, Source.CONSOLE)
ANY_END: frozenset[Source] = frozenset(Source)


class NakReason(StrEnum):
    VERSION = "version"
    TYPE = "type"
    FIELD = "field"
    STATE = "state"


class DropItem(StrEnum):
    BOWL = "bowl"
    PLATE = "plate"
    TOKEN = "token"


class ProblemReason(StrEnum):
    EQUIPMENT = "equipment"
    RESHAKE_CAP = "reshake_cap"


class ReshakeReason(StrEnum):
    DROP = "drop"
    STANDING = "standing"


class VoidClause(StrEnum):
    SH_4A = "SH-4a"
    SH_4B = "SH-4b"
    SH_5 = "SH-5"
    ERR_3 = "ERR-3"


@dataclass(frozen=True, slots=True)
class Message:
    """Base of all messages."""

    TYPE: ClassVar[str] = ""
    SOURCES: ClassVar[frozenset[Source]] = frozenset()
    CONTROL: ClassVar[bool] = False


# --- any end --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello(Message):
    """First data frame after opening a port: identity and protocol version."""

    TYPE: ClassVar[str] = "HELLO"
    SOURCES: ClassVar[frozenset[Source]] = ANY_END
    id: str
    proto: int
    fw: str


@dataclass(frozen=True, slots=True)
class Ack(Message):
    TYPE: ClassVar[str] = "ACK"
    SOURCES: ClassVar[frozenset[Source]] = ANY_END
    CONTROL: ClassVar[bool] = True
    of: int


@dataclass(frozen=True, slots=True)
class Nak(Message):
    TYPE: ClassVar[str] = "NAK"
    SOURCES: ClassVar[frozenset[Source]] = ANY_END
    CONTROL: ClassVar[bool] = True
    of: int
    reason: NakReason


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    TYPE: ClassVar[str] = "HB"
    SOURCES: ClassVar[frozenset[Source]] = ANY_END
    CONTROL: ClassVar[bool] = True


# --- bowl sensor ----------------------------------------------------------------------------------

_BOWL = frozenset({Source.BOWL})
_SHAKER = frozenset({Source.SHAKER})
_READER = frozenset({Source.READER})
_CONSOLE = frozenset({Source.CONSOLE})
_SERVER = frozenset({Source.SERVER})


@dataclass(frozen=True, slots=True)
class BowlOn(Message):
    """GP-2: the bowl is seated on the plate."""

    TYPE: ClassVar[str] = "ON"
    SOURCES: ClassVar[frozenset[Source]] = _BOWL


@dataclass(frozen=True, slots=True)
class BowlOff(Message):
    """GP-3 / SH-4b / SH-5: the bowl was lifted; ``touch`` when it touched token ``token``."""

    TYPE: ClassVar[str] = "OFF"
    SOURCES: ClassVar[frozenset[Source]] = _BOWL
    touch: bool
    token: int | None


# --- shaker ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShakeStart(Message):
    TYPE: ClassVar[str] = "START"
    SOURCES: ClassVar[frozenset[Source]] = _SHAKER


@dataclass(frozen=True, slots=True)
class ShakeEnd(Message):
    TYPE: ClassVar[str] = "END"
    SOURCES: ClassVar[frozenset[Source]] = _SHAKER


@dataclass(frozen=True, slots=True)
class Drop(Message):
    """SH-2: ``item`` fell during the shake; ``token`` set only for a token."""

    TYPE: ClassVar[str] = "DROP"
    SOURCES: ClassVar[frozenset[Source]] = _SHAKER
    item: DropItem
    token: int | None


# --- result reader --------------------------------------------------------------------------------


#: How sure the reader is of each token it reports, token 0 first: four floats, each 0.0 to 1.0.
Confidence = tuple[float, float, float, float]


def default_confidence(faces: str) -> Confidence:
    """The confidence a read means when it gives none: ``1.0`` for each token read (R, W, S), ``0.0`` for each U.
    Guarantees four values for four faces; a face string of another length gives a tuple of its length."""
    return tuple(0.0 if f == "U" else 1.0 for f in faces)  # type: ignore[return-value]


def check_confidence(value: object) -> Confidence:
    """``value`` as a :data:`Confidence`: a sequence of exactly four numbers, each 0 to 1 (ints are taken as floats;
    a bool, NaN or a string is refused).

    Raises:
        ValueError: naming ``confidence`` (or ``confidence[i]``) and the allowed values.
    """
    if isinstance(value, str | bytes) or not isinstance(value, tuple | list) or len(value) != 4:
        raise ValueError(f"confidence: must be 4 numbers, each 0 to 1, token 0 first; got {value!r}")
    out = []
    for i, c in enumerate(value):
        if type(c) not in (int, float) or not 0.0 <= c <= 1.0:  # NaN fails the comparison; bool is not a number
            raise ValueError(f"confidence[{i}]: must be a number 0 to 1; got {c!r}")
        out.append(float(c))
    return tuple(out)  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Result(Message):
    """EQ-3: the faces seen (R, W, S standing, U unreadable), token 0 first; ``overlap`` for SH-1; ``confidence``
    how sure the reader is of each token (None: :func:`default_confidence`), carried by the dialects that declare
    ``confidence``.

    Raises:
        ValueError: a ``confidence`` that is not four numbers 0 to 1 (:func:`check_confidence`).
    """

    TYPE: ClassVar[str] = "RESULT"
    SOURCES: ClassVar[frozenset[Source]] = _READER
    faces: str
    overlap: bool
    confidence: Confidence | None = None

    def __post_init__(self) -> None:
        if self.confidence is not None:
            object.__setattr__(self, "confidence", check_confidence(self.confidence))


@dataclass(frozen=True, slots=True)
class ReaderRearranged(Message):
    """SH-1: the faces re-read after the dealer spread the tokens (R/W only); ``confidence`` as for
    :class:`Result`.

    Raises:
        ValueError: a ``confidence`` that is not four numbers 0 to 1 (:func:`check_confidence`).
    """

    TYPE: ClassVar[str] = "REARRANGED"
    SOURCES: ClassVar[frozenset[Source]] = _READER
    faces: str
    confidence: Confidence | None = None

    def __post_init__(self) -> None:
        if self.confidence is not None:
            object.__setattr__(self, "confidence", check_confidence(self.confidence))


# --- dealer console -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokensPlaced(Message):
    TYPE: ClassVar[str] = "TOKENS"
    SOURCES: ClassVar[frozenset[Source]] = _CONSOLE


@dataclass(frozen=True, slots=True)
class Reassembled(Message):
    TYPE: ClassVar[str] = "REASSEMBLED"
    SOURCES: ClassVar[frozenset[Source]] = _CONSOLE


@dataclass(frozen=True, slots=True)
class ConsoleRearranged(Message):
    TYPE: ClassVar[str] = "REARRANGED"
    SOURCES: ClassVar[frozenset[Source]] = _CONSOLE


@dataclass(frozen=True, slots=True)
class Problem(Message):
    TYPE: ClassVar[str] = "PROBLEM"
    SOURCES: ClassVar[frozenset[Source]] = _CONSOLE
    reason: ProblemReason


@dataclass(frozen=True, slots=True)
class Resolved(Message):
    TYPE: ClassVar[str] = "RESOLVED"
    SOURCES: ClassVar[frozenset[Source]] = _CONSOLE


# --- lamp commands (server -> lamp) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LampOpen(Message):
    """Betting open for ``round``; closes ``ms`` milliseconds after the frame is received."""

    TYPE: ClassVar[str] = "OPEN"
    SOURCES: ClassVar[frozenset[Source]] = _SERVER
    round: str
    ms: int


@dataclass(frozen=True, slots=True)
class LampClose(Message):
    TYPE: ClassVar[str] = "CLOSE"
    SOURCES: ClassVar[frozenset[Source]] = _SERVER
    round: str


@dataclass(frozen=True, slots=True)
class LampReshake(Message):
    TYPE: ClassVar[str] = "RESHAKE"
    SOURCES: ClassVar[frozenset[Source]] = _SERVER
    round: str
    reason: ReshakeReason


@dataclass(frozen=True, slots=True)
class LampPause(Message):
    TYPE: ClassVar[str] = "PAUSE"
    SOURCES: ClassVar[frozenset[Source]] = _SERVER
    round: str


@dataclass(frozen=True, slots=True)
class LampResume(Message):
    TYPE: ClassVar[str] = "RESUME"
    SOURCES: ClassVar[frozenset[Source]] = _SERVER
    round: str


@dataclass(frozen=True, slots=True)
class LampVoid(Message):
    TYPE: ClassVar[str] = "VOID"
    SOURCES: ClassVar[frozenset[Source]] = _SERVER
    round: str
    clause: VoidClause


MESSAGE_TYPES: tuple[type[Message], ...] = (
    Hello,
    Ack,
    Nak,
    Heartbeat,
    BowlOn,
    BowlOff,
    ShakeStart,
    ShakeEnd,
    Drop,
    Result,
    ReaderRearranged,
    TokensPlaced,
    Reassembled,
    ConsoleRearranged,
    Problem,
    Resolved,
    LampOpen,
    LampClose,
    LampReshake,
    LampPause,
    LampResume,
    LampVoid,
)

#: The lamp's commands (server -> lamp): what a lamp acts on.
LAMP_COMMANDS: frozenset[type[Message]] = frozenset({LampOpen, LampClose, LampReshake, LampPause, LampResume, LampVoid})


def _catalogue() -> dict[tuple[Source, str], type[Message]]:
    out: dict[tuple[Source, str], type[Message]] = {}
    for cls in MESSAGE_TYPES:
        for src in cls.SOURCES:
            key = (src, cls.TYPE)
            if key in out:  # pragma: no cover - a catalogue bug, caught at import
                raise RuntimeError(f"two messages for {key}")
            out[key] = cls
    return out


CATALOGUE: dict[tuple[Source, str], type[Message]] = _catalogue()

#: Messages that may end with the optional round tag ``round=<id>`` and then the optional event time ``at=<ms>``:
#: every data message a device other than the lamp sends, except HELLO (docs/protocol.md §6, "Round tag",
#: "Event time").
TAGGABLE: frozenset[type[Message]] = frozenset(
    cls
    for cls in MESSAGE_TYPES
    if not cls.CONTROL
    and cls is not Hello
    and {Source.BOWL, Source.SHAKER, Source.READER, Source.CONSOLE} >= cls.SOURCES
)


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded (or to-be-encoded) frame: header plus message."""

    seq: int
    src: Source
    message: Message
    version: int = PROTOCOL_VERSION
    round: str | None = None  # the optional round tag of a device data message (docs/protocol.md §6)
    at: int | None = None  # the optional event time (device clock, ms) of a device data message (§6, revision 1.2)
