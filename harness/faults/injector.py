"""Run one fault schedule against one bench: play rounds with players betting, fire each fault when its round
and phase (or time) comes, heal it after its duration, record the history, heal everything (always), take
the final read and run the checkers.

Phases of a round, in order, as the bench sees them: ``betting_open`` (the server's lamp opened the round),
``shaking`` (the dealer started shaking), ``betting_closed`` (the server published the close), ``reveal``
(the bowl is lifted), ``settling`` (the tokens are read: the result is on its way to the server).

Safety: :func:`run_schedule` refuses a bench whose file does not say ``faults_allowed: true`` (production or
shared targets must never be faulted; see :func:`harness.faults.prepare.prepare_bench`). Rollbacks (heal links,
replug ports, restart the server) run in a ``finally``, also when the run aborts (steady-state probes failing
``abort_after_failed_probes`` times in a row) or fails.

The bench preparation is :mod:`harness.faults.prepare`'s, the players' betting :mod:`harness.faults.bettors`'s and
the result type :mod:`harness.faults.result`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import simpy

from harness.bench.adapters.capabilities import EventWatching
from harness.bench.adapters.reference_inprocess import EARLY_S
from harness.bench.config import Bench
from harness.bench.gridtimer import AHEAD_OF_TIMEOUTS, GridTimer
from harness.bench.rig import SLICE_REAL_S, SLICE_VIRTUAL_S, BenchTimeout, Rig
from harness.bench.tap import tap_of
from harness.errors import AdapterError
from harness.faults.apply import Applier, Sessions
from harness.faults.bettors import BET_TYPES, Bettors
from harness.faults.links import PlayerLinks
from harness.faults.prepare import InjectionRefused, prepare_bench, table_script
from harness.faults.result import RunResult
from harness.faults.schedule_model import SERIAL_KINDS, Fault, Schedule, plan
from harness.judge.checkers import CheckReport, check_all
from harness.judge.expect import ExpectedRound, expected_by_round_id
from harness.judge.history import FinalRead, History, history_hash
from harness.records import OpFunction, OpType, Outcome, RoundEvent, RoundEventKind
from simulator.events import BowlLifted, Revealed, RoundEnded, ShakeStarted

__all__ = ["BET_TYPES", "run_schedule"]

_TRUTH_PHASE = {ShakeStarted: "shaking", BowlLifted: "reveal", Revealed: "settling"}


def run_schedule(
    bench: Bench,
    schedule: Schedule,
    seed: int | None = None,
    *,
    adapter: str | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> RunResult:
    """Run ``schedule`` with ``seed`` (default: the schedule's) on ``bench``; never leaves anything running.

    Raises:
        InjectionRefused: the bench is not a fault target, or the plan needs a fault the bench cannot apply.
        AdapterError / BenchError: the bench could not be built (nothing is left running).
    """
    root = schedule.seed if seed is None else seed
    faults = plan(schedule, root)
    prepared = prepare_bench(bench, root, adapter, serial=any(f.kind in SERIAL_KINDS for f in faults))
    players = {p: schedule.balance for p in schedule.player_ids}
    with Rig.build(prepared, players, script=table_script(faults), crowd=0, seed=root) as rig:
        return _Run(rig, schedule, root, faults, progress).execute()


class _Run:
    def __init__(
        self,
        rig: Rig,
        schedule: Schedule,
        seed: int,
        faults: tuple[Fault, ...],
        progress: Callable[[int, int, str], None] | None,
    ) -> None:
        self.rig = rig
        self.env: simpy.Environment = rig.env
        self.schedule = schedule
        self.seed = seed
        self.faults = faults
        self.progress = progress
        self.history = History()
        tap = tap_of(rig)
        if tap is not None:  # a --record/--live run: the faults and the bench's notes go to the feed too
            tap.watch_history(self.history)
        self.links = PlayerLinks(schedule.player_ids)
        self.sessions = Sessions(rig.adapter, self.links, self.history, lambda: self.now)
        self.applier = Applier(
            rig.adapter,
            schedule.player_ids,
            self.sessions,
            self.history,
            lambda: self.now,
            rig.serial_ports,
            on_kill=rig.kill_server,
        )
        for f in faults:
            why = self.applier.supports(f)
            if why:
                raise InjectionRefused(f"{f.describe()}: {why} (bench {rig.bench.name!r})")
        self.bettors = Bettors(
            self.env,
            rig.adapter,
            schedule,
            seed,
            rig.bench.timing.betting_s,
            self.history,
            self.links,
            self.sessions,
            self.applier,
            lambda: self.now,
        )
        self.pending = list(range(len(faults)))  # faults not fired yet
        self.round_no = 0
        self.rid = ""
        self.phases: set[str] = set()
        self.truth_seen = 0
        self.truth_phases: dict[int, set[str]] = {}
        self.events_seen = 0
        self.closed_seen: set[str] = set()
        self.ended: set[str] = set()
        self.failed_probes = 0
        self.stopped: Outcome | None = None  # ABORTED or ERROR once something stopped the run early
        self.t0 = float(self.env.now)
        self.slice = SLICE_REAL_S if rig.bench.realtime else SLICE_VIRTUAL_S
        self._watch_timer: GridTimer | None = None

    # ------------------------------------------------------------------ the run
    def execute(self) -> RunResult:
        played = 0
        final: FinalRead | None = None
        try:
            for p in self.schedule.player_ids:
                self.sessions.connect(p)
            self._start_watch()
            self._probe("before")
            for r in range(1, self.schedule.rounds + 1):
                if self.aborted:
                    break
                self._play_round(r)
                played = r
                self._probe(f"after round {r}")
                if self.progress is not None:
                    self.progress(r, self.schedule.rounds, self.aborted)
        except Exception as exc:  # any failure ends the run; the rollback and the final read still happen
            self.stopped = Outcome.error(f"error: {type(exc).__name__}: {exc}")
        finally:
            self._rollback()
        try:
            self._finish_rounds()
            final = self._final_read()
        except (AdapterError, BenchTimeout) as exc:
            self.stopped = self.stopped or Outcome.error(f"final read failed: {exc}")
        report = CheckReport(())
        if final is not None:
            report = check_all(self.history.ops, final, self._expected(final.events))
        ops = tuple(self.history.ops)
        judged = Outcome.passed() if report.passed else Outcome.failed(f"{len(report.violations)} violations")
        return RunResult(
            seed=self.seed,
            schedule_digest=self.schedule.digest(),
            faults=self.faults,
            history=ops,
            final=final,
            report=report,
            history_hash=history_hash(ops, final),
            rounds_played=played,
            outcome=self.stopped or judged,
            serial_counts=self.applier.serial_counts(self.schedule.targets.devices),
        )

    @property
    def now(self) -> float:
        return float(self.env.now)

    @property
    def aborted(self) -> str:
        """Why the run stopped early, or ""."""
        return self.stopped.reason if self.stopped is not None else ""

    def _note(self, f: OpFunction, **values: Any) -> None:
        """Record one of the bench's own observations in the history."""
        self.history.add(self.now, "bench", OpType.NOTE, f, **values)

    def _up(self) -> bool:
        return self.applier.server_up

    def _play_round(self, r: int) -> None:
        rid = self._open_round()
        if not rid:
            return
        self.round_no, self.rid, self.phases = r, rid, {"betting_open"}
        self._fire_due()
        self._arm_watch(self.now)  # the watch reads the new round at its next step
        for p in self.schedule.player_ids:
            self.env.process(self.bettors.round_bets(p))
        self._wait_end(rid)

    def _open_round(self) -> str:
        deadline = self.now + self.rig.bench.timing.step_timeout_s
        while self.now < deadline:
            if self._up():
                try:
                    return self.rig.open_round()
                except AdapterError:
                    pass
                except BenchTimeout as exc:  # the server opened it but the table never saw the lamp open
                    self._note(OpFunction.STUCK, detail=str(exc))
                    break
            self.env.run(until=self.now + 10 * self.slice)
        self._probe("open round", ok=False)
        return ""

    def _wait_end(self, rid: str) -> None:
        limit = self.rig.bench.timing.step_timeout_s
        self.rig.run_slices(lambda: rid not in self.ended, self.now + limit)
        if rid not in self.ended:
            self._supervisor_cancel(rid)
        # let the table clear the round too (bounded)
        sim = self.rig.driver.rounds.get(rid)
        if sim is not None:
            self.rig.run_slices(lambda: "ended" not in self.truth_phases.get(sim, set()), self.now + 0.5)

    def _supervisor_cancel(self, rid: str) -> None:
        self._note(OpFunction.CANCEL, round_id=rid, detail="round did not end in time")
        try:
            if self._up():
                self.rig.supervise("cancel", "fault injection: round did not end")
        except AdapterError as exc:
            self._note(OpFunction.CANCEL, round_id=rid, detail=f"refused: {exc.code}")
        self.rig.run_slices(lambda: rid not in self.ended, self.now + 2.0)

    # ------------------------------------------------------------------ watching phases, firing and healing
    def _watch(self) -> Generator[simpy.Event, Any, None]:
        while True:
            self._watch_step(self.now)
            yield self.env.timeout(self.slice)

    def _watch_step(self, now: float) -> None:
        """Observe the table and the server, fire the faults that are due, heal the ones whose time is up."""
        self._observe()
        self._fire_due()
        self.applier.heal_due()
        self._arm_watch(None)

    def _start_watch(self) -> None:
        """Watch on the grid of the slice from now. A real-time bench, or a server whose adapter does not announce
        new round events (not :class:`EventWatching`), is polled every slice; otherwise the watch steps only at the
        slice boundaries after something it reads changed (a ground-truth event, a server event, a new round) or a
        fault's time came."""
        adapter = self.rig.adapter
        if self.rig.bench.realtime or not isinstance(adapter, EventWatching):
            self.env.process(self._watch())
            return
        # Ahead of every timeout at its grid points: the polling loop's step there was scheduled a whole slice
        # earlier, before the finer-grained line services and device events due at the same instant.
        timer = self._watch_timer = GridTimer(self.env, self.slice, self._watch_step, AHEAD_OF_TIMEOUTS)

        def changed(*_args: object) -> None:  # made by a timeout, so after the watch step at this instant: seen next
            timer.arm_after(float(self.env.now))

        adapter.event_watchers.append(changed)
        self.rig.emulated.watchers.append(changed)
        timer.start()

    def _arm_watch(self, now: float | None) -> None:
        """Arm the watch for ``now`` (something it reads changed) and for the times of the faults waiting on the
        clock: pending time-triggered faults and active faults' heals (armed a hair early: a step with nothing due
        does nothing)."""
        timer = self._watch_timer
        if timer is None:
            return
        if now is not None:
            timer.arm_at(now)
        times = [a[0] for a in self.applier.active]
        times += [self.t0 + f.at.time for i in self.pending if (f := self.faults[i]).at.time is not None]
        if times:
            timer.arm_at(min(times) - EARLY_S)

    def _observe(self) -> None:
        truth = self.rig.truth
        for event in truth[self.truth_seen :]:
            phase = _TRUTH_PHASE.get(type(event))
            rnd = getattr(event, "round", None)
            if isinstance(rnd, int):
                seen = self.truth_phases.setdefault(rnd, set())
                if phase is not None:
                    seen.add(phase)
                if isinstance(event, RoundEnded):
                    seen.add("ended")
        self.truth_seen = len(truth)
        if self._up():
            try:
                events = self.rig.adapter.round_events_since(self.events_seen)
            except AdapterError:
                events = []
            for e in events:
                if e.kind == RoundEventKind.CLOSED and e.round_id not in self.closed_seen:
                    self.closed_seen.add(e.round_id)
                    self._note(OpFunction.CLOSED, round_id=e.round_id)
                elif e.ends_round and e.round_id not in self.ended:
                    self.ended.add(e.round_id)
                    self._note(OpFunction.ENDED, round_id=e.round_id, detail=e.kind)
            self.events_seen += len(events)
        if self.rid:
            sim = self.rig.driver.rounds.get(self.rid)
            self.phases |= self.truth_phases.get(sim, set()) if sim is not None else set()
            if self.rid in self.closed_seen:
                self.phases.add("betting_closed")

    def _due(self, f: Fault) -> bool:
        if f.at.time is not None:
            return self.now - self.t0 >= f.at.time
        return f.at.round == self.round_no and f.at.phase in self.phases

    def _fire_due(self) -> None:
        if self.aborted:
            return
        for i in list(self.pending):
            f = self.faults[i]
            if f.at.time is None and f.at.round < self.round_no:
                self.pending.remove(i)  # its round ended before reaching that phase
                self._note(OpFunction.SKIPPED, detail=f.describe())
            elif self._due(f):
                self.pending.remove(i)
                self.applier.fire(f)

    # ------------------------------------------------------------------ probes, rollback, final read
    def _probe(self, when: str, ok: bool | None = None) -> None:
        if ok is None:
            try:
                ok = self._up() and self.rig.adapter.balance(self.schedule.player_ids[0]) >= 0
            except AdapterError:
                ok = False
        self.history.add(self.now, "bench", OpType.OK if ok else OpType.FAIL, OpFunction.PROBE, detail=when)
        self.failed_probes = 0 if ok else self.failed_probes + 1
        if self.failed_probes >= self.schedule.abort_after_failed_probes and self.stopped is None:
            why = f"abort: {self.failed_probes} steady-state probes failed in a row (last: {when})"
            self.stopped = Outcome.aborted(why)

    def _rollback(self) -> None:
        """Heal every active fault and restore the server; runs on every path out of the run."""
        self.pending.clear()
        self.applier.rollback()
        self._probe("after heal")

    def _finish_rounds(self) -> None:
        for rid in self.rig.opened:
            if rid not in self.ended:
                self._wait_end(rid)

    def _final_read(self) -> FinalRead:
        adapter = self.rig.adapter
        pids = self.schedule.player_ids
        return FinalRead(
            records={p: tuple(adapter.bet_record(p)) for p in pids},
            balances={p: adapter.balance(p) for p in pids},
            events=tuple(adapter.round_events()),
            opening={p: self.schedule.balance for p in pids},
        )

    def _expected(self, events: Sequence[RoundEvent]) -> dict[str, ExpectedRound]:
        adapter = self.rig.adapter
        return expected_by_round_id(
            self.rig.truth, self.rig.driver.rounds, self.rig.cancelled, events, adapter.clock_is_sim_time
        )
