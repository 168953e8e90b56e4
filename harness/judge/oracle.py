"""The oracle's check: the server's round results, bet records and balances against the ground truth.

Input is an :class:`Observation` (what the bench saw: ground truth, the harness's own actions, and what the
server reported through its adapter). Output is a :class:`Verdict`: every difference, each naming the round,
the bet (when one is concerned) and the clause it breaks. Nothing here imports ``gameserver``.
"""

from __future__ import annotations

import functools
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.judge.access import AccessAnswer, check_access
from harness.judge.bench_rules import (
    adjust,
    altered,
    as_atomicity,
    check_atomicity,
    check_disconnections,
    check_idempotency,
    check_pauses,
    check_timing,
    crashed_writes,
    device_clauses,
    late_frame_clause,
)
from harness.judge.checks import Check, ClauseFailure
from harness.judge.expect import ExpectedRound, expected_bet, expected_by_round_id
from harness.judge.findings import Difference, Finding
from harness.judge.timeline import (
    RESHAKE_CLAUSES,
    Alteration,
    Kill,
    Pauses,
    Timing,
    pauses_by_round,
    unshaken_at_close,
)
from harness.records import (
    BetRecordRow,
    BetReply,
    BetResult,
    Outcome,
    RoundEvent,
    RoundEventKind,
    RoundStatus,
)
from simulator.events import Event, Reshake, ReshakeReason
from simulator.gcpause import gc_paused

__all__ = ["Difference", "Finding", "Observation", "SentBet", "Verdict", "failure_of", "judge", "reshake_clauses"]

BALANCE_CLAUSE = "GLI 2.8.2"  # opening balance + every amount returned - every stake = the balance
AFTER_CLOSE_CLAUSE = "GP-3"  # no bet is taken once the betting period has ended (GLI-19 C.6.4)
NOT_STARTED = "not_started"  # the table never saw the round open: it must end void or cancelled, bets returned
UNFINISHED = "unfinished"  # the table was still playing the round (no verdict) when the server ended it
_REFUNDED = (RoundEventKind.VOID, RoundEventKind.CANCELLED)
_VOID_CLAUSES = frozenset({"SH-4a", "SH-4b", "SH-5"})
_NONE = ExpectedRound(0, "", "", "", 0)


@dataclass(frozen=True, slots=True)
class SentBet:
    """A bet the harness sent: the server's reply and whether betting had closed at the table by then."""

    reply: BetReply
    after_close: bool
    sent_at: float = float("nan")  # bench time the bet left (nan: not known)
    in_play: str = ""  # the server round the bench had in play when it sent the bet


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything the oracle judges. ``rounds``: server round id → sim round number (from the lamp)."""

    truth: Sequence[Event]
    rounds: Mapping[str, int]
    server_events: Sequence[RoundEvent]
    records: Mapping[str, Sequence[BetRecordRow]]
    balances: Mapping[str, int]
    opening: Mapping[str, int]
    sent: Sequence[SentBet] = ()
    supervisor_cancelled: Sequence[str] = ()  # server round ids the harness's supervisor cancelled
    server_clock_is_sim: bool = False  # the server's event times are the bench's simulation time
    timing: Timing | None = None  # the timing the server was configured with (None: not judged)
    kills: Sequence[Kill] = ()  # the bench's planned server kills
    corrections: Mapping[str, str] = field(default_factory=dict)  # accepted corrections: round id -> faces
    alterations: Sequence[Alteration] = ()  # what the bench changed of the device reports, by round
    supervisor_paused: Sequence[str] = ()  # server round ids the harness's supervisor paused
    reader_line: str = ""  # the name of the line the reader's reports travel on
    disconnects: Sequence[tuple[str, str]] = ()  # (player, server round id in play) the bench cut the player off
    access: Sequence[AccessAnswer] = ()  # every request the bench made under chosen credentials, answered


@dataclass(frozen=True, slots=True)
class Verdict:
    """The oracle's judgement. ``differences``: every difference, flat, in the order found; ``findings``: the same
    differences grouped under their root causes (empty when built by hand: each difference is then its own
    root); ``checks``: every clause the oracle decided on something it observed, passed or failed."""

    differences: tuple[Difference, ...]
    rounds_checked: int
    bets_checked: int
    expected: Mapping[str, ExpectedRound] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    checks: tuple[Check, ...] = ()

    @property
    def roots(self) -> tuple[Finding, ...]:
        """The root-cause findings: ``findings``, or one per difference when none were grouped."""
        return self.findings or tuple(Finding(d) for d in self.differences)

    def failure(self, lead: str = "", first_round: str = "") -> ClauseFailure:
        """The verdict as one failed check: the first root cause (of ``first_round`` when it has one) names the
        clause; ``lead`` (what the step saw), the root's consequences and the other root causes are listed under it.

        Raises:
            ValueError: the verdict found no difference.
        """
        return failure_of(self.roots, lead, first_round)

    def failed_clauses(self) -> list[str]:
        """The clause of each root cause, each once, in the order found."""
        return list(dict.fromkeys(f.clause for f in self.roots))

    @property
    def outcome(self) -> Outcome:
        """PASS, or FAIL naming how many differences were found."""
        return Outcome.failed(f"{len(self.differences)} differences") if self.differences else Outcome.passed()

    @property
    def passed(self) -> bool:
        return self.outcome.ok

    def summary(self) -> str:
        lines = [f"oracle: {self.outcome}: {self.rounds_checked} rounds, {self.bets_checked} bets checked"]
        for finding in self.roots:
            first, *rest = finding.lines()
            lines += [f"  - {first}", *(f"  {line}" for line in rest)]
        return "\n".join(lines)


def failure_of(roots: Sequence[Finding], lead: str = "", first_round: str = "") -> ClauseFailure:
    """Root causes as one :class:`ClauseFailure` (:meth:`Verdict.failure`).

    Raises:
        ValueError: ``roots`` is empty.
    """
    if not roots:
        raise ValueError("no root cause: the verdict passed")
    ranked = [f for f in roots if first_round and f.root.round == first_round]
    first = (ranked or list(roots))[0]
    lines = [str(d) for d in first.consequences]
    lines += [f"also, root cause of its own: {f.root}" for f in roots if f is not first]
    return ClauseFailure(first.clause, str(first.root), lines, lead)


def judge(obs: Observation) -> Verdict:
    """Compare everything the server reported with what RULES.md requires. Never raises on server data: any
    disagreement becomes a :class:`Difference`, grouped under its root cause (:class:`Finding`), and every clause
    decided on a round or a bet is recorded as a :class:`Check`, passed or failed.

    Linear in the rounds, bets and events observed. The cyclic garbage collector is paused meanwhile
    (:func:`simulator.gcpause.gc_paused`): the verdict's checks and differences all stay alive and hold no cycles,
    and each full collection would re-scan the whole observation, which made judging's cost per round grow with
    the run's length (docs/performance.md)."""
    with gc_paused():
        return _judge(obs)


def expectations(
    obs: Observation,
) -> tuple[dict[str, ExpectedRound], dict[str, RoundStatus], dict[str, Pauses]]:
    """What each round of ``obs`` must come to (by the ground truth, the rounds the table never played, and what the
    bench did: :func:`~harness.judge.bench_rules.adjust`), how the server's events ended each round, and each
    round's pauses, by round id."""
    expected = expected_by_round_id(
        obs.truth, obs.rounds, obs.supervisor_cancelled, obs.server_events, obs.server_clock_is_sim
    )
    ended = {event.round_id: RoundStatus(event.kind) for event in obs.server_events if event.ends_round}
    expect_unplayed(obs, expected, ended)
    pauses = pauses_by_round(obs.server_events)
    return adjust(obs, expected, pauses), ended, pauses


def _judge(obs: Observation) -> Verdict:
    expected, ended, pauses = expectations(obs)
    checks: list[Check] = []
    timeline = check_pauses(obs, pauses, checks) + check_timing(obs, pauses, checks)
    crashed = crashed_writes(obs)
    rounds = as_atomicity(timeline + _check_rounds(obs, expected, checks), crashed)
    # who was allowed to do what (ACC-1..ACC-4): a request that had to be refused and was accepted is the root
    # cause of whatever it changed (a round a player's token paused, a bet booked to another's account), so first
    access = check_access(obs.access, obs.records, checks)
    grouping = Grouping(rounds, first=access)
    bets = 0
    players: list[Difference] = []
    for player in sorted({*obs.records, *obs.opening, *obs.balances}):
        rows = obs.records.get(player, ())
        bets += len(rows)
        player_bets = as_atomicity(_check_bets(rows, expected, ended, checks), crashed)
        grouping.add_bets(player_bets)
        balance = _check_balance(player, rows, expected, obs, checks)
        balance = as_atomicity(balance, crashed, whole=any(row.round_id in crashed for row in rows))
        grouping.add_balance(balance, player_bets)
        players += player_bets + balance
    sent = _check_sent(obs, checks) + check_idempotency(obs, checks)
    check_disconnections(obs, rounds + players + sent, checks)
    grouping.add_roots(sent)
    diffs = access + rounds + players + sent
    check_atomicity(crashed, diffs, checks)
    return Verdict(tuple(diffs), len(expected), bets, expected, grouping.findings(), tuple(checks))


def expect_unplayed(obs: Observation, expected: dict[str, ExpectedRound], ended: Mapping[str, RoundStatus]) -> None:
    """Add to ``expected`` each round the server named that the table gave no verdict on: never started (the table
    never saw it open), void SH-4a (ended, and no shake had started when betting closed), or unfinished (ended
    while the table was still playing it). ``ended``: each round's status by the server's round events."""
    unshaken = functools.cache(lambda: unshaken_at_close(obs.truth))  # read from the truth once, if a round needs it
    for rid in _server_rounds(obs):
        if rid in expected:
            continue
        if rid not in obs.rounds:
            # The server played it (events, bets) but the table never saw it open: never started.
            expected[rid] = ExpectedRound(0, NOT_STARTED, "NET-1", "", 0)
            continue
        if rid in ended and obs.rounds[rid] in unshaken():
            # no shake had started when betting closed: the round is void (SH-4a) from the close on, before the
            # table's own verdict (the dealer's lift) is in
            expected[rid] = ExpectedRound(obs.rounds[rid], RoundStatus.VOID, "SH-4a", "", 0)
        elif rid in ended:
            expected[rid] = ExpectedRound(obs.rounds[rid], UNFINISHED, "GP-3", "", 0)


class Grouping:
    """Builds the findings: round-level differences are roots; a bet's differences hang under its round's root,
    else under the bet's first difference; a balance difference hangs under the first root of a difference of that
    player's bets, else it is a root of its own. ``first``: roots that come before every other (access control)."""

    def __init__(self, rounds: Sequence[Difference], first: Sequence[Difference] = ()) -> None:
        self._roots: list[Difference] = []
        self._under: dict[int, list[Difference]] = {}
        self._by_round: dict[str, int] = {}
        self._by_bet: dict[tuple[str, str], int] = {}
        self._of: dict[int, int] = {}  # id(difference) -> index of its root
        for diff in first:
            self._root(diff)
        for diff in rounds:
            index = self._by_round.get(diff.round) if diff.round else None
            if index is None:
                self._by_round[diff.round] = self._root(diff)
            else:
                self._hang(diff, index)

    def _root(self, diff: Difference) -> int:
        self._roots.append(diff)
        index = len(self._roots) - 1
        self._under[index] = []
        self._of[id(diff)] = index
        return index

    def _hang(self, diff: Difference, index: int) -> None:
        self._under[index].append(diff)
        self._of[id(diff)] = index

    def add_bets(self, diffs: Sequence[Difference]) -> None:
        for diff in diffs:
            index = self._by_round.get(diff.round, self._by_bet.get((diff.round, diff.bet)))
            if index is None:
                self._by_bet[(diff.round, diff.bet)] = self._root(diff)
            else:
                self._hang(diff, index)

    def add_balance(self, diffs: Sequence[Difference], bets: Sequence[Difference]) -> None:
        cause = next((self._of[id(d)] for d in bets if id(d) in self._of), None)
        for diff in diffs:
            if cause is None:
                self._root(diff)
            else:
                self._hang(diff, cause)

    def add_roots(self, diffs: Sequence[Difference]) -> None:
        for diff in diffs:
            self._root(diff)

    def findings(self) -> tuple[Finding, ...]:
        return tuple(Finding(root, tuple(self._under[i])) for i, root in enumerate(self._roots))


def _server_rounds(obs: Observation) -> list[str]:
    """Every round id the server named, in the order first named: in its round events, its bet records and its
    acknowledgements of accepted bets."""
    seen: dict[str, None] = {}
    for event in obs.server_events:
        seen.setdefault(event.round_id, None)
    for rows in obs.records.values():
        for row in rows:
            seen.setdefault(row.round_id, None)
    for sent in obs.sent:
        if sent.reply.accepted:
            seen.setdefault(sent.reply.round_id, None)
    seen.pop("", None)
    return list(seen)


def _reshake_reasons(truth: Sequence[Event]) -> dict[int, list[ReshakeReason]]:
    """Per sim round, the reason of each re-shake the table made, in order."""
    out: dict[int, list[ReshakeReason]] = {}
    for event in truth:
        if isinstance(event, Reshake):
            out.setdefault(event.round, []).append(event.reason)
    return out


def reshake_clauses(truth: Sequence[Event], sim_round: int) -> list[str]:
    """The clauses of the re-shakes the table made in ``sim_round`` (SH-2 for a drop, SH-3 for a standing token),
    each once, in the order first made; empty when it made none."""
    reasons = _reshake_reasons(truth).get(sim_round, [])
    return list(dict.fromkeys(RESHAKE_CLAUSES[r] for r in reasons))


def _reshake_clause(reasons: Sequence[ReshakeReason], got: int) -> str:
    """The clause of the first re-shake the server's count gets wrong: the (got+1)-th the table made when the
    server counted too few, the last when it counted too many."""
    if not reasons:
        return RESHAKE_CLAUSES[ReshakeReason.DROP]
    return RESHAKE_CLAUSES[reasons[min(got, len(reasons) - 1)]]


def _check_rounds(obs: Observation, expected: Mapping[str, ExpectedRound], checks: list[Check]) -> list[Difference]:
    out: list[Difference] = []
    ends: dict[str, RoundEvent] = {}
    reshakes: dict[str, int] = {}
    for event in obs.server_events:
        if event.ends_round:
            if event.round_id in ends:
                out.append(Difference(event.round_id, "", "GLI 2.8.2", "round ended twice", "one end", event.kind))
                checks.append(Check("GLI 2.8.2", f"round {event.round_id}: ended once", False, event.kind))
            ends.setdefault(event.round_id, event)
        elif event.kind == RoundEventKind.RESHAKE:
            reshakes[event.round_id] = reshakes.get(event.round_id, 0) + 1
    reasons = _reshake_reasons(obs.truth)
    alts = altered(obs)
    for rid, exp in sorted(expected.items(), key=lambda kv: kv[1].round):
        found = len(out)
        end = ends.get(rid)
        own = alts.get(rid, [])
        late = late_frame_clause(own, rid, end.faces, obs.reader_line) if own and end is not None and end.faces else ""
        out += _check_round(rid, exp, end, reshakes.get(rid, 0), reasons.get(exp.round, []), late)
        failed = {d.clause for d in out[found:]}
        decided = [exp.by or exp.clause]
        if exp.status == RoundStatus.SETTLED and rid in ends:
            decided.append("SH-1" if exp.overlap else "EQ-3")
            decided += [RESHAKE_CLAUSES[r] for r in dict.fromkeys(reasons.get(exp.round, []))]
        for clause in dict.fromkeys(decided):
            checks.append(Check(clause, f"round {rid}: {_describe(exp)}", clause not in failed))
        for clause in device_clauses(own, rid, obs.reader_line):  # the bench's frames changed nothing
            if clause not in decided:
                decided.append(clause)
                checks.append(Check(clause, f"round {rid}: the bench's frames left {_describe(exp)}", not failed))
        checks += [
            Check(d.clause, f"round {rid}: {d.what}", False, str(d)) for d in out[found:] if d.clause not in decided
        ]
    return out


def _check_round(
    rid: str,
    exp: ExpectedRound,
    end: RoundEvent | None,
    reshakes: int,
    reasons: Sequence[ReshakeReason],
    late: str = "",
) -> list[Difference]:
    """The differences of one round's end (the re-shake count of a settled round first, since a re-shake the server
    skipped or made without cause explains the outcome it then settled on; then the outcome or the clause).
    ``late``: the clause (DEV-1, DEV-2) of a report the bench forged or replayed whose faces the server settled on."""
    if end is None:
        return [Difference(rid, "", exp.clause, "round end", _describe(exp), "no end reported")]
    if exp.status == UNFINISHED:
        what = "round ended by the server while the table was still playing it"
        clause = _ended_instead(exp.clause, end, reshakes, reasons)
        return [Difference(rid, "", clause, what, "the table's verdict", _describe_event(end))]
    if exp.status == NOT_STARTED:
        if end.kind not in _REFUNDED:
            return [Difference(rid, "", exp.clause, "round status", "void or cancelled", _describe_event(end))]
        return []
    if end.kind != exp.status:
        clause = exp.by or exp.clause
        if exp.status == RoundStatus.SETTLED:
            clause = _ended_instead(clause, end, reshakes, reasons)
        return [Difference(rid, "", clause, "round status", _describe(exp), _describe_event(end))]
    out: list[Difference] = []
    if exp.status == RoundStatus.SETTLED and reshakes != exp.reshakes:  # first: a skipped re-shake explains the rest
        clause = _reshake_clause(reasons, reshakes)
        out.append(Difference(rid, "", clause, "re-shakes", str(exp.reshakes), str(reshakes)))
    if exp.status == RoundStatus.SETTLED and end.faces != exp.faces:
        clause = late or ("SH-1" if exp.overlap else "EQ-3")
        out.append(Difference(rid, "", clause, "outcome", exp.faces, end.faces))
    elif exp.status != RoundStatus.SETTLED and end.clause != exp.clause:
        out.append(Difference(rid, "", exp.clause, "clause", exp.clause, end.clause or "(none)"))
    return out


def _ended_instead(clause: str, end: RoundEvent, reshakes: int, reasons: Sequence[ReshakeReason]) -> str:
    """The clause of a round the server ended where the table went on: the re-shake it skipped (the table had to
    shake again), else the void clause it applied without cause, else ``clause``."""
    if reshakes < len(reasons):
        return _reshake_clause(reasons, reshakes)
    return end.clause if end.clause in _VOID_CLAUSES else clause


def _check_bets(
    rows: Sequence[BetRecordRow],
    expected: Mapping[str, ExpectedRound],
    ended: Mapping[str, RoundStatus],
    checks: list[Check],
) -> list[Difference]:
    """Each bet's result and amount against the rules; its round status against the server's own round events
    (``ended``: each round's status by the last of its ending events; the bet record and the round history must
    agree: GLI 4.14.2). Linear in ``rows``."""
    out: list[Difference] = []
    for row in rows:
        exp_round = expected.get(row.round_id)
        want = expected_bet(exp_round, row.bet_type, row.wagered)
        label = f"{row.player_id} {row.bet_type} {row.wagered}"
        found = len(out)
        if row.result != want.result:
            out.append(Difference(row.round_id, row.bet_id, want.clause, f"result of {label}", want.result, row.result))
        if row.returned != want.returned:
            refund_amount = want.result == BetResult.REFUND and row.result == BetResult.REFUND
            out.append(
                Difference(
                    row.round_id,
                    row.bet_id,
                    "REF-1" if refund_amount else want.clause,
                    f"returned for {label}",
                    str(want.returned),
                    str(row.returned),
                )
            )
        money_ok = len(out) == found
        what = f"round {row.round_id} bet {row.bet_id}: {label} {want.result} {want.returned}"
        checks.append(Check(want.clause, what, money_ok, "" if money_ok else str(out[found])))
        if want.result == BetResult.REFUND:
            checks.append(Check("REF-1", what, money_ok, "" if money_ok else str(out[found])))
        published = ended.get(row.round_id, RoundStatus.IN_PROGRESS)
        if row.round_status != published:
            what = "round status in the bet record vs the round's events"
            out.append(Difference(row.round_id, row.bet_id, "GLI 4.14.2", what, published, row.round_status))
    return out


def _check_balance(
    player: str,
    rows: Sequence[BetRecordRow],
    expected: Mapping[str, ExpectedRound],
    obs: Observation,
    checks: list[Check],
) -> list[Difference]:
    tally = BalanceTally()
    tally.add(rows, expected)
    return tally.judge(player, obs.opening, obs.balances, checks)


class BalanceTally:
    """What a player's balance check needs of their bet record, summed as rows come: the stakes and the returns
    the rules give them, and whether a correction touched one."""

    __slots__ = ("corrected", "delta")

    def __init__(self) -> None:
        self.delta = 0  # every amount the rules return - every stake
        self.corrected = False

    def add(self, rows: Iterable[BetRecordRow], expected: Mapping[str, ExpectedRound]) -> None:
        """Add rows whose rounds ``expected`` holds (a round it lacks is in progress: nothing returned)."""
        for row in rows:
            exp = expected.get(row.round_id)
            self.delta += expected_bet(exp, row.bet_type, row.wagered).returned - row.wagered
            self.corrected = self.corrected or (exp is not None and bool(exp.corrected))

    def judge(
        self, player: str, opening: Mapping[str, int], balances: Mapping[str, int], checks: list[Check]
    ) -> list[Difference]:
        """The player's balance against opening + the sum (GLI 2.8.2; COR-1 after a correction; never below zero,
        GLI 4.3.3b): appends the check to ``checks``, returns the differences."""
        if player not in opening:
            what = f"balance of {player} (no opening balance known to the harness)"
            return [Difference("", "", BALANCE_CLAUSE, what, "checked", "not checked")]
        want = opening[player] + self.delta
        if player not in balances:
            return [Difference("", "", BALANCE_CLAUSE, f"balance of {player}", str(want), "not observed")]
        out: list[Difference] = []
        got = balances[player]
        clause = "COR-1" if self.corrected else BALANCE_CLAUSE  # a correction moves a balance by the difference
        if got != want:
            out.append(Difference("", "", clause, f"balance of {player}", str(want), str(got)))
        if got < 0:
            out.append(Difference("", "", "GLI 4.3.3b", f"balance of {player} below zero", ">= 0", str(got)))
        checks.append(Check(clause, f"balance of {player}: {want}", got == want, f"server {got}"))
        return out


def _check_sent(obs: Observation, checks: list[Check]) -> list[Difference]:
    state = SentCheck(obs.records)
    for player, rows in obs.records.items():
        state.add_records(player, rows)
    out: list[Difference] = []
    for sent in obs.sent:
        out += state.see(sent, checks)
    return out


class SentCheck:
    """Each bet the server acknowledged, against the bet record (DC-3), the betting close (GP-3) and the owner of
    the bet it was confirmed as (IDEM-1): the state it needs across rounds (the bets recorded, who owns each, the
    client bet ids confirmed). Fed rows (:meth:`add_records`) before the bets sent that name them (:meth:`see`, in
    the order sent). ``players``: the players whose bet records are observed."""

    def __init__(self, players: Container[str]) -> None:
        self._players = players
        self._recorded: set[tuple[str, str]] = set()
        self._owners: dict[str, str] = {}
        self._confirmed: set[tuple[str, str]] = set()  # (player, client bet id) confirmed

    def add_records(self, player: str, rows: Iterable[BetRecordRow]) -> None:
        """Add rows of ``player``'s bet record."""
        for row in rows:  # the record's owner's id kept for the row's when they are equal (one string, not one a row)
            self._recorded.add((player if row.player_id == player else row.player_id, row.bet_id))
            self._owners[row.bet_id] = player

    def owner(self, bet_id: str) -> str:
        """The player in whose bet record the bet ``bet_id`` was last added, or ""."""
        return self._owners.get(bet_id, "")

    def see(self, sent: SentBet, checks: list[Check]) -> list[Difference]:
        """Judge one sent bet; appends its checks to ``checks`` and returns its differences."""
        reply = sent.reply
        if not reply.accepted:
            return []
        key = (reply.player_id, reply.client_bet_id)
        if key in self._confirmed and reply.client_bet_id:
            return []  # a retry of a confirmed bet: judged by check_idempotency, whatever its answer
        self._confirmed.add(key)
        out: list[Difference] = []
        owner = self._owners.get(reply.bet_id, reply.player_id)
        if owner != reply.player_id:
            what = f"bet of {reply.player_id} confirmed as bet {reply.bet_id} of {owner} (the same client bet id)"
            out.append(Difference(reply.round_id, reply.bet_id, "IDEM-1", what, "a bet of its own", f"{owner}'s"))
            checks.append(Check("IDEM-1", f"round {reply.round_id}: {what}", False))
            return out
        if sent.after_close:
            what = f"bet of {reply.player_id} sent after betting closed"
            out.append(Difference(reply.round_id, reply.bet_id, AFTER_CLOSE_CLAUSE, what, "rejected", "accepted"))
            checks.append(Check(AFTER_CLOSE_CLAUSE, f"round {reply.round_id}: {what}", False, "accepted"))
        if reply.player_id in self._players:
            present = (reply.player_id, reply.bet_id) in self._recorded
            what = f"acknowledged bet of {reply.player_id} in the bet record"
            checks.append(Check("DC-3", f"round {reply.round_id} bet {reply.bet_id}: {what}", present))
            if not present:
                out.append(Difference(reply.round_id, reply.bet_id, "DC-3", what, "present", "missing"))
        return out


def _describe(exp: ExpectedRound) -> str:
    if exp.status == RoundStatus.SETTLED:
        return f"settled on {exp.faces}"
    if exp.status == NOT_STARTED:
        return "void or cancelled (the table never played it)"
    return f"{exp.status} ({exp.clause})"


def _describe_event(event: RoundEvent) -> str:
    if event.kind == RoundEventKind.SETTLED:
        return f"settled on {event.faces}"
    return f"{event.kind} ({event.clause or '-'})"
