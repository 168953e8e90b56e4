"""The vocabulary the bench and the judge share: what a server said about bets and rounds, the players the bench
asks it to know, the kinds those records use (each a :class:`enum.StrEnum`, so a member compares equal to its
text and formats as it: printed output and JSON keep the words the server and the files use), the history's op
vocabulary, and :class:`Outcome`, the status every verdict reports. Frozen records only; nothing here does I/O
or imports another harness layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

_E = TypeVar("_E", bound=StrEnum)


class RoundEventKind(StrEnum):
    """What a round event says happened (the adapters map the server's own event names onto these)."""

    OPENED = "opened"
    CLOSED = "closed"  # betting closed
    RESHAKE = "reshake"
    PAUSED = "paused"
    RESUMED = "resumed"
    SETTLED = "settled"
    VOID = "void"
    CANCELLED = "cancelled"


ROUND_END_KINDS = (RoundEventKind.SETTLED, RoundEventKind.VOID, RoundEventKind.CANCELLED)


class RoundStatus(StrEnum):
    """A round's status as a bet record (``round_status``) or an outcome file (``status``) states it. The three
    ends have the words of the round-ending :class:`RoundEventKind` (``RoundStatus(kind)`` converts one)."""

    IN_PROGRESS = "in_progress"
    SETTLED = "settled"
    VOID = "void"
    CANCELLED = "cancelled"


ROUND_END_STATUSES = (RoundStatus.SETTLED, RoundStatus.VOID, RoundStatus.CANCELLED)
REFUNDED_STATUSES = (RoundStatus.VOID, RoundStatus.CANCELLED)  # every bet of such a round is returned


class BetResult(StrEnum):
    """A bet's result in a bet record."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    REFUND = "refund"  # the round was void or cancelled: the stake is returned
    PENDING = "pending"  # the round has not ended


DECIDED_RESULTS = (BetResult.WIN, BetResult.LOSE, BetResult.PUSH)  # the bets a settled round decided


class DeviceRole(StrEnum):
    """The five devices at the table, by the lower-case names bench files, fault schedules and serial port names
    use (the wire's ``Source`` spells them in capitals)."""

    BOWL = "bowl"
    SHAKER = "shaker"
    READER = "reader"
    LAMP = "lamp"
    CONSOLE = "console"


class RefusalCode(StrEnum):
    """The codes of a refused bet (``BetReply.code``) that the harness reads (docs/adapters.md, "Refusal codes"): an
    adapter maps its server's own refusals onto them and keeps any other code as the server sent it."""

    #: no round is taking bets: between rounds, or the betting period is over (GP-3)
    BETTING_CLOSED = "betting_closed"
    #: the round is paused (ERR-1)
    ROUND_PAUSED = "round_paused"
    #: as ``betting_closed`` (other words for it the judge takes alike)
    ROUND_NOT_OPEN = "round_not_open"
    #: as ``betting_closed``
    NO_ROUND_OPEN = "no_round_open"
    #: the stake is above the player's balance (LIM-1)
    INSUFFICIENT_BALANCE = "insufficient_balance"
    #: the stake is not a whole number of chips (LIM-2)
    STAKE_NOT_CHIP_MULTIPLE = "stake_not_chip_multiple"
    #: the stake is below the table minimum (LIM-3)
    STAKE_BELOW_MINIMUM = "stake_below_minimum"
    #: the stake is above the table maximum (LIM-3)
    STAKE_ABOVE_MAXIMUM = "stake_above_maximum"
    #: the bet type is none of the game's ten (BET-1)
    UNKNOWN_BET_TYPE = "unknown_bet_type"
    #: the client bet id was already used with another bet type or stake (IDEM-1)
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"


class OpType(StrEnum):
    """The type of a history op, as in Jepsen: ``invoke`` starts an operation, which completes ``ok`` (it took
    effect), ``fail`` (it certainly did not) or indeterminate (it may or may not have: Jepsen's ``info``).

    The indeterminate member is named :attr:`INFO` after Jepsen, but its value stays ``"unknown"``: the value is
    what the history hash covers, and ``"info"`` is already the bench's notes' value, so writing ``"info"`` would
    change the hash of every shipped fault run and break the replay of every manifest recorded before.
    """

    INVOKE = "invoke"
    OK = "ok"
    FAIL = "fail"
    INFO = "unknown"  # indeterminate (Jepsen's info); serialised "unknown", see above
    NOTE = "info"  # the bench's own observation (a fault, a heal, a round seen closed), not a player's operation


class OpFunction(StrEnum):
    """What a history op did (Jepsen's ``f``): a player's ``bet`` or ``connect``; the bench's notes."""

    BET = "bet"
    CONNECT = "connect"
    FAULT = "fault"  # a fault started
    HEAL = "heal"  # a fault healed
    PROBE = "probe"  # a steady-state probe
    CLOSED = "closed"  # the bench saw the server close betting in a round
    ENDED = "ended"  # the bench saw the server end a round
    STUCK = "stuck"  # the server opened a round the table never saw open
    CANCEL = "cancel"  # the bench's supervisor cancelled a round that did not end
    SKIPPED = "skipped"  # a fault whose round ended before its phase came


def parse_or_raw(kind: type[_E], text: str) -> _E | str:
    """The member of ``kind`` whose value is ``text``, or ``text`` unchanged when no member has it: a server's
    unknown word is kept as it sent it, for the judge to report as a difference rather than to fail on."""
    try:
        return kind(text)
    except ValueError:
        return text


class OutcomeStatus(StrEnum):
    """How a check or a run ended (OpenHTF's test outcomes): it passed, it failed a check, it stopped on an error,
    it was aborted before the end, or it was refused (never ran)."""

    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"
    ABORTED = "ABORTED"
    REFUSED = "REFUSED"


@dataclass(frozen=True, slots=True)
class Outcome:
    """A status and, unless it passed, why. Made with the named constructors; ``str()`` is the status, followed
    by the reason in parentheses when there is one: ``PASS``, ``FAIL (3 differences)``."""

    status: OutcomeStatus
    reason: str = ""

    @classmethod
    def passed(cls) -> Outcome:
        return cls(OutcomeStatus.PASS)

    @classmethod
    def failed(cls, reason: str) -> Outcome:
        return cls(OutcomeStatus.FAIL, reason)

    @classmethod
    def error(cls, reason: str) -> Outcome:
        return cls(OutcomeStatus.ERROR, reason)

    @classmethod
    def aborted(cls, reason: str) -> Outcome:
        return cls(OutcomeStatus.ABORTED, reason)

    @classmethod
    def refused(cls, reason: str) -> Outcome:
        return cls(OutcomeStatus.REFUSED, reason)

    @property
    def ok(self) -> bool:
        """True for PASS."""
        return self.status is OutcomeStatus.PASS

    def __str__(self) -> str:
        return f"{self.status} ({self.reason})" if self.reason else str(self.status)


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A player the server must know, with its opening balance (minor units)."""

    player_id: str
    balance: int


@dataclass(frozen=True, slots=True)
class BetReply:
    """The server's answer to a bet: accepted (with its id and balances) or rejected (with an error code).
    ``confirmed`` is False when the player never saw an answer (disconnected before the confirmation)."""

    player_id: str
    client_bet_id: str
    bet_type: str
    stake: int
    accepted: bool
    confirmed: bool = True
    bet_id: str = ""
    round_id: str = ""
    code: str = ""
    balance_before: int | None = None
    balance_after: int | None = None


@dataclass(frozen=True, slots=True)
class RoundEvent:
    """A round event as the server published it, normalised.

    ``kind``: a :class:`RoundEventKind` (the adapter maps the server's event name; events of other kinds are not
    round events and are left out). ``clause`` for reshake, void and cancelled; ``faces`` (4 of R/W) for settled;
    ``at`` the server's own time stamp; ``raw`` what it sent.
    """

    round_id: str
    kind: RoundEventKind
    at: float
    clause: str = ""
    faces: str = ""
    reason: str = ""
    raw: Mapping[str, Any] | None = None

    @property
    def ends_round(self) -> bool:
        return self.kind in ROUND_END_KINDS


@dataclass(frozen=True, slots=True)
class BetRecordRow:
    """One row of a player's bet record (the BETS.csv columns of the shared formats). ``result`` and
    ``round_status`` are members of :class:`BetResult` and :class:`RoundStatus` when the server used their words.

    ``balance_before`` (the balance just before the stake was taken) and ``balance_after`` (just after the bet's
    own credit) are None in every row of a server that does not serve them (:data:`OPTIONAL_RECORD_FIELDS`); an
    adapter declares the ones its server serves, and the bet record's check (REC-1) compares only those."""

    bet_id: str
    round_id: str
    player_id: str
    bet_type: str
    wagered: int
    result: BetResult | str  # a server's unknown word is kept as sent (parse_or_raw), for the judge to report
    returned: int
    round_status: RoundStatus | str  # likewise
    outcome: str  # 4 of R/W, or empty
    balance_before: int | None = None  # None: the server does not serve it
    balance_after: int | None = None  # likewise
    client_bet_id: str = ""
    reds: int | None = None  # the outcome's number of red faces (0-4); None when the round was not settled


#: The fields of a :class:`BetRecordRow` that a server may not serve (None in every row when it does not). A game
#: server adapter declares those its server serves (``GameServerAdapter.bet_record_fields``; all of them unless it
#: says otherwise), read through :func:`served_record_fields`.
OPTIONAL_RECORD_FIELDS: tuple[str, ...] = ("balance_before", "balance_after")


def served_record_fields(declared: object, owner: str = "the adapter") -> frozenset[str]:
    """``declared``, the optional bet-record fields ``owner`` says its server serves, as a set of names from
    :data:`OPTIONAL_RECORD_FIELDS` (empty: the server serves none of them).

    Raises:
        ValueError: ``declared`` is a single string or not a collection of strings, or names a field that is not
            optional; the message names ``owner``'s ``bet_record_fields`` and the allowed values.
    """
    allowed = ", ".join(OPTIONAL_RECORD_FIELDS)
    if isinstance(declared, str | bytes) or not isinstance(declared, frozenset | set | tuple | list):
        raise ValueError(
            f"{owner}: bet_record_fields must be a set of field names (allowed: {allowed}; empty for none), "
            f"got {declared!r}"
        )
    unknown = [f for f in declared if f not in OPTIONAL_RECORD_FIELDS]
    if unknown:
        raise ValueError(f"{owner}: bet_record_fields names {unknown!r}, not optional fields (allowed: {allowed})")
    return frozenset(str(f) for f in declared)
