"""What a correct server must do with each round, from the simulator's ground truth alone.

The table's verdict (:class:`simulator.events.RoundEnded`) says whether a round settles (on which faces), is void
(SH-4a, SH-4b, SH-5) or is cancelled (ERR-3), and how many re-shakes it took (SH-2, SH-3). A round the harness
itself cancelled through the supervisor (ERR-3) never reaches a table verdict: the lamp clears the table; the
harness's action log says so. Settlement amounts come from :mod:`harness.judge.paytable` (written from RULES.md),
never from the server's code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.judge.paytable import PAYTABLE, outcome, returned
from harness.records import BetResult, RoundEvent, RoundEventKind, RoundStatus
from simulator.bets import BetType
from simulator.events import BowlLifted, Event, Reshake, Revealed, RoundEnded, ShakeSkipped


@dataclass(frozen=True, slots=True)
class ExpectedRound:
    """The oracle's statement about one round (sim round number ``round``)."""

    round: int
    status: str  # a RoundStatus end (settled | void | cancelled), or one of the oracle's NOT_STARTED | UNFINISHED
    clause: str  # the rule that decides it: GP-3 for a plain settlement, else SH-4a/SH-4b/SH-5/ERR-3
    faces: str  # 4 of R/W when settled, else ""
    reshakes: int
    overlap: bool = False  # the reveal needed spreading (SH-1)
    by: str = ""  # the clause whose check decides the round when not ``clause`` (PROC-2 for a void SH-4a ...)
    corrected: str = ""  # faces an accepted correction re-settled the round's bets on (COR-1), else ""

    @property
    def reds(self) -> int | None:
        return self.faces.count("R") if self.status == RoundStatus.SETTLED else None


@dataclass(frozen=True, slots=True)
class ExpectedBet:
    """What one bet must get: result (win/lose/push/refund/pending), amount returned, and the clause."""

    result: BetResult
    returned: int
    clause: str


def expected_rounds(truth: Iterable[Event], cancelled_by_supervisor: Iterable[int] = ()) -> dict[int, ExpectedRound]:
    """Per sim round: the expected end, from the table's ``round_ended`` events; a round the harness's supervisor
    cancelled (the server accepted it) ends cancelled (ERR-3) unless the table voided it."""
    out: dict[int, ExpectedRound] = {}
    overlap: set[int] = set()
    reshakes: dict[int, int] = {}
    for event in truth:
        if isinstance(event, Revealed) and event.overlap:
            overlap.add(event.round)
        elif isinstance(event, Reshake):
            reshakes[event.round] = event.count
        elif isinstance(event, RoundEnded):
            status = RoundStatus(event.status)  # the table's verdict, in the records' words
            settled = status == RoundStatus.SETTLED
            out[event.round] = ExpectedRound(
                event.round,
                status,
                "GP-3" if settled else str(event.clause),
                str(event.faces) if settled else "",
                event.reshakes,
                event.round in overlap and settled,
            )
    for round_no in cancelled_by_supervisor:  # the server took the cancel, so it had not settled the round: a table
        # verdict "settled" reached while the server stood paused gives way; a void verdict stands (a late cancel)
        if round_no not in out or out[round_no].status == RoundStatus.SETTLED:
            out[round_no] = ExpectedRound(round_no, RoundStatus.CANCELLED, "ERR-3", "", reshakes.get(round_no, 0))
    return out


def expected_by_round_id(
    truth: Sequence[Event],
    rounds: Mapping[str, int],
    cancelled: Iterable[str] = (),
    server_events: Iterable[RoundEvent] = (),
    server_clock_is_sim: bool = False,
) -> dict[str, ExpectedRound]:
    """The expectation for each server round id in ``rounds`` (id → sim round number) whose round the table ended,
    or the harness's supervisor cancelled (``cancelled``: server round ids). ``truth`` is read more than once.
    With ``server_clock_is_sim`` (the server's event times are simulation time), an early lift is judged against
    the server's own close (:func:`lifted_after_close`, :func:`server_closes`)."""
    by_sim = expected_rounds(truth, [rounds[r] for r in cancelled if r in rounds])
    expected = {rid: by_sim[sim] for rid, sim in rounds.items() if sim in by_sim}
    if server_clock_is_sim:
        closed_at = server_closes(server_events)
        early = [rid for rid, exp in expected.items() if rid in closed_at and _lifted_early(exp)]
        of_round = _truth_of_rounds(truth, {expected[rid].round for rid in early}) if early else {}
        for rid in early:
            exp = expected[rid]
            expected[rid] = lifted_after_close(exp, of_round.get(exp.round, ()), closed_at[rid])
    return expected


def _lifted_early(exp: ExpectedRound) -> bool:
    """Whether :func:`lifted_after_close` may change ``exp`` (a round the table voided for an early lift)."""
    return exp.status == RoundStatus.VOID and exp.clause == "SH-4b"


def _truth_of_rounds(truth: Iterable[Event], rounds: set[int]) -> dict[int, list[Event]]:
    """The table's events of each sim round in ``rounds``, in order (one pass over ``truth``)."""
    out: dict[int, list[Event]] = {}
    for event in truth:
        number = getattr(event, "round", None)
        if number in rounds:
            out.setdefault(number, []).append(event)
    return out


def server_closes(server_events: Iterable[RoundEvent]) -> dict[str, float]:
    """When each round's betting period ended by the server's account: its ``closed`` event, or earlier the end it
    announced (``closes_at`` in the data of the last ``opened``/``resumed`` event before the close, as the
    reference server's events carry it), since the server refuses bets from then on and records the close at its
    next tick."""
    announced: dict[str, float] = {}
    closed: dict[str, float] = {}
    for event in server_events:
        rid = event.round_id
        if rid in closed:
            continue
        if event.kind == RoundEventKind.CLOSED:
            closed[rid] = min(event.at, announced.get(rid, event.at))
        elif event.kind in (RoundEventKind.OPENED, RoundEventKind.RESUMED):
            data = event.raw.get("data") if isinstance(event.raw, Mapping) else None
            end = data.get("closes_at") if isinstance(data, Mapping) else None
            if isinstance(end, int | float) and not isinstance(end, bool):
                announced[rid] = float(end)
    return closed


def lifted_after_close(exp: ExpectedRound, truth: Iterable[Event], closed_at: float) -> ExpectedRound:
    """``exp`` judged against the server's close of betting at ``closed_at`` (simulation time).

    SH-4b is a lift before the betting period ends, and the server ends it. The table judges "early" by its lamp,
    which shows the close late when the lamp's line is slow; a lift the table called early that came at or after
    the server's close revealed nothing while bets were taken. Such a round is what the close and the lift showed
    (the first void cause established decides, RULES.md): void SH-4a if the dealer forgot to shake (established at
    the close), void SH-5 if the bowl touched a token, otherwise settled on the revealed faces. A reveal with a
    standing token or an overlap keeps the table's verdict: the table stopped there, and what a re-shake or a
    rearrangement would have shown is not known. Any other ``exp`` is returned unchanged.
    """
    if not _lifted_early(exp):
        return exp
    lift: BowlLifted | None = None
    skipped = False
    for event in truth:
        if isinstance(event, ShakeSkipped) and event.round == exp.round:
            skipped = True
        elif isinstance(event, BowlLifted) and event.round == exp.round and event.early:
            lift = event
        elif lift is not None and isinstance(event, Revealed) and event.round == exp.round and event.t == lift.t:
            if lift.t < closed_at:
                return exp
            if skipped:
                return ExpectedRound(exp.round, RoundStatus.VOID, "SH-4a", "", exp.reshakes)
            if lift.touched:
                return ExpectedRound(exp.round, RoundStatus.VOID, "SH-5", "", exp.reshakes)
            if "S" in event.faces or event.overlap:
                return exp
            return ExpectedRound(exp.round, RoundStatus.SETTLED, "GP-3", event.faces, exp.reshakes)
    return exp


def expected_bet(rnd: ExpectedRound | None, bet_type: str, stake: int) -> ExpectedBet:
    """The settlement RULES.md requires for one bet in a round the oracle knows (None: still in progress).

    Raises:
        ValueError: an unknown bet type or a stake that is not a positive multiple of 50.
    """
    bet = BetType(bet_type)
    if rnd is None:
        return ExpectedBet(BetResult.PENDING, 0, "DC-2")
    if rnd.corrected and rnd.status == RoundStatus.SETTLED:
        reds = rnd.corrected.count("R")
        return ExpectedBet(outcome(bet, reds), returned(bet, reds, stake), "COR-1")
    if rnd.status != RoundStatus.SETTLED:
        return ExpectedBet(BetResult.REFUND, stake, rnd.clause)
    reds = rnd.faces.count("R")
    rule = PAYTABLE[bet]
    if reds in rule.wins:
        result = BetResult.WIN
    elif reds in rule.pushes:
        result = BetResult.PUSH
    else:
        result = BetResult.LOSE
    return ExpectedBet(result, returned(bet, reds, stake), rule.clause)
