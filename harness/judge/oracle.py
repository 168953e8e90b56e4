"""The oracle's check: the server's round results, bet records and balances against the ground truth.

Input is an :class:`Observation` (what the bench saw: ground truth, the harness's own actions, and what the
server reported through its adapter). Output is a :class:`Verdict`: every difference, each naming the round,
the bet (when one is concerned) and the clause it breaks. Nothing here imports ``gameserver``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.judge.expect import ExpectedRound, expected_bet, expected_by_round_id
from harness.records import (
    BetRecordRow,
    BetReply,
    Outcome,
    RoundEvent,
    RoundEventKind,
    RoundStatus,
)
from simulator.events import Event

RESHAKE_CLAUSE = "SH-2/SH-3"
NOT_STARTED = "not_started"  # the table never saw the round open: it must end void or cancelled, bets returned
UNFINISHED = "unfinished"  # the table was still playing the round (no verdict) when the server ended it
_REFUNDED = (RoundEventKind.VOID, RoundEventKind.CANCELLED)


@dataclass(frozen=True, slots=True)
class SentBet:
    """A bet the harness sent: the server's reply and whether betting had closed at the table by then."""

    reply: BetReply
    after_close: bool


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


@dataclass(frozen=True, slots=True)
class Difference:
    """One way the server disagrees with the rules. ``round`` is the server's round id ("" for a player-level
    difference), ``bet`` the server's bet id ("" when no single bet is concerned)."""

    round: str
    bet: str
    clause: str
    what: str
    expected: str
    actual: str

    def __str__(self) -> str:
        where = f"round {self.round}" if self.round else "account"
        if self.bet:
            where += f" bet {self.bet}"
        return f"{where} [{self.clause}]: {self.what}: expected {self.expected}, server {self.actual}"


@dataclass(frozen=True, slots=True)
class Verdict:
    differences: tuple[Difference, ...]
    rounds_checked: int
    bets_checked: int
    expected: Mapping[str, ExpectedRound] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        """PASS, or FAIL naming how many differences were found."""
        return Outcome.failed(f"{len(self.differences)} differences") if self.differences else Outcome.passed()

    @property
    def passed(self) -> bool:
        return self.outcome.ok

    def summary(self) -> str:
        lines = [f"oracle: {self.outcome}: {self.rounds_checked} rounds, {self.bets_checked} bets checked"]
        lines += [f"  - {d}" for d in self.differences]
        return "\n".join(lines)


def judge(obs: Observation) -> Verdict:
    """Compare everything the server reported with what RULES.md requires. Never raises on server data: any
    disagreement becomes a :class:`Difference`."""
    expected = expected_by_round_id(
        obs.truth, obs.rounds, obs.supervisor_cancelled, obs.server_events, obs.server_clock_is_sim
    )
    ended = {event.round_id for event in obs.server_events if event.ends_round}
    for rid in _server_rounds(obs):
        if rid in expected:
            continue
        if rid not in obs.rounds:
            # The server played it (events, bets) but the table never saw it open: never started.
            expected[rid] = ExpectedRound(0, NOT_STARTED, "NET-1", "", 0)
        elif rid in ended:
            expected[rid] = ExpectedRound(obs.rounds[rid], UNFINISHED, "GP-3", "", 0)
    diffs: list[Difference] = []
    diffs += _check_rounds(obs, expected)
    bets = 0
    for player in sorted({*obs.records, *obs.opening, *obs.balances}):
        rows = obs.records.get(player, ())
        bets += len(rows)
        diffs += _check_bets(rows, expected, obs.server_events)
        diffs += _check_balance(player, rows, expected, obs)
    diffs += _check_sent(obs)
    return Verdict(tuple(diffs), len(expected), bets, expected)


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


def _check_rounds(obs: Observation, expected: Mapping[str, ExpectedRound]) -> list[Difference]:
    out: list[Difference] = []
    ends: dict[str, RoundEvent] = {}
    reshakes: dict[str, int] = {}
    for event in obs.server_events:
        if event.ends_round:
            if event.round_id in ends:
                out.append(Difference(event.round_id, "", "GLI 2.8.2", "round ended twice", "one end", event.kind))
            ends.setdefault(event.round_id, event)
        elif event.kind == RoundEventKind.RESHAKE:
            reshakes[event.round_id] = reshakes.get(event.round_id, 0) + 1
    for rid, exp in sorted(expected.items(), key=lambda kv: kv[1].round):
        end = ends.get(rid)
        if end is None:
            out.append(Difference(rid, "", exp.clause, "round end", _describe(exp), "no end reported"))
            continue
        if exp.status == UNFINISHED:
            what = "round ended by the server while the table was still playing it"
            out.append(Difference(rid, "", exp.clause, what, "the table's verdict", _describe_event(end)))
            continue
        if exp.status == NOT_STARTED:
            if end.kind not in _REFUNDED:
                out.append(Difference(rid, "", exp.clause, "round status", "void or cancelled", _describe_event(end)))
            continue
        if end.kind != exp.status:
            out.append(Difference(rid, "", exp.clause, "round status", _describe(exp), _describe_event(end)))
            continue
        if exp.status == RoundStatus.SETTLED and end.faces != exp.faces:
            clause = "SH-1" if exp.overlap else "EQ-3"
            out.append(Difference(rid, "", clause, "outcome", exp.faces, end.faces))
        elif exp.status != RoundStatus.SETTLED and end.clause != exp.clause:
            out.append(Difference(rid, "", exp.clause, "clause", exp.clause, end.clause or "(none)"))
        if exp.status == RoundStatus.SETTLED and reshakes.get(rid, 0) != exp.reshakes:
            got = str(reshakes.get(rid, 0))
            out.append(Difference(rid, "", RESHAKE_CLAUSE, "re-shakes", str(exp.reshakes), got))
    return out


def _check_bets(
    rows: Sequence[BetRecordRow], expected: Mapping[str, ExpectedRound], events: Sequence[RoundEvent]
) -> list[Difference]:
    """Each bet's result and amount against the rules; its round status against the server's own round events
    (the bet record and the round history must agree: GLI 4.14.2)."""
    ended = {e.round_id: RoundStatus(e.kind) for e in events if e.ends_round}
    out: list[Difference] = []
    for row in rows:
        exp_round = expected.get(row.round_id)
        want = expected_bet(exp_round, row.bet_type, row.wagered)
        label = f"{row.player_id} {row.bet_type} {row.wagered}"
        if row.result != want.result:
            out.append(Difference(row.round_id, row.bet_id, want.clause, f"result of {label}", want.result, row.result))
        if row.returned != want.returned:
            out.append(
                Difference(
                    row.round_id,
                    row.bet_id,
                    want.clause,
                    f"returned for {label}",
                    str(want.returned),
                    str(row.returned),
                )
            )
        published = ended.get(row.round_id, RoundStatus.IN_PROGRESS)
        if row.round_status != published:
            what = "round status in the bet record vs the round's events"
            out.append(Difference(row.round_id, row.bet_id, "GLI 4.14.2", what, published, row.round_status))
    return out


def _check_balance(
    player: str, rows: Sequence[BetRecordRow], expected: Mapping[str, ExpectedRound], obs: Observation
) -> list[Difference]:
    out: list[Difference] = []
    if player not in obs.opening:
        what = f"balance of {player} (no opening balance known to the harness)"
        return [Difference("", "", "GLI 2.8.2", what, "checked", "not checked")]
    want = obs.opening[player]
    for row in rows:
        want += expected_bet(expected.get(row.round_id), row.bet_type, row.wagered).returned - row.wagered
    if player not in obs.balances:
        return [Difference("", "", "GLI 2.8.2", f"balance of {player}", str(want), "not observed")]
    got = obs.balances[player]
    if got != want:
        out.append(Difference("", "", "GLI 2.8.2", f"balance of {player}", str(want), str(got)))
    if got < 0:
        out.append(Difference("", "", "GLI 4.3.3b", f"balance of {player} below zero", ">= 0", str(got)))
    return out


def _check_sent(obs: Observation) -> list[Difference]:
    out: list[Difference] = []
    recorded = {(row.player_id, row.bet_id) for rows in obs.records.values() for row in rows}
    for sent in obs.sent:
        reply = sent.reply
        if not reply.accepted:
            continue
        if sent.after_close:
            what = f"bet of {reply.player_id} sent after betting closed"
            out.append(Difference(reply.round_id, reply.bet_id, "GLI C.6.4", what, "rejected", "accepted"))
        if reply.player_id in obs.records and (reply.player_id, reply.bet_id) not in recorded:
            what = f"acknowledged bet of {reply.player_id} in the bet record"
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
