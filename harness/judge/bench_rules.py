"""The rules :mod:`harness.judge.timeline` states, applied: the expectation adjusted for what the bench did, and
the checks of pauses, of the betting period and of idempotency. Each check is recorded with its clause; each
difference names the clause whose check failed."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from harness.judge.checks import Check
from harness.judge.expect import ExpectedRound
from harness.judge.findings import Difference
from harness.judge.timeline import (
    CLOCK_EPSILON_S,
    CLOSED_CODES,
    CONFLICT_CODES,
    RESHAKE_CLAUSES,
    Alteration,
    Kill,
    Pauses,
    announced_close,
    first_ends,
    missed_before,
    pause_cause,
    unshaken_at_close,
)
from harness.records import BetRecordRow, RoundEvent, RoundEventKind, RoundStatus
from simulator.events import BettingClosed, BowlPlaced, Event, Paused, Reshake, ShakeEnded, ShakeStarted

if TYPE_CHECKING:
    from harness.judge.oracle import Observation, SentBet


def _difference(rid: str, bet: str, clause: str, what: str, expected: str, actual: str) -> Difference:
    return Difference(rid, bet, clause, what, expected, actual)


def altered(obs: Observation) -> dict[str, list[Alteration]]:
    """The bench's alterations of each server round's reports, in order."""
    out: dict[str, list[Alteration]] = {}
    for alt in obs.alterations:
        out.setdefault(alt.round_id, []).append(alt)
    return out


def truth_by_round(truth: Sequence[Event]) -> dict[int, list[Event]]:
    """The table's events of each sim round, in order (one pass: every rule then reads only its round's)."""
    out: dict[int, list[Event]] = {}
    for event in truth:
        number = getattr(event, "round", None)
        if isinstance(number, int):
            out.setdefault(number, []).append(event)
    return out


def _after(events: Sequence[Event], kind: type[Event], t: float) -> bool:
    """Whether the table did a ``kind`` among a round's ``events`` at or after bench time ``t``."""
    return any(isinstance(e, kind) and e.t >= t for e in events)


def _bench_time(obs: Observation, server_time: float) -> float | None:
    """A time of the server's events on the bench's clock, or None when the server keeps a clock of its own."""
    return server_time if obs.server_clock_is_sim else None


def adjust(
    obs: Observation, expected: Mapping[str, ExpectedRound], pauses: Mapping[str, Pauses]
) -> dict[str, ExpectedRound]:
    """The expectation once the bench's own acts are accounted for (module :mod:`harness.judge.timeline`):
    kills, lost reports that void a round, pauses the bench made due and never resolved. ``by`` names the clause
    whose check then decides the round."""
    out = dict(expected)
    ends = first_ends(obs.server_events)
    in_play_at_kill = {rid for kill in obs.kills for rid in kill.in_play}
    table = truth_by_round(obs.truth) if obs.alterations else {}
    unshaken = functools.cache(lambda: unshaken_at_close(obs.truth))  # read from the truth once, if a round needs it
    for rid, alts in altered(obs).items():
        exp = out.get(rid)
        if exp is None or exp.status not in (RoundStatus.SETTLED, RoundStatus.VOID, RoundStatus.CANCELLED):
            continue
        bowl = missed_before(alts, "BOWL", "BowlOn")
        shake = missed_before(alts, "SHAKER", "ShakeEnd")
        events = table.get(exp.round, [])
        end = ends.get(rid)
        lift = missed_before(alts, "BOWL", "BowlOff")
        if exp.status == RoundStatus.CANCELLED and end is not None and end.kind == RoundEventKind.CANCELLED:
            pass  # the table's own cancellation (a pause not resolved) came first: a lost report changes nothing
        elif bowl is not None and _after(events, BowlPlaced, bowl):
            out[rid] = ExpectedRound(exp.round, RoundStatus.VOID, "SH-4a", "", exp.reshakes, by="PROC-2")
        elif shake is not None and _after(events, ShakeEnded, shake) and exp.status != RoundStatus.VOID:
            out[rid] = ExpectedRound(exp.round, RoundStatus.VOID, "SH-4a", "", exp.reshakes, by="GP-2")
        void = out[rid].status == RoundStatus.VOID
        lift_void = void and out[rid].clause in ("SH-4b", "SH-5")  # a void the server learns of from the lift
        unseen = lift is not None and lift_void and end is not None and end.kind == RoundEventKind.VOID
        if unseen and end is not None and end.clause == "SH-4a" and exp.round in unshaken():
            # the lift was never reported, and no shake had started at the close: void SH-4a from then on
            out[rid] = ExpectedRound(exp.round, RoundStatus.VOID, "SH-4a", "", exp.reshakes, by="SH-4a")
        if lift is not None and void and end is not None and end.kind == RoundEventKind.CANCELLED:
            # the lift was never reported: the server cannot finish the round to void it, and a pause not resolved
            # cancels it (every bet refunded either way)
            out[rid] = ExpectedRound(exp.round, RoundStatus.CANCELLED, "ERR-3", "", exp.reshakes, by="ERR-3")
        span = pauses.get(rid)
        cause = pause_cause(alts, _bench_time(obs, span.spans[0][0])) if span is not None else ""
        if cause and span is not None and span.unresolved and out[rid].status == RoundStatus.SETTLED:
            out[rid] = ExpectedRound(exp.round, RoundStatus.CANCELLED, "ERR-3", "", exp.reshakes, by="ERR-3")
    for rid in set(obs.supervisor_paused):  # the harness's own pause, never resumed: cancelled at its timeout
        span, exp, end = pauses.get(rid), out.get(rid), ends.get(rid)
        if span is None or not span.unresolved or exp is None:
            continue
        voided_later = exp.status == RoundStatus.VOID and end is not None and end.kind == RoundEventKind.CANCELLED
        if exp.status == RoundStatus.SETTLED or voided_later:  # (a void the server would have found at the lift)
            out[rid] = ExpectedRound(exp.round, RoundStatus.CANCELLED, "ERR-3", "", exp.reshakes, by="ERR-3")
    for rid in in_play_at_kill:
        end = ends.get(rid)
        exp = out.get(rid)
        if end is not None and end.kind == RoundEventKind.CANCELLED and (exp is None or exp.status != end.kind):
            sim = exp.round if exp is not None else obs.rounds.get(rid, 0)
            out[rid] = ExpectedRound(sim, RoundStatus.CANCELLED, "ERR-3", "", 0, by="ERR-3")
    for rid, faces in obs.corrections.items():
        exp = out.get(rid)
        if exp is not None and exp.status == RoundStatus.SETTLED:
            out[rid] = replace(exp, corrected=faces)
    for rid in shaken_only_while_paused(obs, out, pauses):
        exp = out[rid]
        out[rid] = ExpectedRound(exp.round, RoundStatus.VOID, "SH-4a", "", exp.reshakes, by="SH-4a")
    return out


def shaken_only_while_paused(
    obs: Observation, expected: Mapping[str, ExpectedRound], pauses: Mapping[str, Pauses]
) -> list[str]:
    """The rounds expected settled whose every shake before the betting close started while the server had the
    round paused, when the table configuration ignores shakes made during a pause (``Timing.shakes_during_pause``
    ``ignored``): such a round had no shake of its own (SH-4a). Judged only on a shared clock; empty otherwise."""
    timing = obs.timing
    if timing is None or timing.shakes_during_pause != "ignored" or not obs.server_clock_is_sim:
        return []
    table = truth_by_round(obs.truth)
    out: list[str] = []
    for rid, span in pauses.items():
        exp = expected.get(rid)
        if exp is None or exp.status != RoundStatus.SETTLED:
            continue
        events = table.get(exp.round, [])
        close = next((e.t for e in events if isinstance(e, BettingClosed)), float("inf"))
        starts = [e.t for e in events if isinstance(e, ShakeStarted) and e.t < close]
        if starts and all(span.covers(t) for t in starts):
            out.append(rid)
    return out


def crashed_writes(obs: Observation) -> frozenset[str]:
    """The rounds the server died writing the end of (a crash point: a :class:`~harness.judge.timeline.Kill` with
    ``write``)."""
    return frozenset(rid for kill in obs.kills if kill.write for rid in kill.in_play)


def as_atomicity(diffs: Sequence[Difference], crashed: frozenset[str], whole: bool = False) -> list[Difference]:
    """``diffs`` with every difference of a ``crashed`` round (every one, ``whole``: a balance of a player with a
    bet in one) named ATOM-1: after a crash inside the write that ends a round, the round is settled or refunded as
    a whole and every record agrees with its balance; what is wrong there is the write's."""
    if not crashed:
        return list(diffs)
    return [replace(d, clause="ATOM-1") if whole or d.round in crashed else d for d in diffs]


def check_atomicity(crashed: frozenset[str], diffs: Sequence[Difference], checks: list[Check]) -> None:
    """One check of ATOM-1 per crashed round: it fails when a difference of ATOM-1 was found on the round or on a
    balance."""
    for rid in sorted(crashed):
        wrong = any(d.clause == "ATOM-1" and d.round in (rid, "") for d in diffs)
        checks.append(Check("ATOM-1", f"round {rid}: all or nothing after a crash inside its ledger write", not wrong))


def _reshake_clause(events: Sequence[Event]) -> str:
    """The clause of the last re-shake among a round's ``events`` (ERR-1 when the table made none)."""
    reasons = [e.reason for e in events if isinstance(e, Reshake)]
    return RESHAKE_CLAUSES[reasons[-1]] if reasons else "ERR-1"


def check_reshake_cap(obs: Observation, checks: list[Check]) -> tuple[list[Difference], Counter[str]]:
    """Each re-shake the server asked for past the configured cap (``obs.timing``: ``max_reshakes``, counted as
    its ``reshake_count`` says, from the server's own RESHAKE, PAUSED and RESUMED events) is followed by a pause
    before the server asks for another re-shake or settles or voids the round (ERR-1: needing one more re-shake is
    an unexpected problem). A round the server cancels, or that was in play when the bench killed the server, is not
    judged here (nothing is settled on it). Nothing is checked when the cap is unknown.

    Guarantees one check of ERR-1 per re-shake past the cap, and a difference for each one not followed by a pause;
    returns the differences and, by round, how many of the server's pauses followed a re-shake past the cap.
    """
    timing = obs.timing
    cap_paused: Counter[str] = Counter()
    if timing is None or timing.max_reshakes is None:
        return [], cap_paused
    killed = {rid for kill in obs.kills for rid in kill.in_play}
    counted = "since the round opened" if timing.reshake_count == "since_open" else "since it opened or resumed"
    state: dict[str, list[int]] = {}  # round -> [re-shakes since open, since resume, paused (0/1), pending re-shake]
    out: list[Difference] = []

    def judged(rid: str, k: int, ok: bool, actual: str) -> None:
        what = f"round {rid}: re-shake {k}, past the cap of {timing.max_reshakes} ({counted}), pauses the round"
        checks.append(Check("ERR-1", what, ok))
        if not ok:
            out.append(_difference(rid, "", "ERR-1", f"re-shake {k} past the cap", "a pause after it", actual))

    for event in obs.server_events:
        rid = event.round_id
        if rid not in obs.rounds or rid in killed:
            continue
        row = state.setdefault(rid, [0, 0, 0, 0])
        if event.kind == RoundEventKind.RESHAKE:
            if row[3]:
                judged(rid, row[3], False, f"re-shake {row[0] + 1} asked for at {event.at:.3f} without a pause")
                row[3] = 0
            row[0] += 1
            row[1] += 1
            if not row[2] and timing.past_cap(row[0], row[1]):
                row[3] = row[0]
        elif event.kind == RoundEventKind.PAUSED:
            if row[3]:
                judged(rid, row[3], True, "")
                cap_paused[rid] += 1
                row[3] = 0
            row[2] = 1
        elif event.kind == RoundEventKind.RESUMED:
            row[1] = row[2] = 0
        elif event.ends_round and row[3]:
            if event.kind != RoundEventKind.CANCELLED:
                judged(rid, row[3], False, f"round {event.kind} at {event.at:.3f} without a pause")
            row[3] = 0
    return out, cap_paused


@dataclass(frozen=True, slots=True)
class PendingTimeout:
    """A cancellation of an unresolved pause whose timing :func:`check_pauses` left for later (its tolerance, the
    run's :func:`service_lag`, is known only once every round is in): the round, when it paused, its end, and
    where the check and the difference belong among those :func:`check_pauses` made (``check_at`` in ``checks``,
    ``diff_at`` in the differences it returned)."""

    rid: str
    paused: float
    end: RoundEvent
    check_at: int
    diff_at: int


def check_pauses(
    obs: Observation,
    pauses: Mapping[str, Pauses],
    checks: list[Check],
    *,
    cap: tuple[list[Difference], Counter[str]] | None = None,
    deferred: list[PendingTimeout] | None = None,
) -> list[Difference]:
    """Every pause the server made has a cause of its own, a pause never resolved ends cancelled (ERR-3), and on a
    shared clock at the configured pause timeout (:func:`_pause_timeout`).

    Causes are counted, not timed: the server's k-th pause of a round is justified while the round has at least k
    causes: the table's own pauses, the supervisor's pauses, one for a pause the bench's alterations made due
    (:func:`~harness.judge.timeline.pause_cause`), one for a kill while it was in play. A pause beyond them names
    ERR-2 when the round had been resumed before it (the re-shake count starts again at the resume), else the
    clause of the round's last re-shake (a miscount toward the cap), else ERR-1. The re-shake cap itself is checked
    first (:func:`check_reshake_cap`). With re-shakes counted since the round opened (``Timing.reshake_count``),
    each pause that follows a re-shake past the cap is a cause of its own: the table's pause covers the re-shake it
    needed, while the server counts that re-shake when its report arrives, which may be after the resume.

    ``cap``: :func:`check_reshake_cap`, already made (its differences are then not in the result); ``deferred``:
    the timing of each cancelled unresolved pause is not judged here but appended there
    (:class:`PendingTimeout`, judged by :func:`judge_pause_timeout`)."""
    if cap is None:
        out, cap_paused = check_reshake_cap(obs, checks)
    else:
        out, cap_paused = [], Counter(cap[1])
    if obs.timing is None or obs.timing.reshake_count != "since_open":
        cap_paused.clear()
    if not pauses:
        return out
    lag = service_lag(obs, pauses)
    ends = first_ends(obs.server_events)
    alts = altered(obs)
    killed = Counter(rid for kill in obs.kills for rid in kill.in_play)
    supervised = Counter(obs.supervisor_paused)
    table = truth_by_round(obs.truth)
    for rid, span in pauses.items():
        sim = obs.rounds.get(rid)
        if sim is None:
            continue
        events = table.get(sim, [])
        causes = sum(isinstance(e, Paused) for e in events) + supervised[rid] + killed[rid] + cap_paused[rid]
        causes += 1 if pause_cause(alts.get(rid, []), _bench_time(obs, span.spans[0][0])) else 0
        for k, (paused, _resumed) in enumerate(span.spans):
            justified = k < causes
            if justified:
                clause = "ERR-1"
            elif k > 0 and span.spans[k - 1][1] is not None:
                clause = "ERR-2"
            else:
                clause = _reshake_clause(events)
            what = f"round {rid}: pause {k + 1} has a cause (the table stopped, the supervisor paused, the bench)"
            checks.append(Check(clause, what, justified))
            if not justified:
                reshakes = sum(1 for e in events if isinstance(e, Reshake))
                of_cap = f" of a cap of {obs.timing.max_reshakes}" if obs.timing and obs.timing.max_reshakes else ""
                seen = f"{causes} pause(s) with a cause ({reshakes} re-shakes{of_cap})"
                out.append(_difference(rid, "", clause, f"pause {k + 1}", seen, f"paused at {paused:.3f}"))
        end = ends.get(rid)
        if span.unresolved and end is not None:
            ok = end.kind == RoundEventKind.CANCELLED
            checks.append(Check("ERR-3", f"round {rid}: a pause never resolved ends in a cancellation", ok))
            if not ok and causes >= len(span.spans):
                out.append(_difference(rid, "", "ERR-3", "end of an unresolved pause", "cancelled", end.kind))
            elif ok and rid not in obs.supervisor_cancelled and not killed[rid]:
                if deferred is not None:
                    deferred.append(PendingTimeout(rid, span.spans[-1][0], end, len(checks), len(out)))
                else:
                    out += _pause_timeout(obs, rid, span.spans[-1][0], end, lag, checks)
    return out


def judge_pause_timeout(
    obs: Observation, pending: PendingTimeout, lag: float | None, checks: list[Check]
) -> list[Difference]:
    """The timing of a cancellation :func:`check_pauses` left for later, with the run's ``lag``
    (:func:`service_lag`): appends its check to ``checks`` and returns its difference, if any."""
    return _pause_timeout(obs, pending.rid, pending.paused, pending.end, lag, checks)


def service_lag(obs: Observation, pauses: Mapping[str, Pauses]) -> float | None:
    """How late after its due time the server records what falls due on its own clock, as measured in this run:
    the largest delay of a round's betting close (CLOSED) after the opening plus the configured period plus the
    pauses taken during it; None when no close was seen. The tolerance of every deadline the server keeps."""
    if obs.timing is None:
        return None
    opened: dict[str, float] = {}
    lag: float | None = None
    for event in obs.server_events:
        if event.kind == RoundEventKind.OPENED:
            opened.setdefault(event.round_id, event.at)
        elif event.kind == RoundEventKind.CLOSED and event.round_id in opened:
            start = opened[event.round_id]
            span = pauses.get(event.round_id, Pauses(()))
            due = start + obs.timing.betting_s + span.during(start, start + obs.timing.betting_s)
            lag = max(lag or 0.0, event.at - due)
    return lag


def _pause_timeout(
    obs: Observation, rid: str, paused: float, end: RoundEvent, lag: float | None, checks: list[Check]
) -> list[Difference]:
    """An unresolved pause ends in a cancellation at the configured pause timeout after it (on a shared clock, with
    the server's service lag measured in the run, or at least the step the bench runs it on, as tolerance): sooner
    takes the supervisor's time to resolve it (ERR-2), later keeps the bets in a round that could not be resolved at
    once (ERR-3). ``lag``: :func:`service_lag`, measured once for the verdict."""
    timeout = obs.timing.pause_timeout_s if obs.timing is not None else None
    if not obs.server_clock_is_sim or timeout is None:
        return []
    due = paused + timeout
    step = obs.timing.service_step_s if obs.timing is not None else 0.0
    if lag is None and not step:
        lag = float("inf")  # nothing measured, no step known: only "not sooner" is judged
    slack = max(lag or 0.0, step) + CLOCK_EPSILON_S
    early, late = end.at < due - CLOCK_EPSILON_S, end.at > due + slack
    clause = "ERR-2" if early else "ERR-3"
    what = f"round {rid}: an unresolved pause cancelled at the pause timeout ({timeout:g} s after {paused:.3f})"
    checks.append(Check(clause, what, not (early or late)))
    if early or late:
        want = f"cancelled at {due:.3f} (+ {slack:.3f} s service lag)"
        return [_difference(rid, "", clause, "cancellation of an unresolved pause", want, f"at {end.at:.3f}")]
    return []


def first_resumes(pauses: Mapping[str, Pauses]) -> list[tuple[float, str]]:
    """The two earliest of the rounds' first resumes, (time, round), earliest first: all that
    :func:`resumed_before` needs, so that asking it for every round costs O(1) each."""
    firsts = [
        (min(r for _, r in span.spans if r is not None), rid)
        for rid, span in pauses.items()
        if any(r is not None for _, r in span.spans)
    ]
    return sorted(firsts)[:2]


def resumed_before(firsts: Sequence[tuple[float, str]], rid: str, t: float) -> bool:
    """Whether a round other than ``rid`` was paused and resumed at or before ``t`` (within the clock's epsilon);
    ``firsts``: :func:`first_resumes` of the run's pauses."""
    other = next((at for at, round_id in firsts if round_id != rid), None)
    return other is not None and other <= t + CLOCK_EPSILON_S


def check_timing(
    obs: Observation,
    pauses: Mapping[str, Pauses],
    checks: list[Check],
    firsts: Sequence[tuple[float, str]] | None = None,
) -> list[Difference]:
    """The betting period of each round the bench opened (module :mod:`harness.judge.timeline`); nothing is
    checked when the server's clock is not the bench's or the configured period is unknown.

    A period cut short names ERR-2 when a pause came into it: one of the round's own, or one resumed in an earlier
    round (after a pause "the round resumes and continues as usual": what it cost is never taken from a later
    round); else GP-3. ``firsts``: :func:`first_resumes` of the run's pauses when ``pauses`` are only some rounds'
    (default: of ``pauses``)."""
    if not obs.server_clock_is_sim or obs.timing is None:
        return []
    betting = obs.timing.betting_s
    ends = first_ends(obs.server_events)
    firsts = first_resumes(pauses) if firsts is None else firsts
    carried: dict[str, bool] = {}  # round -> an earlier round's pause was resumed before it opened
    opened: dict[str, float] = {}
    closes: dict[str, float] = {}
    out: list[Difference] = []
    for event in obs.server_events:
        rid = event.round_id
        if rid not in obs.rounds:
            continue
        span = pauses.get(rid, Pauses(()))
        if event.kind == RoundEventKind.OPENED and rid not in opened:
            opened[rid] = event.at
            closes[rid] = event.at + betting + span.during(event.at, event.at + betting)
            carried[rid] = resumed_before(firsts, rid, event.at)
            said = announced_close(event)
            ok = said is None or abs(said - (event.at + betting)) <= CLOCK_EPSILON_S
            clause = "ERR-2" if carried[rid] else "GP-3"
            checks.append(Check(clause, f"round {rid}: the betting period announced at the opening", ok))
            if not ok:
                want = f"closes at {event.at + betting:.3f} ({betting:g} s)"
                out.append(_difference(rid, "", clause, "betting period announced", want, f"closes at {said:.3f}"))
        elif event.kind == RoundEventKind.RESUMED and rid in opened:
            said = announced_close(event)
            start = opened[rid]
            before = Pauses(tuple(p for p in span.spans if p[1] is not None and p[1] <= event.at + CLOCK_EPSILON_S))
            due = start + betting + before.during(start, start + betting)  # the pauses resumed so far given back
            if said is not None and said < due - CLOCK_EPSILON_S:
                want = f"closes at {due:.3f} (the betting time left at the pause given back)"
                out.append(_difference(rid, "", "ERR-2", "betting period after the resume", want, f"{said:.3f}"))
                checks.append(Check("ERR-2", f"round {rid}: the betting time left at the pause given back", False))
        elif event.kind == RoundEventKind.CLOSED and rid in opened:
            clause = "ERR-2" if span.during(opened[rid], opened[rid] + betting) or carried[rid] else "GP-3"
            ok = event.at >= closes[rid] - CLOCK_EPSILON_S
            checks.append(Check(clause, f"round {rid}: betting closed no sooner than {closes[rid]:.3f}", ok))
            if not ok:
                want = f"at {closes[rid]:.3f} or later"
                out.append(_difference(rid, "", clause, "betting closed", want, f"at {event.at:.3f}"))
    for sent in obs.sent:
        reply = sent.reply
        rid = reply.round_id or sent.in_play
        if reply.accepted or reply.code not in CLOSED_CODES or rid not in closes or sent.sent_at != sent.sent_at:
            continue
        span = pauses.get(rid, Pauses(()))
        open_then = opened[rid] - CLOCK_EPSILON_S <= sent.sent_at < closes[rid] - CLOCK_EPSILON_S
        end = ends.get(rid)
        ended = end is not None and end.at <= sent.sent_at + CLOCK_EPSILON_S  # ended early (a cancel, a void)
        killed = any(rid in kill.in_play and kill.t <= sent.sent_at for kill in obs.kills)  # cancelled on restart
        if not open_then or span.covers(sent.sent_at) or ended or killed:
            continue
        clause = "ERR-2" if span.during(opened[rid], sent.sent_at) or carried.get(rid) else "GP-3"
        checks.append(Check(clause, f"round {rid}: a bet sent while betting was open", False))
        what = f"bet of {reply.player_id} sent at {sent.sent_at:.3f}, betting open until {closes[rid]:.3f}"
        out.append(_difference(rid, "", clause, what, "accepted", f"refused ({reply.code})"))
    return out


def check_idempotency(obs: Observation, checks: list[Check]) -> list[Difference]:
    """Bets sent again with a client bet id already confirmed (IDEM-1; IDEM-2 across a kill): :class:`Idempotency`
    over the whole observation."""
    state = Idempotency()
    for player, record in obs.records.items():
        state.count_rows(player, record)
    out: list[Difference] = []
    for sent in obs.sent:
        out += state.see(sent, obs.kills, checks)
    return out + state.finish(obs.records, obs.kills, checks)


class _Sent:
    """What idempotency keeps of one (player, client bet id): how often it was sent, how many bet-record rows carry
    it, and of its first confirmation (``order``: its place among the first confirmations; -1: none yet) what a
    retry is compared with."""

    __slots__ = ("after", "before", "bet_id", "bet_type", "order", "round_id", "rows", "sends", "sent_at", "stake")

    def __init__(self) -> None:
        self.sends = 0
        self.rows = 0
        self.order = -1
        self.sent_at = 0.0
        self.round_id = self.bet_id = self.bet_type = ""
        self.stake = 0
        self.before: int | None = None
        self.after: int | None = None

    def confirm(self, sent: SentBet, order: int) -> None:
        reply = sent.reply
        self.order = order
        self.sent_at = sent.sent_at
        self.round_id = reply.round_id
        self.bet_id = reply.bet_id
        self.bet_type = reply.bet_type
        self.stake = reply.stake
        self.before = reply.balance_before
        self.after = reply.balance_after


class Idempotency:
    """The state idempotency needs across rounds: for each (player, client bet id), how often it was sent, how many
    rows of the bet record carry it, and its first confirmation (:class:`_Sent`: one small record a bet, the reply
    itself not kept). Fed rows (:meth:`count_rows`) and sent bets (:meth:`see`, in the order sent) in any
    interleaving, then :meth:`finish`; the differences and checks are those :func:`check_idempotency` makes of the
    whole observation."""

    def __init__(self) -> None:
        self._bets: dict[tuple[str, str], _Sent] = {}
        self._confirmed = 0  # first confirmations so far

    def _entry(self, key: tuple[str, str]) -> _Sent:
        entry = self._bets.get(key)
        if entry is None:
            entry = self._bets[key] = _Sent()
        return entry

    def count_rows(self, player: str, rows: Iterable[BetRecordRow]) -> None:
        """Count the rows of ``player``'s bet record that carry a client bet id."""
        for row in rows:
            if row.client_bet_id:
                self._entry((player, row.client_bet_id)).rows += 1

    def see(self, sent: SentBet, kills: Sequence[Kill], checks: list[Check]) -> list[Difference]:
        """Judge one sent bet against the bets sent before it (``kills``: the bench's kills so far)."""
        reply = sent.reply
        entry = self._entry((reply.player_id, reply.client_bet_id))
        known = entry.sends > 0
        entry.sends += 1
        if entry.order < 0:
            if reply.accepted and reply.client_bet_id:
                entry.confirm(sent, self._confirmed)
                self._confirmed += 1
            elif reply.code in CONFLICT_CODES and not known:
                # a conflict with a bet id this player never sent: another player's (ids are per player)
                what = f"bet of {reply.player_id} refused as a conflict with client bet id {reply.client_bet_id}"
                checks.append(Check("IDEM-1", f"{what}, which it never used before", False))
                want = "a bet of its own (the id is another player's)"
                return [_difference(sent.in_play, "", "IDEM-1", what, want, f"refused ({reply.code})")]
            return []
        clause = "IDEM-2" if any(entry.sent_at <= k.t <= sent.sent_at for k in kills) else "IDEM-1"
        rid = entry.round_id
        if (reply.bet_type, reply.stake) == (entry.bet_type, entry.stake):
            ok = reply.accepted and (reply.bet_id, reply.round_id) == (entry.bet_id, rid)
            ok = ok and (reply.balance_before, reply.balance_after) == (entry.before, entry.after)
            checks.append(Check(clause, f"round {rid}: a retry of bet {entry.bet_id} confirmed as it", ok))
            if not ok:
                want = f"bet {entry.bet_id} in round {rid}, balances {entry.before} -> {entry.after}"
                got = (
                    f"bet {reply.bet_id} in round {reply.round_id}, balances {reply.balance_before} -> "
                    f"{reply.balance_after}"
                    if reply.accepted
                    else f"refused ({reply.code})"
                )
                return [_difference(rid, entry.bet_id, clause, "confirmation of a retry", want, got)]
            return []
        checks.append(Check(clause, f"round {rid}: the same bet id with another content refused", not reply.accepted))
        if reply.accepted:
            what = f"bet id {reply.client_bet_id} sent again with another content"
            return [_difference(rid, entry.bet_id, clause, what, "refused", f"bet {reply.bet_id}")]
        return []

    def finish(self, players: Container[str], kills: Sequence[Kill], checks: list[Check]) -> list[Difference]:
        """Each bet id sent more than once by an observed player (in ``players``) is in its bet record once, in the
        order the bet ids were first confirmed."""
        retried = [(key, e) for key, e in self._bets.items() if e.order >= 0 and e.sends >= 2 and key[0] in players]
        out: list[Difference] = []
        for key, entry in sorted(retried, key=lambda item: item[1].order):
            clause = "IDEM-2" if any(entry.sent_at <= k.t for k in kills) else "IDEM-1"
            checks.append(Check(clause, f"bet id {key[1]} of {key[0]} once in the bet record", entry.rows == 1))
            if entry.rows != 1:
                what = f"bet id {key[1]} of {key[0]} in the bet record"
                out.append(_difference(entry.round_id, "", clause, what, "once", f"{entry.rows} times"))
        return out


def late_frame_clause(alterations: Sequence[Alteration], rid: str, faces: str, reader_line: str) -> str:
    """DEV-2 when round ``rid``, settled on ``faces`` (not the table's), got them from a result the bench sent
    during it for another round or for none (``alterations``: the round's); DEV-1 when from a result written onto
    another device's line than ``reader_line``; else ""."""
    for alt in alterations:
        if alt.faces != faces or alt.message != "Result":
            continue
        if alt.kind == "forged" and alt.line and alt.line != reader_line:
            return "DEV-1"
        if alt.round_tag != rid:
            return "DEV-2"
    return ""


def device_clauses(alterations: Sequence[Alteration], rid: str, reader_line: str) -> list[str]:
    """The device clauses the bench's frames put to the test in round ``rid`` (``alterations``: the round's):
    DEV-1 for a result written onto another device's line than ``reader_line``, DEV-2 for a result tagged with
    another round or with none, DEV-3 for other forged frames (noise). Each is decided by the round's end: it
    holds when the round ended as the judge expects."""
    out: list[str] = []
    for alt in alterations:
        if alt.kind not in ("queued", "forged"):
            continue
        if alt.message == "Result" and alt.kind == "forged" and alt.line and alt.line != reader_line:
            out.append("DEV-1")
        elif alt.message == "Result" and alt.round_tag != rid:
            out.append("DEV-2")
        elif alt.kind == "forged":
            out.append("DEV-3")
    return list(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class Disconnection:
    """A player the bench cut off during round ``round_id``: the ids of their bets the bet record holds in that
    round (``bets``) and of those the server confirmed to them in it (``confirmed``); ``observed``: their bet
    record is observed."""

    player: str
    round_id: str
    bets: frozenset[str]
    confirmed: frozenset[str]
    observed: bool


def disconnections(obs: Observation) -> list[Disconnection]:
    """Each (player, round) the bench cut off, once, in the order first cut off (a cut with no round in play is
    left out), with what :func:`judge_disconnections` needs of it."""
    confirmed: dict[tuple[str, str], set[str]] = {}  # (player, round) -> bet ids the server confirmed
    for sent in obs.sent:
        if sent.reply.accepted:
            confirmed.setdefault((sent.reply.player_id, sent.reply.round_id), set()).add(sent.reply.bet_id)
    out: list[Disconnection] = []
    for player, rid in dict.fromkeys(obs.disconnects):
        if not rid:
            continue
        bets = frozenset(row.bet_id for row in obs.records.get(player, ()) if row.round_id == rid)
        held = frozenset(confirmed.get((player, rid), set()))
        out.append(Disconnection(player, rid, bets, held, player in obs.records))
    return out


def judge_disconnections(
    cuts: Sequence[Disconnection],
    found: Sequence[Difference],
    recorded: Callable[[str, str], bool],
    checks: list[Check],
) -> None:
    """For each cut (:func:`disconnections`): the round ran to its due end (DC-1), the player's bets in it were
    settled as due (DC-2) and the bet record holds every bet the server confirmed to them (DC-3; ``recorded``:
    whether a (player, bet id) is in the player's bet record). Decided by the differences ``found`` elsewhere: each
    holds when none concerns it."""
    if not cuts:
        return
    differing: dict[str, set[str]] = {}  # round -> bet ids with a difference ("" for the round itself)
    for d in found:
        differing.setdefault(d.round, set()).add(d.bet)
    for cut in cuts:
        player, rid = cut.player, cut.round_id
        bad = differing.get(rid, set())
        checks.append(Check("DC-1", f"round {rid}: ran to its end though {player} was cut off", "" not in bad))
        if cut.bets:
            ok = not cut.bets & bad
            checks.append(Check("DC-2", f"round {rid}: the bets of {player}, cut off, settled as due", ok))
        if cut.confirmed and cut.observed:
            ok = all(recorded(player, bet) for bet in cut.confirmed)
            checks.append(Check("DC-3", f"round {rid}: the confirmed bets of {player}, cut off, in the bet record", ok))


def check_disconnections(obs: Observation, found: Sequence[Difference], checks: list[Check]) -> None:
    """For each player the bench cut off during a round: the round ran to its due end (DC-1), the player's bets in
    it were settled as due (DC-2) and the bet record holds every bet the server confirmed to them (DC-3). Decided
    by the differences ``found`` elsewhere: each holds when none concerns it."""
    if not obs.disconnects:
        return
    held = {(player, row.bet_id) for player, rows in obs.records.items() for row in rows}
    judge_disconnections(disconnections(obs), found, lambda player, bet: (player, bet) in held, checks)
