"""The table: assembles the SimPy world (lamp, dealer, players, problems) and keeps the round books.

Typical use (the harness reads the profile file: :func:`harness.files.load_profile`)::

    table = Table(load_profile("standard"), seed=7)
    table.run(rounds=1000)
    table.log.write_jsonl(open("events.jsonl", "w"))

With ``lamp=`` a caller (a HIL bench) supplies a lamp that a game server drives and the table opens no round by
itself; without it a :class:`FixedScheduleController` opens, closes and paces rounds. Pass ``env=`` to run on another
SimPy environment (e.g. a real-time bridge); ``listeners`` are called with each typed event as it is emitted.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from typing import Any

import simpy

from simulator.dealer import Dealer
from simulator.eventlog import EventLog, Record
from simulator.events import (
    BettingClosed,
    Event,
    Paused,
    PauseReason,
    Resumed,
    RoundEnded,
    RoundOpened,
    RoundStatus,
)
from simulator.gcpause import gc_paused
from simulator.incidents import IncidentSource, Problem, RandomIncidents
from simulator.lamp import Lamp, LampSignal, LampState
from simulator.players import Crowd
from simulator.profile import Profile
from simulator.rng import RoundStream, Streams, Subsystem
from simulator.script import Script, ScriptedIncidents
from simulator.seams import Emit, RoundBook

Listener = Callable[[Event], None]
# hot path: enum members read on every round, as module constants (why: simulator.lamp).
_OPEN, _CLOSED, _OFF = LampState.BETTING_OPEN, LampState.BETTING_CLOSED, LampState.OFF
_PAUSED, _VOID = LampState.PAUSED, LampState.VOID
_SETTLED = RoundStatus.SETTLED
Proc = Generator[Any, Any, Any]


class Table:
    """One simulated table. Deterministic: same profile, seed, script and players → same event log."""

    def __init__(
        self,
        profile: Profile,
        seed: int,
        *,
        env: simpy.Environment | None = None,
        lamp: Lamp | None = None,
        script: Script | None = None,
        incidents: IncidentSource | None = None,
        listeners: Iterable[Listener] = (),
        players: int | None = None,
    ) -> None:
        self.profile = profile
        self.seed = seed
        self.env = env if env is not None else simpy.Environment()
        self.streams = Streams(seed)
        self.log = EventLog()
        self._listeners = tuple(listeners)
        # Every fact is emitted as a record, ``emit((EventClass, t, field, ...))`` (see simulator.eventlog); with
        # listeners each is built into its typed event at once and handed to them.
        self.emit: Emit = self._emit_notify if self._listeners else self.log.records.append
        base = incidents if incidents is not None else RandomIncidents(profile, self.streams)
        self.incidents: IncidentSource = ScriptedIncidents(base, script) if script and script.steps else base
        self.external_lamp = lamp is not None
        self.lamp = lamp if lamp is not None else Lamp(self.env)
        self.current: RoundBook | None = None
        self.rounds_ended = 0
        self._target: int | None = None
        self.finished: simpy.Event = self.env.event()
        # The dealer's timings are budgeted per round: 8 draws of each kind cover a round with a re-shake and a
        # rearrangement (place, shake, react, lift, then place, shake, lift again, rearrange).
        self.dealer = Dealer(self, RoundStream(self.streams, Subsystem.DEALER, 0, uniforms=8, normals=8))
        self.env.process(self.dealer.run())
        count = profile.players.count if players is None else players
        self.crowd = Crowd(self, count)
        self.controller = None if self.external_lamp else FixedScheduleController(self)
        if self.external_lamp:
            self.lamp.on_change = self._lamp_changed
            self.env.process(self._watch_lamp())

    def _emit_notify(self, record: Record) -> None:
        event = self.log.add(record)
        for listener in self._listeners:
            listener(event)

    # --- round books -------------------------------------------------------------------------------------------
    def book_for(self, round_no: int) -> RoundBook:
        """The book of the round the lamp opened; the first caller opens it and draws the round's plan."""
        book = self.current
        if book is not None and book.round == round_no:
            return book
        plan = self.incidents.round_plan(round_no)
        book = self.current = RoundBook(round_no, plan, self.env.now, self.env.event())
        if plan.problem is not None:
            self.env.process(self._problem(book, plan.problem))
        return book

    def end_round(self, book: RoundBook, status: RoundStatus, clause: str | None, faces: str | None = None) -> None:
        """Record the table's verdict once; later calls for the same round are ignored."""
        if book.ended:
            return
        book.ended = True
        if book.resumed is not None and not book.resumed.triggered:
            book.resumed.succeed()
        reds = faces.count("R") if faces is not None else None
        self.emit((RoundEnded, self.env.now, book.round, status, clause, faces, reds, book.reshakes))
        if not self.external_lamp and status is not _SETTLED:
            self.lamp.set(LampState.VOID, book.round)  # the standalone lamp tells the dealer to clear the table
        self.rounds_ended += 1
        if self._target is not None and self.rounds_ended >= self._target and not self.finished.triggered:
            self.finished.succeed()

    def pause(self, book: RoundBook, reason: PauseReason) -> None:
        """ERR-1: the table stops; with the fixed lamp, the lamp shows PAUSED. Pauses nest: a second problem
        during a pause extends it, and the table resumes only when every problem is resolved."""
        self.emit((Paused, self.env.now, book.round, reason))
        book.pause_depth += 1
        if book.pause_depth == 1:
            book.paused_since = self.env.now
            book.resumed = self.env.event()
            if not self.external_lamp:
                book.closed_before_pause = self.lamp.state is _CLOSED
                self.lamp.set(LampState.PAUSED, book.round)

    def resume(self, book: RoundBook) -> None:
        """ERR-2: a problem is resolved; the re-shake budget starts again (``max_reshakes`` counts re-shakes since
        the last resume); when no problem is left, the betting deadline moves by the pause's length, and the fixed
        lamp shows again what it showed before the pause."""
        assert book.paused_since is not None and book.resumed is not None and book.pause_depth > 0
        self.emit((Resumed, self.env.now, book.round))
        book.pause_depth -= 1
        if self.profile.table.reshake_count == "since_resume":
            book.since_resume = 0
        if book.pause_depth == 0:
            book.paused_total += self.env.now - book.paused_since
            book.paused_since = None
            book.resumed.succeed()
            if not self.external_lamp and self.lamp.state is LampState.PAUSED:
                if book.closed_before_pause:
                    self.lamp.set(_CLOSED, book.round)
                elif book.deadline is not None:
                    self.lamp.set(LampState.BETTING_OPEN, book.round, book.deadline + book.paused_total)

    def _lamp_changed(self, previous: LampSignal, signal: LampSignal) -> None:
        """External lamp: a pause the system ends without resuming the round (the lamp goes from *paused* to
        *void*, or on to another round) cancelled the round (ERR-1 then ERR-3): that is the table's verdict."""
        if previous.state is _PAUSED and (signal.state is _VOID or signal.round != previous.round):
            book = self.current
            if book is not None and book.round == previous.round and not book.ended:
                self.end_round(book, RoundStatus.CANCELLED, "ERR-3")

    def _problem(self, book: RoundBook, problem: Problem) -> Proc:
        yield self.env.timeout(problem.after)
        if book.ended:
            return
        self.pause(book, PauseReason.EQUIPMENT)
        timeout = self.profile.table.pause_timeout
        if problem.resolve <= timeout:
            yield self.env.timeout(problem.resolve)
            if not book.ended:
                self.resume(book)
        else:
            yield self.env.timeout(timeout)
            if not book.ended:
                self.end_round(book, RoundStatus.CANCELLED, "ERR-3")

    def _watch_lamp(self) -> Proc:
        """With an external lamp, record its openings and closings as ground truth."""
        lamp = self.lamp
        while True:
            signal = yield lamp.changed
            if signal.state is LampState.BETTING_OPEN and signal.deadline is not None:
                self.emit((RoundOpened, self.env.now, signal.round, signal.deadline))
            elif signal.state is LampState.BETTING_CLOSED:
                self.emit((BettingClosed, self.env.now, signal.round))

    # --- running -----------------------------------------------------------------------------------------------
    def run(self, rounds: int, on_round: Callable[[int], None] | None = None, every: int = 0) -> EventLog:
        """Run until ``rounds`` rounds have ended; returns the event log.

        ``on_round`` (e.g. a progress bar, or a reader taking the log's batches: :meth:`EventLog.take`) is called
        with the number of rounds ended, every ``every`` rounds ended (default: every 1 % of the run), and at the
        end; what it does between steps of the model changes nothing in the run.
        The cyclic garbage collector is paused while the model runs (see :func:`simulator.gcpause.gc_paused`).

        Raises:
            ValueError: ``rounds`` < 1.
        """
        if rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {rounds}")
        self._target = rounds
        if self.controller is not None:
            self.controller.limit = rounds
        with gc_paused():
            if on_round is None:
                self.env.run(until=self.finished)
                return self.log
            step = every if every > 0 else max(rounds // 100, 1)
            mark = step
            while not self.finished.triggered:
                while self.rounds_ended < mark and not self.finished.triggered:
                    self.env.step()
                on_round(self.rounds_ended)
                mark += step
        return self.log


class FixedScheduleController:
    """The standalone lamp: opens each round, closes betting after ``betting_period`` (plus any pause), waits for
    the round to end and for ``round_gap``, then opens the next. Stops opening rounds after ``limit``."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.limit: int | None = None
        table.env.process(self.run())

    def run(self) -> Proc:
        table, env, lamp, emit = self.table, self.table.env, self.table.lamp, self.table.emit
        timeout = env.timeout  # bound once: each ``env.timeout`` read builds a new bound method
        settings = table.profile.table
        round_no = 0
        while self.limit is None or round_no < self.limit:
            round_no += 1
            now = env.now
            deadline = now + settings.betting_period
            lamp.set(_OPEN, round_no, deadline)
            emit((RoundOpened, now, round_no, deadline))
            book = table.book_for(round_no)
            book.deadline = deadline
            accounted = 0.0
            while True:
                yield timeout(max(deadline - env.now, 0.0))
                if book.ended:
                    break
                if book.paused_since is not None and book.resumed is not None:
                    yield book.resumed
                    if book.ended:
                        break
                extra = book.paused_total - accounted
                if extra <= 0.0:
                    break
                accounted = book.paused_total
                deadline += extra
                lamp.set(LampState.BETTING_OPEN, round_no, deadline)
            if not book.ended:
                lamp.set(_CLOSED, round_no)
                emit((BettingClosed, env.now, round_no))
            yield book.cleared  # the next round opens only when the dealer is free
            lamp.set(_OFF, round_no)
            yield timeout(settings.round_gap)
