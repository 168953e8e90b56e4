"""Ledger and history checkers: pure functions over (history, final read, expected settlement).

Each checker returns the :class:`Violation` list it found and is registered once, with its name and the clause
it decides, by :func:`checker`; :func:`check_all` runs them all and returns a :class:`CheckReport` with one verdict
per checker. Expected settlement is the oracle's (``harness.judge``, written from RULES.md and the table's ground
truth), keyed by the server's round id; payouts come from :mod:`harness.judge.paytable`, never from the server's
code.

Fault tolerance the checkers allow (a server may refuse to guess): a round the server voids or cancels and
refunds is acceptable whatever the table did (e.g. cancelled on restart, ERR-3); a round the server *settles*
must be settled on the table's faces and paid per the paytable.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from harness.judge.expect import ExpectedRound, expected_bet
from harness.judge.history import FinalRead, Op
from harness.judge.paytable import PAYTABLE
from harness.judge.timeline import first_ends
from harness.records import BetRecordRow, BetResult, OpFunction, OpType, RoundEvent, RoundEventKind, RoundStatus
from simulator.bets import BetType


@dataclass(frozen=True, slots=True)
class Violation:
    """One violation a checker found; ``clause``: the rule whose check failed (default: the checker's,
    :data:`CHECKER_CLAUSES`)."""

    checker: str
    what: str
    round_id: str = ""
    bet_id: str = ""
    player: str = ""
    clause: str = ""

    @property
    def rule(self) -> str:
        """The clause this violation breaks."""
        return self.clause or CHECKER_CLAUSES.get(self.checker, "GLI 2.8.2")

    def __str__(self) -> str:
        where = " ".join(
            x for x in (f"round {self.round_id}" if self.round_id else "", f"bet {self.bet_id}" if self.bet_id else "",
                        self.player) if x
        )  # fmt: skip
        return f"[{self.checker}] {where + ': ' if where else ''}{self.what}"


@dataclass(frozen=True, slots=True)
class CheckReport:
    violations: tuple[Violation, ...]

    @property
    def passed(self) -> bool:
        return not self.violations

    def by_checker(self) -> dict[str, list[Violation]]:
        out: dict[str, list[Violation]] = {name: [] for name in CHECKERS}
        for v in self.violations:
            out.setdefault(v.checker, []).append(v)
        return out

    def lines(self) -> list[str]:
        out = []
        for name, found in self.by_checker().items():
            out.append(f"  {name:<15} {'ok' if not found else f'FAIL ({len(found)})'}")
            out += [f"    - {v}" for v in found[:10]]
            if len(found) > 10:
                out.append(f"    ... and {len(found) - 10} more")
        return out


Checker = Callable[[Sequence[Op], FinalRead, Mapping[str, ExpectedRound]], list[Violation]]


@dataclass(frozen=True, slots=True)
class CheckerSpec:
    """A registered checker: ``name`` (its violations' ``checker``), the ``clause`` it decides where a violation
    names none of its own (a payout names its bet's row), and the function ``run``."""

    name: str
    clause: str
    run: Checker


_REGISTRY: dict[str, CheckerSpec] = {}


def checker(name: str, clause: str) -> Callable[[Checker], Checker]:
    """Register the decorated function as the checker ``name``, deciding ``clause``; the checkers of this module
    run and report in the order they are registered here, and :data:`REGISTRY`, :data:`ALL`, :data:`CHECKERS` and
    :data:`CHECKER_CLAUSES` are built from them at the end of the module. The function is returned unchanged.

    Raises:
        ValueError: a checker of that name is already registered.
    """

    def register(run: Checker) -> Checker:
        if name in _REGISTRY:
            raise ValueError(f"checker {name!r} is registered twice")
        _REGISTRY[name] = CheckerSpec(name, clause, run)
        return run

    return register


_LANDED = (OpType.OK, OpType.INFO)  # bets that may have reached the server: acknowledged or indeterminate


def _invokes(ops: Sequence[Op]) -> dict[tuple[str, str], Op]:
    return {(op.process, op.client_bet_id): op for op in ops if op.f == OpFunction.BET and op.type == OpType.INVOKE}


def _rows_by_client(final: FinalRead) -> dict[tuple[str, str], list[BetRecordRow]]:
    out: dict[tuple[str, str], list[BetRecordRow]] = defaultdict(list)
    for player, rows in final.records.items():
        for row in rows:
            out[(player, row.client_bet_id)].append(row)
    return out


@checker("lost", "DC-2")  # an acknowledged bet stays valid and is settled (or refunded) when its round ends
def check_lost(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """An acknowledged bet missing from the final read, or present but never settled nor refunded; an
    unknown-outcome bet that is present but unresolved."""
    out: list[Violation] = []
    rows = _rows_by_client(final)
    for op in ops:
        if op.f != OpFunction.BET or op.type not in _LANDED:
            continue
        found = rows.get((op.process, op.client_bet_id), [])
        if not found:
            if op.type == OpType.OK:
                what = f"acknowledged bet {op.client_bet_id} missing from the bet record"
                out.append(Violation("lost", what, op.round_id, op.bet_id, op.process))
            continue
        for row in found:
            if row.result == BetResult.PENDING:
                kind = "acknowledged" if op.type == OpType.OK else "unknown-outcome"
                what = f"{kind} bet {op.client_bet_id} never settled nor refunded"
                out.append(Violation("lost", what, row.round_id, row.bet_id, op.process))
    return out


@checker("unexpected", "DC-3")  # the bet record holds the bets the player made, no other
def check_unexpected(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """A bet in the final read that no player ever attempted."""
    invoked = _invokes(ops)
    out: list[Violation] = []
    for player, rows in sorted(final.records.items()):
        for row in rows:
            if (player, row.client_bet_id) not in invoked:
                what = f"bet {row.bet_type} {row.wagered} (client id {row.client_bet_id!r}) was never attempted"
                out.append(Violation("unexpected", what, row.round_id, row.bet_id, player))
    return out


@checker("duplicate", "DC-2")  # a bet is settled or refunded exactly once, each round ended once
def check_duplicate(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """One attempt recorded as more than one bet, a round ended more than once, or a bet paid or refunded by
    more than one round-ending event (read from the event's settlement lines when the adapter exposes them)."""
    out: list[Violation] = []
    for (player, client), rows in sorted(_rows_by_client(final).items()):
        if len(rows) > 1 and client:
            ids = ", ".join(r.bet_id for r in rows)
            what = f"attempt {client} recorded {len(rows)} times (bets {ids}): paid or refunded more than once"
            out.append(Violation("duplicate", what, rows[0].round_id, rows[1].bet_id, player))
    ends = Counter(e.round_id for e in final.events if e.ends_round)
    for rid, n in sorted(ends.items()):
        if n > 1:
            out.append(Violation("duplicate", f"round ended {n} times", rid))
    paid: Counter[str] = Counter()
    for e in final.events:
        lines = (e.raw or {}).get("data", {}).get("bets") if e.ends_round and e.raw else None
        for line in lines or ():
            if isinstance(line, dict) and "bet_id" in line:
                paid[str(line["bet_id"])] += 1
    for bet_id, n in sorted(paid.items()):
        if n > 1:
            out.append(Violation("duplicate", f"settled or refunded {n} times by round-ending events", bet_id=bet_id))
    return out


def _want(row_round: str, bet_type: str, stake: int, ends: Mapping[str, RoundEvent]) -> tuple[BetResult, int] | None:
    """(result, returned) the paytable gives for the server's end of the round, or None when it has none."""
    end = ends.get(row_round)
    if end is None:
        return None
    if end.kind != RoundEventKind.SETTLED:
        return BetResult.REFUND, stake
    exp = ExpectedRound(0, RoundStatus.SETTLED, "GP-3", end.faces, 0)
    want = expected_bet(exp, bet_type, stake)
    return want.result, want.returned


def _bet_clause(bet_type: str) -> str:
    """The paytable row of a bet type (PAY-1..PAY-10), BET-1 for a type the rules do not know."""
    try:
        return PAYTABLE[BetType(bet_type)].clause
    except ValueError:
        return "BET-1"


@checker("payout", "EQ-3")  # a settled round is settled on the faces the table revealed
def check_payout(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """A settled round whose faces differ from the table's, a settlement of a round the table did not settle,
    or a bet whose result or amount returned differs from the paytable for the round's end."""
    out: list[Violation] = []
    ends = first_ends(final.events)
    for rid, end in sorted(ends.items()):
        exp = expected.get(rid)
        if end.kind == RoundEventKind.SETTLED and exp is not None:
            if exp.status != RoundStatus.SETTLED:
                what = f"server settled on {end.faces}; the table's verdict: {exp.status} ({exp.clause})"
                out.append(Violation("payout", what, rid, clause=exp.by or exp.clause))
            elif exp.faces != end.faces:
                what = f"server settled on {end.faces}; the table showed {exp.faces}"
                out.append(Violation("payout", what, rid, clause="SH-1" if exp.overlap else "EQ-3"))
    for player, rows in sorted(final.records.items()):
        for row in rows:
            want = _want(row.round_id, row.bet_type, row.wagered, ends)
            if want is None:
                continue
            if (row.result, row.returned) != want:
                what = f"{row.bet_type} {row.wagered}: expected {want[0]} {want[1]}, server {row.result} {row.returned}"
                clause = _bet_clause(row.bet_type) if want[0] != BetResult.REFUND else "REF-1"
                out.append(Violation("payout", what, row.round_id, row.bet_id, player, clause))
    return out


@checker("player_balance", "GLI 2.8.2")  # opening balance + every amount returned - every stake = the balance
def check_player_balance(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """Per player: opening balance + Σ(returned − wagered) over the bet record equals the final balance, and the
    balance is never below zero."""
    out: list[Violation] = []
    for player, opening in sorted(final.opening.items()):
        rows = final.records.get(player, ())
        want = opening + sum(r.returned - r.wagered for r in rows)
        got = final.balances.get(player)
        if got is None:
            out.append(Violation("player_balance", "no balance in the final read", player=player))
        elif got != want:
            out.append(Violation("player_balance", f"balance {got}, bet record implies {want}", player=player))
        elif got < 0:
            out.append(Violation("player_balance", f"balance {got} below zero", player=player))
    return out


@checker("table_balance", "GLI 2.8.2")
def check_table_balance(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """Table-wide, from the players' side: Σ final balances = Σ opening + Σ over the bets that landed (acknowledged,
    or unknown and present) of (paytable return for the round's end − the stake the player asked for)."""
    ends = first_ends(final.events)
    rows = _rows_by_client(final)
    want = sum(final.opening.values())
    for op in ops:
        if op.f != OpFunction.BET or op.type not in _LANDED:
            continue
        found = rows.get((op.process, op.client_bet_id))
        if op.type == OpType.INFO and not found:
            continue
        rid = op.round_id or (found[0].round_id if found else "")
        result = _want(rid, op.bet_type, op.stake, ends)
        want += (result[1] if result is not None else 0) - op.stake
    got = sum(final.balances.values())
    if got != want:
        return [Violation("table_balance", f"players hold {got} in all; the table's money implies {want}")]
    return []


_RANK = {
    RoundEventKind.OPENED: 0,
    RoundEventKind.CLOSED: 1,
    RoundEventKind.SETTLED: 2,
    RoundEventKind.VOID: 2,
    RoundEventKind.CANCELLED: 2,
}


@checker("round_order", "GP-3")  # betting, then the reveal, then the settlement: opened, closed, ended once, in order
def check_round_order(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """Per round: opened first and once, closed at most once and before the end, nothing after the end; rounds
    opened in increasing order of their first event."""
    out: list[Violation] = []
    state: dict[str, int] = {}
    for e in final.events:
        rank = _RANK.get(e.kind)
        last = state.get(e.round_id)
        if last is None:
            if e.kind != RoundEventKind.OPENED:
                out.append(Violation("round_order", f"{e.kind} before the round was opened", e.round_id))
            state[e.round_id] = rank if rank is not None else 0
            continue
        if last == 2:
            out.append(Violation("round_order", f"{e.kind} after the round ended", e.round_id))
        elif rank is not None and rank <= last and not (rank == 2 and last < 2):
            out.append(Violation("round_order", f"{e.kind} out of order (phase went back or repeated)", e.round_id))
        elif rank is not None:
            state[e.round_id] = rank
    return out


@checker("after_close", "GP-3")  # no bet acknowledged after betting closed (GLI-19 C.6.4)
def check_after_close(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> list[Violation]:
    """A bet acknowledged for a round after the bench had already seen the server close that round."""
    closed_at: dict[str, int] = {}
    out: list[Violation] = []
    for op in ops:
        if op.f == OpFunction.CLOSED and op.round_id not in closed_at:
            closed_at[op.round_id] = op.index
        elif op.f == OpFunction.BET and op.type == OpType.OK and op.round_id in closed_at:
            what = f"bet {op.client_bet_id} acknowledged after betting closed (seen at op {closed_at[op.round_id]})"
            out.append(Violation("after_close", what, op.round_id, op.bet_id, op.process))
    return out


#: Every checker, name → its registration, in the order they run and report.
REGISTRY: Mapping[str, CheckerSpec] = MappingProxyType(dict(_REGISTRY))
#: Every checker function by name, in that order.
ALL: dict[str, Checker] = {name: spec.run for name, spec in REGISTRY.items()}
#: The checkers' names, in that order.
CHECKERS: tuple[str, ...] = tuple(REGISTRY)
#: The clause each checker decides, where a violation names none of its own (a payout names its bet's row).
CHECKER_CLAUSES: dict[str, str] = {name: spec.clause for name, spec in REGISTRY.items()}


def check_all(ops: Sequence[Op], final: FinalRead, expected: Mapping[str, ExpectedRound]) -> CheckReport:
    """Run every checker; never raises on server data."""
    found: list[Violation] = []
    for checker in ALL.values():
        found += checker(ops, final, expected)
    return CheckReport(tuple(found))
