"""Judging a run round by round, as each round ends: what a long run keeps is what later rounds need.

:func:`~harness.judge.oracle.judge` reads a whole :class:`~harness.judge.oracle.Observation` at the end. A
:class:`StreamingJudge` is fed one :class:`RoundPart` as each round ends (the table's events of the round, the
server's events of it, the rows of the bet record it holds, the bets sent into it, what the bench did during it)
and answers that round's :class:`RoundVerdict` at once; :meth:`StreamingJudge.finish` then assembles the run's
:class:`~harness.judge.oracle.Verdict` from what it kept. It keeps, across rounds:

- each round's expectation and its status by the server's events (what a bet row found later is judged on);
- every difference, and (``keep_checks``) every check, else a count of passed and failed checks per clause;
- per player, the balance the rules give so far (opening balance + returns - stakes) and whether a correction
  touched it;
- for idempotency and the acknowledged bets, each (player, client bet id) sent and first confirmed, and who owns
  each recorded bet id (:class:`~harness.judge.bench_rules.Idempotency`, :class:`~harness.judge.oracle.SentCheck`);
- the two earliest resumes (ERR-2 carried into a later round), the service lag measured so far, the
  cancellations of unresolved pauses whose timing waits for the run's lag, the kills and the players cut off.

Fed the parts of an observation (:func:`split_observation`, :func:`judge_by_rounds`), it gives the verdict
:func:`~harness.judge.oracle.judge` gives the whole observation: the same expectations, rounds and bets checked,
differences and findings in the same order, and the same checks (in the same order too where the rounds'
events, records and bets come in round order, as a bench's do). What a part holds is final: a round fed is never
fed again (a row of it found later goes to :meth:`StreamingJudge.feed_rows`), and a correction accepted after a
round was fed is not seen. Nothing here imports ``gameserver``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from harness.judge.access import AccessAnswer, check_access
from harness.judge.bench_rules import (
    Disconnection,
    Idempotency,
    PendingTimeout,
    as_atomicity,
    check_atomicity,
    check_pauses,
    check_reshake_cap,
    check_timing,
    crashed_writes,
    disconnections,
    first_resumes,
    judge_disconnections,
    judge_pause_timeout,
    service_lag,
    truth_by_round,
)
from harness.judge.checks import Check
from harness.judge.expect import ExpectedRound
from harness.judge.findings import Difference
from harness.judge.oracle import (
    BalanceTally,
    Grouping,
    Observation,
    SentBet,
    SentCheck,
    Verdict,
    _check_bets,
    _check_rounds,
    _server_rounds,
    expectations,
)
from harness.judge.timeline import Alteration, Kill, Timing
from harness.records import BetRecordRow, RoundEvent, RoundStatus
from simulator.events import Event
from simulator.gcpause import gc_paused

__all__ = ["RoundPart", "RoundVerdict", "StreamingJudge", "judge_by_rounds", "split_observation"]


@dataclass(frozen=True, slots=True)
class RoundPart:
    """One ended round's share of an observation. ``sim_round``: the table's number of the round (None: the table
    never saw it open); ``truth``: the table's events of that round; ``server_events``: the server's events of the
    round; ``records``: each player's bet-record rows of the round; ``sent``: the bets whose reply names the round
    (or, with no round in the reply, sent while it was in play), in the order sent; ``kills``: the bench's kills
    while it was in play; ``supervisor_paused``: how many times the harness's supervisor paused it;
    ``disconnects``: the players the bench cut off during it; ``access``: the answers to requests naming it."""

    round_id: str
    sim_round: int | None
    truth: Sequence[Event] = ()
    server_events: Sequence[RoundEvent] = ()
    records: Mapping[str, Sequence[BetRecordRow]] = field(default_factory=dict)
    sent: Sequence[SentBet] = ()
    supervisor_cancelled: bool = False
    supervisor_paused: int = 0
    kills: Sequence[Kill] = ()
    correction: str = ""  # faces of an accepted correction of the round, else ""
    alterations: Sequence[Alteration] = ()
    disconnects: Sequence[str] = ()
    access: Sequence[AccessAnswer] = ()


@dataclass(frozen=True, slots=True)
class RoundVerdict:
    """The judgement of one round as it ended: its expectation (None: nothing is expected of it), the differences
    found on it and the checks made of it then. What depends on later rounds (balances, retries across rounds, the
    timing of a cancelled pause, disconnections) is in the run's verdict only."""

    round_id: str
    expected: ExpectedRound | None
    differences: tuple[Difference, ...]
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return not self.differences


@dataclass
class _Round:
    """What is kept of a fed round for the run's verdict: its sim number (the order of the round checks), its
    round differences, and (kept checks) its checks; lists a deferred pause timeout is inserted into."""

    sim: int
    diffs: list[Difference]
    checks: list[Check]


class StreamingJudge:
    """Judges a run one ended round at a time (:meth:`feed`), then the run (:meth:`finish`). ``players``: the
    players whose bet records are observed (every record a part may hold); ``keep_checks`` False: checks are
    counted by clause (:attr:`counts`) instead of kept, and the verdict's ``checks`` is empty.

    Not thread-safe; :meth:`finish` is called once."""

    def __init__(
        self,
        players: Iterable[str],
        *,
        server_clock_is_sim: bool = False,
        timing: Timing | None = None,
        reader_line: str = "",
        keep_checks: bool = True,
    ) -> None:
        self._players = tuple(dict.fromkeys(players))
        self._clock_is_sim = server_clock_is_sim
        self._timing = timing
        self._reader_line = reader_line
        self._keep = keep_checks
        self.counts: dict[str, list[int]] = {}  # clause -> [passed, failed], every check made
        self.expected: dict[str, ExpectedRound] = {}
        self._ended: dict[str, RoundStatus] = {}
        self._fed: set[str] = set()
        # checks and differences by the place the whole-run verdict gives them
        self._cap: tuple[list[Check], list[Difference]] = ([], [])
        self._pauses: list[_Round] = []
        self._timing_checks: tuple[list[Check], list[Difference]] = ([], [])
        self._timing_sent: tuple[list[Check], list[Difference]] = ([], [])
        self._twice: tuple[list[Check], list[Difference]] = ([], [])
        self._rounds: list[_Round] = []
        self._access: tuple[list[Check], list[Difference]] = ([], [])
        self._bets: dict[str, tuple[list[Check], list[Difference]]] = {}
        self._sent: tuple[list[Check], list[Difference]] = ([], [])
        self._idem: tuple[list[Check], list[Difference]] = ([], [])
        self._balances: dict[str, BalanceTally] = {}
        self._crashed_players: set[str] = set()
        self._sent_state = SentCheck(frozenset(self._players))
        self._idempotency = Idempotency()
        self._firsts: list[tuple[float, str]] = []
        self._lag: float | None = None
        self._pending: list[tuple[PendingTimeout, _Round]] = []
        self._kills: list[Kill] = []
        self._crashed: set[str] = set()
        self._cuts: list[Disconnection] = []
        self._bets_checked = 0

    # ------------------------------------------------------------------ feeding
    def _observation(self, part: RoundPart) -> Observation:
        rid = part.round_id
        return Observation(
            truth=part.truth,
            rounds={rid: part.sim_round} if part.sim_round is not None else {},
            server_events=part.server_events,
            records={p: part.records.get(p, ()) for p in self._players},
            balances={},
            opening={},
            sent=part.sent,
            supervisor_cancelled=(rid,) if part.supervisor_cancelled else (),
            server_clock_is_sim=self._clock_is_sim,
            timing=self._timing,
            kills=part.kills,
            corrections={rid: part.correction} if part.correction else {},
            alterations=part.alterations,
            supervisor_paused=(rid,) * part.supervisor_paused,
            reader_line=self._reader_line,
            disconnects=tuple((p, rid) for p in part.disconnects),
        )

    def _record(self, checks: Sequence[Check]) -> None:
        for check in checks:
            count = self.counts.setdefault(check.clause, [0, 0])
            count[0 if check.passed else 1] += 1

    def _keep_in(
        self, bucket: tuple[list[Check], list[Difference]], checks: list[Check], diffs: list[Difference]
    ) -> None:
        if self._keep:
            bucket[0].extend(checks)
        bucket[1].extend(diffs)

    def feed(self, part: RoundPart) -> RoundVerdict:
        """Judge one ended round.

        Raises:
            ValueError: the round was fed before (a part is final), or the part holds rows of a player whose bet
                record is not observed (not in ``players``)."""
        if part.round_id in self._fed:
            raise ValueError(f"round {part.round_id}: already judged (each round is fed once, when it has ended)")
        self._fed.add(part.round_id)
        return self._feed(part)  # a round's part is small: pausing the collector (finish) would cost more

    def _feed(self, part: RoundPart) -> RoundVerdict:
        rid = part.round_id
        unknown = sorted(set(part.records) - set(self._players))
        if unknown:
            raise ValueError(f"round {rid}: rows of {', '.join(unknown)}, whose bet records are not observed")
        obs = self._observation(part)
        self.know_kills(part.kills)
        crashed = crashed_writes(obs)
        self._crashed |= crashed
        expected, ended, pauses = expectations(obs)
        self.expected.update(expected)
        self._ended.update(ended)
        made: list[Check] = []  # this round's checks, for its verdict
        found: list[Difference] = []
        # the timeline: the re-shake cap, the pauses (a cancellation's timing waits for the run's lag), the period
        cap_checks: list[Check] = []
        cap = check_reshake_cap(obs, cap_checks)
        pause_checks: list[Check] = []
        deferred: list[PendingTimeout] = []
        pause_diffs = check_pauses(obs, pauses, pause_checks, cap=cap, deferred=deferred)
        lag = service_lag(obs, pauses)
        if lag is not None:
            self._lag = lag if self._lag is None else max(self._lag, lag)
        self._firsts = sorted(self._firsts + first_resumes(pauses))[:2]
        quiet = replace(obs, sent=())
        timing_checks: list[Check] = []
        timing_diffs = check_timing(quiet, pauses, timing_checks, self._firsts)
        all_timing: list[Check] = []
        all_diffs = check_timing(obs, pauses, all_timing, self._firsts)
        sent_checks, sent_diffs = all_timing[len(timing_checks) :], all_diffs[len(timing_diffs) :]
        round_checks: list[Check] = []
        round_diffs = _check_rounds(obs, expected, round_checks)
        twice = sum(1 for event in obs.server_events if event.ends_round) - 1 if rid in ended else 0
        twice = max(twice, 0)
        cap_diffs = as_atomicity(cap[0], crashed)
        pause_diffs = as_atomicity(pause_diffs, crashed)
        timing_diffs, sent_diffs = as_atomicity(timing_diffs, crashed), as_atomicity(sent_diffs, crashed)
        round_diffs = as_atomicity(round_diffs, crashed)
        self._keep_in(self._cap, cap_checks, cap_diffs)
        kept = _Round(0, pause_diffs, pause_checks if self._keep else [])
        self._pauses.append(kept)
        for pending in deferred:
            self._pending.append((pending, kept))
        self._keep_in(self._timing_checks, timing_checks, timing_diffs)
        self._keep_in(self._timing_sent, sent_checks, sent_diffs)
        self._keep_in(self._twice, round_checks[:twice], round_diffs[:twice])
        sim = expected[rid].round if rid in expected else (part.sim_round or 0)
        self._rounds.append(_Round(sim, round_diffs[twice:], round_checks[twice:] if self._keep else []))
        made += cap_checks + pause_checks + timing_checks + sent_checks + round_checks
        found += cap_diffs + pause_diffs + timing_diffs + sent_diffs + round_diffs
        # access control, on the round's records
        access_checks: list[Check] = []
        access_diffs = check_access(part.access, obs.records, access_checks)
        self._keep_in(self._access, access_checks, access_diffs)
        made += access_checks
        found = access_diffs + found
        # the bets, their players' balances so far, the acknowledged bets, idempotency
        for player, rows in obs.records.items():
            made_p, found_p = self._rows(player, rows, crashed)
            made += made_p
            found += found_p
        made_s: list[Check] = []
        found_s: list[Difference] = []
        for sent in part.sent:
            found_s += self._sent_state.see(sent, made_s)
        made_i: list[Check] = []
        found_i: list[Difference] = []
        for sent in part.sent:
            found_i += self._idempotency.see(sent, self._kills, made_i)
        self._keep_in(self._sent, made_s, found_s)
        self._keep_in(self._idem, made_i, found_i)
        made += made_s + made_i
        found += found_s + found_i
        self._cuts += disconnections(obs)
        self._record(made)
        return RoundVerdict(rid, expected.get(rid), tuple(found), tuple(made))

    def _rows(
        self, player: str, rows: Sequence[BetRecordRow], crashed: frozenset[str] | set[str]
    ) -> tuple[list[Check], list[Difference]]:
        checks: list[Check] = []
        diffs = as_atomicity(_check_bets(rows, self.expected, self._ended, checks), frozenset(crashed))
        self._bets_checked += len(rows)
        self._balances.setdefault(player, BalanceTally()).add(rows, self.expected)
        if any(row.round_id in crashed for row in rows):
            self._crashed_players.add(player)
        self._sent_state.add_records(player, rows)
        self._idempotency.count_rows(player, rows)
        self._keep_in(self._bets.setdefault(player, ([], [])), checks, diffs)
        return checks, diffs

    def know_kills(self, kills: Iterable[Kill]) -> None:
        """Learn of the bench's ``kills`` (told again, or in a round's part too, each counts once): a bet fed
        later that retries one sent before a kill is judged under IDEM-2, whether or not a round was in play when
        the server was killed. Tell each kill before feeding the first round that holds a bet sent after it."""
        for kill in kills:
            if kill not in self._kills:
                self._kills.append(kill)

    def feed_rows(self, player: str, rows: Sequence[BetRecordRow]) -> list[Difference]:
        """Judge rows of ``player``'s bet record found after their round was fed (against that round's kept
        expectation; a round never fed is in progress); returns their differences."""
        checks, diffs = self._rows(player, rows, self._crashed)
        self._record(checks)
        return diffs

    # ------------------------------------------------------------------ the run
    def finish(
        self,
        opening: Mapping[str, int],
        balances: Mapping[str, int],
        *,
        sent: Sequence[SentBet] = (),
        access: Sequence[AccessAnswer] = (),
        kills: Sequence[Kill] = (),
    ) -> Verdict:
        """The run's verdict: what each round left, then the balances against ``opening`` and ``balances``, the
        bench's ``sent`` bets that name no round (judged after every round's, in the order sent), the ``access``
        answers that name no round, and the ``kills`` not fed with a round. Never raises on server data."""
        with gc_paused():
            return self._finish(opening, balances, sent, access, kills)

    def _finish(
        self,
        opening: Mapping[str, int],
        balances: Mapping[str, int],
        sent: Sequence[SentBet],
        access: Sequence[AccessAnswer],
        kills: Sequence[Kill],
    ) -> Verdict:
        made: list[Check] = []
        self.know_kills(kills)
        self._crashed |= crashed_writes(_empty(kills=tuple(self._kills)))
        crashed = frozenset(self._crashed)
        # the cancellations of unresolved pauses, timed with the run's service lag, in their places
        timed = _empty(server_clock_is_sim=self._clock_is_sim, timing=self._timing)
        for pending, kept in reversed(self._pending):
            timeout: list[Check] = []
            diffs = as_atomicity(judge_pause_timeout(timed, pending, self._lag, timeout), crashed)
            kept.diffs[pending.diff_at : pending.diff_at] = diffs
            if self._keep:
                kept.checks[pending.check_at : pending.check_at] = timeout
            made += timeout
        access_checks: list[Check] = []
        access_diffs = check_access(access, {p: () for p in self._players}, access_checks)
        self._keep_in(self._access, access_checks, access_diffs)
        made += access_checks
        for bet in sent:
            sent_checks: list[Check] = []
            self._keep_in(self._sent, sent_checks, self._sent_state.see(bet, sent_checks))
            made += sent_checks
        for bet in sent:
            idem_checks: list[Check] = []
            self._keep_in(self._idem, idem_checks, self._idempotency.see(bet, self._kills, idem_checks))
            made += idem_checks
        idem_checks = []
        self._keep_in(self._idem, idem_checks, self._idempotency.finish(self._players, self._kills, idem_checks))
        made += idem_checks
        rounds_in_order = sorted(self._rounds, key=lambda kept: kept.sim)
        timeline = self._cap[1] + [d for kept in self._pauses for d in kept.diffs]
        timeline += self._timing_checks[1] + self._timing_sent[1]
        rounds = timeline + self._twice[1] + [d for kept in rounds_in_order for d in kept.diffs]
        grouping = Grouping(rounds, first=self._access[1])
        players: list[Difference] = []
        balance_checks: dict[str, list[Check]] = {}
        for player in sorted({*self._players, *opening, *balances}):
            player_bets = self._bets.get(player, ([], []))[1]
            grouping.add_bets(player_bets)
            own: list[Check] = []
            tally = self._balances.get(player, BalanceTally())
            balance = tally.judge(player, opening, balances, own)
            balance = as_atomicity(balance, crashed, whole=player in self._crashed_players)
            balance_checks[player] = own
            made += own
            grouping.add_balance(balance, player_bets)
            players += player_bets + balance
        sent_diffs = self._sent[1] + self._idem[1]
        cut_checks: list[Check] = []
        owner = self._sent_state.owner
        judge_disconnections(self._cuts, rounds + players + sent_diffs, lambda p, bet: owner(bet) == p, cut_checks)
        grouping.add_roots(sent_diffs)
        diffs = self._access[1] + rounds + players + sent_diffs
        atom_checks: list[Check] = []
        check_atomicity(crashed, diffs, atom_checks)
        made += cut_checks + atom_checks
        self._record(made)
        checks: list[Check] = []
        if self._keep:
            checks += self._cap[0] + [c for kept in self._pauses for c in kept.checks]
            checks += self._timing_checks[0] + self._timing_sent[0]
            checks += self._twice[0] + [c for kept in rounds_in_order for c in kept.checks]
            checks += self._access[0]
            for player in sorted({*self._players, *opening, *balances}):
                checks += self._bets.get(player, ([], []))[0] + balance_checks[player]
            checks += self._sent[0] + self._idem[0] + cut_checks + atom_checks
        return Verdict(
            tuple(diffs),
            len(self.expected),
            self._bets_checked,
            dict(self.expected),
            grouping.findings(),
            tuple(checks),
        )


def _empty(kills: Sequence[Kill] = (), server_clock_is_sim: bool = False, timing: Timing | None = None) -> Observation:
    """An observation of nothing but the kills and the settings a check reads."""
    return Observation(
        truth=(),
        rounds={},
        server_events=(),
        records={},
        balances={},
        opening={},
        kills=kills,
        server_clock_is_sim=server_clock_is_sim,
        timing=timing,
    )


def split_observation(
    obs: Observation,
) -> tuple[list[RoundPart], tuple[SentBet, ...], tuple[AccessAnswer, ...], tuple[Kill, ...]]:
    """``obs`` as a bench streams it: one part per round (the rounds the table numbered, in its order, then every
    other round the server named, in the order first named), and what names no round: the sent bets, the access
    answers and the kills. Feeding the parts, then finishing with the rest and ``obs``'s opening and final
    balances, gives :func:`~harness.judge.oracle.judge`'s verdict (:func:`judge_by_rounds`)."""
    order = dict.fromkeys(obs.rounds)
    order.update(dict.fromkeys(_server_rounds(obs)))
    for sent in obs.sent:
        if sent.reply.round_id or sent.in_play:
            order.setdefault(sent.reply.round_id or sent.in_play, None)
    truth = truth_by_round(obs.truth)
    events: dict[str, list[RoundEvent]] = {}
    for event in obs.server_events:
        events.setdefault(event.round_id, []).append(event)
    rows: dict[str, dict[str, list[BetRecordRow]]] = {}
    for player, record in obs.records.items():
        for row in record:
            rows.setdefault(row.round_id, {}).setdefault(player, []).append(row)
    sent_by: dict[str, list[SentBet]] = {}
    loose: list[SentBet] = []
    for sent in obs.sent:
        rid = sent.reply.round_id or sent.in_play
        (sent_by.setdefault(rid, []) if rid else loose).append(sent)
    access_by: dict[str, list[AccessAnswer]] = {}
    loose_access: list[AccessAnswer] = []
    for answer in obs.access:
        (access_by.setdefault(answer.round_id, []) if answer.round_id in order else loose_access).append(answer)
    cancelled, paused = set(obs.supervisor_cancelled), Counter(obs.supervisor_paused)
    parts: list[RoundPart] = []
    for rid in order:
        sim = obs.rounds.get(rid)
        parts.append(
            RoundPart(
                round_id=rid,
                sim_round=sim,
                truth=tuple(truth.get(sim, ())) if sim is not None else (),
                server_events=tuple(events.get(rid, ())),
                records=rows.get(rid, {}),
                sent=tuple(sent_by.get(rid, ())),
                supervisor_cancelled=rid in cancelled,
                supervisor_paused=paused[rid],
                kills=tuple(k for k in obs.kills if rid in k.in_play),
                correction=obs.corrections.get(rid, ""),
                alterations=tuple(a for a in obs.alterations if a.round_id == rid),
                disconnects=tuple(dict.fromkeys(p for p, r in obs.disconnects if r == rid)),
                access=tuple(access_by.get(rid, ())),
            )
        )
    kills = tuple(k for k in obs.kills if not any(rid in order for rid in k.in_play))
    return parts, tuple(loose), tuple(loose_access), kills


def judge_by_rounds(obs: Observation, keep_checks: bool = True) -> Verdict:
    """:func:`~harness.judge.oracle.judge`'s verdict, reached by a :class:`StreamingJudge` fed ``obs`` one round
    at a time (:func:`split_observation`)."""
    parts, sent, access, kills = split_observation(obs)
    stream = StreamingJudge(
        obs.records,
        server_clock_is_sim=obs.server_clock_is_sim,
        timing=obs.timing,
        reader_line=obs.reader_line,
        keep_checks=keep_checks,
    )
    stream.know_kills(obs.kills)
    for part in parts:
        stream.feed(part)
    return stream.finish(obs.opening, obs.balances, sent=sent, access=access, kills=kills)
