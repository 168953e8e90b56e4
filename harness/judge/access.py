"""Access control judged: who may do what (``fixtures/rules/ACCESS.md``, ACC-1..ACC-4).

The bench makes requests under chosen credentials through an adapter that declares
:class:`~harness.bench.adapters.capabilities.Principals`: as a player on their own account or on another player's,
as a player on a supervisor action, as the supervisor, with no credentials or with credentials the server never
issued. Each is an :class:`AccessRequest`; the adapter answers an :class:`AccessAnswer` (accepted, denied for the
credentials, or refused for another reason, with the server's code) and keeps every answer in order.
:func:`check_access` states, for every answer, whether the server let the right principal do the right thing,
each decision a :class:`~harness.judge.checks.Check` of its clause and each wrong answer a
:class:`~harness.judge.findings.Difference` naming it. Frozen records only; nothing here imports ``gameserver``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from harness.judge.checks import Check
from harness.judge.findings import Difference
from harness.records import BetRecordRow

__all__ = [
    "ACCOUNT_CLAUSE",
    "ALL_SUPERVISOR_ACTIONS",
    "CORRECT",
    "CREATE_PLAYER",
    "NO_CREDENTIALS_CLAUSE",
    "SUPERVISOR_ACTIONS",
    "SUPERVISOR_CLAUSE",
    "VALID_CLAUSE",
    "AccessAction",
    "AccessAnswer",
    "AccessRequest",
    "Answer",
    "Credentials",
    "check_access",
]

ACCOUNT_CLAUSE = "ACC-1"  # a player acts on and reads only their own account, from their own credentials
SUPERVISOR_CLAUSE = "ACC-2"  # supervisor actions need supervisor credentials
NO_CREDENTIALS_CLAUSE = "ACC-3"  # no credentials, or credentials never issued: refused, nothing changes
VALID_CLAUSE = "ACC-4"  # issued credentials keep working for what they allow, across a reconnection
#: the supervisor actions on the round in play (:meth:`GameServerAdapter.supervise`'s actions)
SUPERVISOR_ACTIONS = ("open", "pause", "resume", "cancel")
#: the supervisor's correction of a settled round's outcome (:attr:`AccessRequest.round_id` to
#: :attr:`AccessRequest.faces`)
CORRECT = "correct"
#: the supervisor's creation of a player (:attr:`AccessRequest.target`, with a wallet of
#: :attr:`AccessRequest.balance`)
CREATE_PLAYER = "create_player"
#: every supervisor action a request may ask for
ALL_SUPERVISOR_ACTIONS = (*SUPERVISOR_ACTIONS, CORRECT, CREATE_PLAYER)


class Credentials(StrEnum):
    """Whose credentials a request carries."""

    PLAYER = "player"  # the credentials the server issued to the player :attr:`AccessRequest.holder`
    SUPERVISOR = "supervisor"  # the supervisor's credentials
    NONE = "none"  # no credentials at all
    UNKNOWN = "unknown"  # credentials in the right form that the server never issued


class AccessAction(StrEnum):
    """What a request asks for."""

    BET = "bet"  # place a bet; the request names the account of :attr:`AccessRequest.target`
    BALANCE = "balance"  # read the balance of :attr:`AccessRequest.target`
    BET_RECORD = "bet_record"  # read the bet record of :attr:`AccessRequest.target`
    SUPERVISE = "supervise"  # a supervisor action (:attr:`AccessRequest.supervisor_action`)
    CONNECT = "connect"  # open a session (an event stream), closed again at once


class Answer(StrEnum):
    """How the server answered a request."""

    ACCEPTED = "accepted"  # done as asked
    DENIED = "denied"  # refused for the credentials (none, unknown, or not allowed this)
    REFUSED = "refused"  # refused for another reason (a malformed request, the game's state)


_TARGETED = (AccessAction.BET, AccessAction.BALANCE, AccessAction.BET_RECORD)


@dataclass(frozen=True, slots=True)
class AccessRequest:
    """One request under chosen credentials. ``holder``: the player whose credentials it carries (only with
    :attr:`Credentials.PLAYER`); ``target``: the account it names (a bet, a read, the player to create); a bet's
    ``bet_type``, ``stake`` and ``client_bet_id``; a supervisor action's name (``supervisor_action``, one of
    :data:`ALL_SUPERVISOR_ACTIONS`); a correction's ``round_id`` (as the server names it) and ``faces`` (as sent:
    four of R/W for a well-formed one); a created player's opening ``balance``.

    Raises:
        ValueError: a field that does not fit the others (the message names it and what it allows).
    """

    credentials: Credentials
    action: AccessAction
    holder: str = ""
    target: str = ""
    bet_type: str = ""
    stake: int = 0
    client_bet_id: str = ""
    supervisor_action: str = ""
    round_id: str = ""
    faces: str = ""
    balance: int = 0

    def __post_init__(self) -> None:
        Credentials(self.credentials)  # ValueError naming the value when it is not one
        AccessAction(self.action)
        if (self.credentials == Credentials.PLAYER) != bool(self.holder):
            raise ValueError("holder: the player whose credentials, given with credentials 'player' only")
        if self.action in _TARGETED and not self.target:
            raise ValueError(f"target: the account a {self.action} request names is required")
        supervising = self.action == AccessAction.SUPERVISE
        if supervising and self.supervisor_action not in ALL_SUPERVISOR_ACTIONS:
            raise ValueError(
                f"supervisor_action: one of {', '.join(ALL_SUPERVISOR_ACTIONS)}; got {self.supervisor_action!r}"
            )
        correcting = supervising and self.supervisor_action == CORRECT
        if correcting != bool(self.round_id and self.faces) or (not correcting and (self.round_id or self.faces)):
            raise ValueError("round_id, faces: the round and the faces of a correction, given with 'correct' only")
        creating = supervising and self.supervisor_action == CREATE_PLAYER
        if creating and (not self.target or self.balance < 0):
            raise ValueError("target, balance: a player to create needs an id and an opening balance >= 0")
        if self.balance and not creating:
            raise ValueError("balance: a created player's opening balance, given with 'create_player' only")
        if self.action == AccessAction.BET and (not self.bet_type or self.stake <= 0 or not self.client_bet_id):
            raise ValueError("bet_type, stake, client_bet_id: a bet request needs a bet type, a stake > 0 and an id")

    @property
    def own(self) -> bool:
        """The request uses credentials for what they allow: a player's on their own account (or their own
        session), the supervisor's on anything."""
        if self.credentials == Credentials.SUPERVISOR:
            return True
        if self.credentials != Credentials.PLAYER:
            return False
        if self.action == AccessAction.SUPERVISE:
            return False
        return self.action == AccessAction.CONNECT or self.target == self.holder

    def describe(self) -> str:
        """The request in words: who, with whose credentials, asked for what."""
        who = {
            Credentials.PLAYER: f"{self.holder}'s credentials",
            Credentials.SUPERVISOR: "the supervisor's credentials",
            Credentials.NONE: "no credentials",
            Credentials.UNKNOWN: "credentials the server never issued",
        }[self.credentials]
        what = {
            AccessAction.BET: f"a bet of {self.stake} on {self.bet_type} for {self.target}'s account",
            AccessAction.BALANCE: f"{self.target}'s balance",
            AccessAction.BET_RECORD: f"{self.target}'s bet record",
            AccessAction.SUPERVISE: f"the supervisor action {self.supervisor_action}",
            AccessAction.CONNECT: "a session",
        }[self.action]
        if self.supervisor_action == CORRECT:
            what = f"a correction of round {self.round_id} to {self.faces}"
        elif self.supervisor_action == CREATE_PLAYER:
            what = f"a new player {self.target} with a balance of {self.balance}"
        return f"{what}, with {who}"


@dataclass(frozen=True, slots=True)
class AccessAnswer:
    """What the server answered ``request``: ``answer`` with the server's ``code`` when not accepted; an accepted
    bet's ``bet_id`` and ``round_id`` (as the server names them)."""

    request: AccessRequest
    answer: Answer
    code: str = ""
    bet_id: str = ""
    round_id: str = ""

    @property
    def accepted(self) -> bool:
        return self.answer == Answer.ACCEPTED


def clause_of(request: AccessRequest) -> str:
    """The clause that decides ``request``: ACC-3 without credentials or with unknown ones, ACC-2 for a player on a
    supervisor action, ACC-1 for a player on another player's account, ACC-4 for credentials used for what they
    allow."""
    if request.credentials in (Credentials.NONE, Credentials.UNKNOWN):
        return NO_CREDENTIALS_CLAUSE
    if request.own:
        return VALID_CLAUSE
    if request.action == AccessAction.SUPERVISE:
        return SUPERVISOR_CLAUSE
    return ACCOUNT_CLAUSE


def check_access(
    answers: Sequence[AccessAnswer], records: Mapping[str, Sequence[BetRecordRow]], checks: list[Check]
) -> list[Difference]:
    """Judge every answer (appending one :class:`Check` each to ``checks``; ``records``: each observed player's bet
    record) and return the differences, in order:

    - without credentials or with unknown ones, nothing is accepted (ACC-3);
    - a player's credentials on a supervisor action are never accepted (ACC-2);
    - a player's credentials never read another player's account (ACC-1); a bet that names another player's
      account is refused, or booked to the credentials' own player: never found in the other's bet record, and,
      accepted, found in the own one when that is observed (ACC-1);
    - credentials used for what they allow are never denied for them (ACC-4); a refusal for another reason (the
      game's state) is no access failure.

    Linear in the answers and the records. Never raises on server data."""
    booked: dict[str, str] = {row.bet_id: player for player, rows in records.items() for row in rows}
    out: list[Difference] = []
    for answer in answers:
        request = answer.request
        clause = clause_of(request)
        what = request.describe()
        difference: Difference | None = None
        if clause == VALID_CLAUSE:
            if answer.answer == Answer.DENIED:
                difference = Difference(answer.round_id, "", clause, what, "allowed", f"denied ({answer.code})")
        elif clause == ACCOUNT_CLAUSE and request.action == AccessAction.BET and answer.accepted:
            owner = booked.get(answer.bet_id, "")
            want = f"refused or booked to {request.holder}'s own account"
            if owner and owner != request.holder:
                got = f"accepted and booked to {owner}'s account"
                difference = Difference(answer.round_id, answer.bet_id, clause, what, want, got)
            elif not owner and request.holder in records:
                got = f"accepted as bet {answer.bet_id}, which {request.holder}'s bet record does not hold"
                difference = Difference(answer.round_id, answer.bet_id, clause, what, want, got)
        elif answer.accepted:
            difference = Difference(answer.round_id, answer.bet_id, clause, what, "refused", "accepted")
        checks.append(Check(clause, what, difference is None, "" if difference is None else str(difference)))
        if difference is not None:
            out.append(difference)
    return out
