"""Ground truth: every physical fact of the table as a typed, frozen event.

Each event carries ``t``, the simulation time in seconds at which it happened. Events are appended to an
:class:`simulator.eventlog.EventLog` in the order they happen; that order is the order of ``t`` (ties keep emission
order).

Faces are written as four characters, token 0 first: ``R`` red, ``W`` white, ``S`` standing on its edge.
Rule clauses (RULES.md) are named where an event is the physical side of one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar

from simulator.bets import BetType
from simulator.fastinit import install_fast_init


class RoundStatus(StrEnum):
    """How a round ended at the table."""

    SETTLED = "settled"  # GP-3: outcome revealed, bets settle on it
    VOID = "void"  # SH-4a, SH-4b, SH-5: every bet returned
    CANCELLED = "cancelled"  # ERR-3: problem not resolved at once, every bet refunded


class DropItem(StrEnum):
    """What fell during a shake (SH-2)."""

    BOWL = "bowl"
    PLATE = "plate"
    TOKEN = "token"


class ReshakeReason(StrEnum):
    DROP = "drop"  # SH-2
    STANDING = "standing"  # SH-3


class PauseReason(StrEnum):
    RESHAKE_CAP = "reshake_cap"  # more re-shakes needed than the profile allows
    EQUIPMENT = "equipment"  # any other unexpected problem (ERR-1)


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all ground-truth events. ``kind`` is the stable JSON name of the subclass."""

    kind: ClassVar[str] = "event"
    t: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: ``kind`` first, then the fields in declaration order (time in µs precision)."""
        cls = type(self)
        return record_dict(cls, [getattr(self, name) for name in field_names(cls)])


TIME_FIELDS = frozenset({"t", "deadline", "arrives"})  # written rounded to the microsecond
_NAMES: dict[type[Event], tuple[tuple[str, bool], ...]] = {}


def field_names(cls: type[Event]) -> tuple[str, ...]:
    """The fields of event class ``cls`` in declaration order (``t`` first): its constructor's parameters."""
    return tuple(name for name, _ in _names(cls))


def _names(cls: type[Event]) -> tuple[tuple[str, bool], ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple((f.name, f.name in TIME_FIELDS) for f in fields(cls))
    return names


def record_dict(cls: type[Event], values: Sequence[Any]) -> dict[str, Any]:
    """:meth:`Event.to_dict` of the event of class ``cls`` with these field values (in declaration order):
    ``kind`` first, then each field, times rounded to the microsecond."""
    out: dict[str, Any] = {"kind": cls.kind}
    for (name, is_time), value in zip(_names(cls), values, strict=True):
        out[name] = round(value, 6) if is_time else value
    return out


@dataclass(frozen=True, slots=True)
class RoundOpened(Event):
    """The lamp shows *betting open* for ``round`` until ``deadline`` (sim time)."""

    kind: ClassVar[str] = "round_opened"
    round: int
    deadline: float


@dataclass(frozen=True, slots=True)
class BettingClosed(Event):
    """The lamp shows *betting closed*."""

    kind: ClassVar[str] = "betting_closed"
    round: int


@dataclass(frozen=True, slots=True)
class TokensPlaced(Event):
    """GP-1: four tokens are on the plate."""

    kind: ClassVar[str] = "tokens_placed"
    round: int


@dataclass(frozen=True, slots=True)
class BowlPlaced(Event):
    """GP-2: the bowl covers the plate (also after a reassembly or before a re-shake)."""

    kind: ClassVar[str] = "bowl_placed"
    round: int


@dataclass(frozen=True, slots=True)
class ShakeStarted(Event):
    kind: ClassVar[str] = "shake_started"
    round: int
    shake: int  # 1 for the first shake of the round, 2 for the first re-shake, ...


@dataclass(frozen=True, slots=True)
class ShakeEnded(Event):
    kind: ClassVar[str] = "shake_ended"
    round: int
    shake: int


@dataclass(frozen=True, slots=True)
class ShakeSkipped(Event):
    """SH-4a: the dealer forgot to shake (a fact no device reports directly: the shaker stays silent)."""

    kind: ClassVar[str] = "shake_skipped"
    round: int


@dataclass(frozen=True, slots=True)
class Dropped(Event):
    """SH-2: the bowl, the plate or a token fell during shake ``shake``."""

    kind: ClassVar[str] = "dropped"
    round: int
    shake: int
    item: DropItem
    token: int | None  # which token fell, for DropItem.TOKEN


@dataclass(frozen=True, slots=True)
class Reassembled(Event):
    """SH-2: after a drop the dealer has put plate, tokens and bowl back together."""

    kind: ClassVar[str] = "reassembled"
    round: int


@dataclass(frozen=True, slots=True)
class Reshake(Event):
    """SH-2 / SH-3: the dealer will shake again; ``count`` re-shakes so far in this round (1-based)."""

    kind: ClassVar[str] = "reshake"
    round: int
    reason: ReshakeReason
    count: int


@dataclass(frozen=True, slots=True)
class BowlLifted(Event):
    """GP-3 / SH-4b / SH-5: the bowl comes off. ``early``: before betting closed; ``touched``: it touched a token."""

    kind: ClassVar[str] = "bowl_lifted"
    round: int
    early: bool
    touched: bool
    token: int | None  # the token touched, when touched


@dataclass(frozen=True, slots=True)
class Revealed(Event):
    """EQ-3: the faces showing once the bowl is off; ``overlap`` when tokens lie on one another (SH-1)."""

    kind: ClassVar[str] = "revealed"
    round: int
    faces: str
    overlap: bool


@dataclass(frozen=True, slots=True)
class Rearranged(Event):
    """SH-1: the dealer spread overlapping tokens with the stick; ``faces`` are unchanged."""

    kind: ClassVar[str] = "rearranged"
    round: int
    faces: str


@dataclass(frozen=True, slots=True)
class Paused(Event):
    """ERR-1: an unexpected problem; the round is paused while the supervisor is informed."""

    kind: ClassVar[str] = "paused"
    round: int
    reason: PauseReason


@dataclass(frozen=True, slots=True)
class Resumed(Event):
    """ERR-2: the problem was resolved quickly; the round goes on."""

    kind: ClassVar[str] = "resumed"
    round: int


@dataclass(frozen=True, slots=True)
class RoundEnded(Event):
    """The table's verdict on a round: what a correct server must do with its bets.

    ``faces``/``reds`` are set only for :attr:`RoundStatus.SETTLED`; ``clause`` names the rule that voided or
    cancelled the round (``SH-4a``, ``SH-4b``, ``SH-5``, ``ERR-3``).
    """

    kind: ClassVar[str] = "round_ended"
    round: int
    status: RoundStatus
    clause: str | None
    faces: str | None
    reds: int | None
    reshakes: int


@dataclass(frozen=True, slots=True)
class PlayerJoined(Event):
    kind: ClassVar[str] = "player_joined"
    player: str
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerLeft(Event):
    kind: ClassVar[str] = "player_left"
    player: str
    seat: int


@dataclass(frozen=True, slots=True)
class LinkDown(Event):
    """The player's network link dropped (DC-1..3 / NET-1)."""

    kind: ClassVar[str] = "link_down"
    player: str


@dataclass(frozen=True, slots=True)
class LinkUp(Event):
    kind: ClassVar[str] = "link_up"
    player: str


@dataclass(frozen=True, slots=True)
class BetSent(Event):
    """A player sent a bet; it reaches the server at ``arrives`` (after network latency), if the link stays up.

    ``bet_id`` is unique in the run and usable as an idempotency key. Whether the server accepts the bet (it may
    arrive after betting closed) is the server's decision, not a physical fact.
    """

    kind: ClassVar[str] = "bet_sent"
    round: int
    player: str
    bet_id: str
    bet: BetType
    stake: int  # integer minor units
    arrives: float


EVENT_TYPES: tuple[type[Event], ...] = (
    RoundOpened,
    BettingClosed,
    TokensPlaced,
    BowlPlaced,
    ShakeStarted,
    ShakeEnded,
    ShakeSkipped,
    Dropped,
    Reassembled,
    Reshake,
    BowlLifted,
    Revealed,
    Rearranged,
    Paused,
    Resumed,
    RoundEnded,
    PlayerJoined,
    PlayerLeft,
    LinkDown,
    LinkUp,
    BetSent,
)
EVENT_BY_KIND: dict[str, type[Event]] = {cls.kind: cls for cls in EVENT_TYPES}


# hot path: the model creates millions of events (simulator.fastinit).
for _cls in EVENT_TYPES:
    install_fast_init(_cls)

_ENUM_FIELDS: dict[str, type[StrEnum]] = {
    "status": RoundStatus,
    "item": DropItem,
    "bet": BetType,
}
_REASON_ENUM: dict[type[Event], type[StrEnum]] = {Reshake: ReshakeReason, Paused: PauseReason}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`Event.to_dict` output (``seq`` allowed besides).

    Raises:
        ValueError: not a JSON object, unknown ``kind``, missing or unexpected fields, or a value outside its enum.
    """
    if type(data) is not dict:
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    kind = data.get("kind")
    spec = _SPECS.get(kind) if type(kind) is str else None
    if spec is None:
        raise ValueError(f"unknown event kind {kind!r}; known: {', '.join(sorted(EVENT_BY_KIND))}")
    cls, names, required, converters = spec
    # hot path: ``kind``, maybe ``seq``, and exactly the class's fields (the count, then each name, rules out extras)
    if len(data) == len(names) + (2 if "seq" in data else 1) and data.keys() >= required:
        values = [data[n] for n in names]
        for i, convert, keeps_none in converters:
            if not keeps_none or values[i] is not None:
                values[i] = convert(values[i])
        return cls(*values)
    extra = set(data) - set(names) - {"kind", "seq"}
    missing = [n for n in names if n not in data]
    raise ValueError(f"{kind}: missing fields {missing}, unexpected fields {sorted(extra)}")


_Converter = tuple[int, type[StrEnum], bool]


def _converters(cls: type[Event]) -> tuple[_Converter, ...]:
    """Each enum field of ``cls``: its position, its enum, and whether None is kept as it is (a ``reason`` is always
    one of its class's reasons; the other enum fields may be None)."""
    out: list[_Converter] = []
    for i, name in enumerate(field_names(cls)):
        if name == "reason":
            out.append((i, _REASON_ENUM[cls], False))
        elif name in _ENUM_FIELDS:
            out.append((i, _ENUM_FIELDS[name], True))
    return tuple(out)


_SPECS: dict[str, tuple[type[Event], tuple[str, ...], frozenset[str], tuple[_Converter, ...]]] = {
    cls.kind: (cls, field_names(cls), frozenset(field_names(cls)), _converters(cls)) for cls in EVENT_TYPES
}
