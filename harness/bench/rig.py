"""A rig: one bench wired up for one scenario (or one ``xocdia-hil run``).

It builds the SimPy environment (virtual time for the in-process bench, the real-time bridge otherwise), the
emulated table and its five devices on the bench's transport (each line traced in both directions), and the game
server through its adapter; it then lets steps open rounds, place bets, act as supervisor and wait for the server,
and it keeps what the oracle needs (ground truth, the harness's own actions, what the server said).

Round numbers: the lamp device numbers rounds in the order the server opens them (1, 2, ...), whatever ids the
server uses, so a script for "round 1" applies to the first round a scenario opens.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Self

import simpy

from harness.bench.adapters.base import GameServerAdapter, ServerSetup
from harness.bench.adapters.loader import load_adapter
from harness.bench.config import Bench
from harness.bench.devices.emulated import EmulatedTable
from harness.bench.devices.lamp import OrdinalLampDriver
from harness.bench.gridtimer import GridTimer
from harness.bench.wiring import wire_lines, wrap_device_ends
from harness.errors import AdapterError, XocdiaError
from harness.files import load_profile
from harness.judge.oracle import Observation, SentBet, Verdict, judge
from harness.records import BetReply, PlayerSpec, RoundEvent, RoundEventKind
from harness.wire.realtime import SelectEnvironment
from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.base import Transport
from harness.wire.transports.faults import FaultyTransport
from simulator.events import BetSent, BettingClosed, Event, RoundEnded
from simulator.lamp import Lamp, LampState
from simulator.script import Script

SLICE_VIRTUAL_S = 0.01  # sim seconds between two checks of a wait condition (in-process)
SLICE_REAL_S = 0.02  # wall seconds between two checks (real-time benches)
BUILD_HOOKS: list[Callable[[Rig], None]] = []  # called with each rig :meth:`Rig.build` made, last (observers only)


class BenchTimeout(XocdiaError, AssertionError):
    """A wait for the server or the table did not finish in the bench's step timeout."""


@dataclass
class Action:
    """Something the harness did, at sim time ``t``: for the evidence and for the oracle."""

    t: float
    who: str
    what: str
    detail: str = ""


@dataclass
class Rig:
    """One bench wired up for one scenario (or one ``xocdia-hil run``): the SimPy environment, the emulated table
    and its five devices on traced lines, the game server through its adapter, and what the oracle needs (ground
    truth, the harness's own actions, what the server said).

    Build with :meth:`build`, end with :meth:`close` (always), or use it as a context
    manager, which closes it on the way out::

        with Rig.build(bench, {"alice": 10_000}) as rig:
            rid = rig.open_round()
            rig.play_to_end(rid)
    """

    bench: Bench
    env: simpy.Environment
    emulated: EmulatedTable  # the simulator model (``emulated.model``) and its five devices
    adapter: GameServerAdapter
    recorder: TraceRecorder
    opening: dict[str, int]
    workdir: Path
    driver: OrdinalLampDriver
    lines: dict[str, Transport]  # the device end of each line, by line name
    serial_ports: dict[str, FaultyTransport] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)
    sent: list[SentBet] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    _tmp: tempfile.TemporaryDirectory[str] | None = None
    _crowd_seen: int = 0
    _truth_seen: int = 0  # ground-truth events already indexed below
    _closed_rounds: set[int] = field(default_factory=set)  # simulator rounds whose betting the table saw close
    _table_ends: dict[int, RoundEnded] = field(default_factory=dict)
    _events_seen: int = 0  # server round events already indexed below
    _server_ends: dict[str, RoundEvent] = field(default_factory=dict)
    _opened_seen: int = 0  # server round events already read for the opened-rounds set below
    _opened_ids: set[str] = field(default_factory=set)
    _opened_at: dict[str, float] = field(default_factory=dict)  # when the rig first read each round's opening
    _heard_late: set[str] = field(default_factory=set)  # server-opened rounds whose OPEN the lamp heard too late

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        bench: Bench,
        players: Mapping[str, int],
        script: list[dict[str, Any]] | None = None,
        crowd: int | None = None,
        seed: int | None = None,
    ) -> Rig:
        """Wire the bench up and start the server. Raises AdapterError, or an InputError (ProfileError, ScriptError,
        an adapter path that does not load) with a message naming what is wrong; nothing is left open on failure."""
        profile = load_profile(bench.profile)  # validate everything before opening any port
        table_script = Script.from_data(script or [], "scenario script")
        adapter = load_adapter(bench.server.adapter, bench.server.adapter_options())
        tmp = tempfile.TemporaryDirectory(prefix="xocdia-rig-")
        workdir = Path(tmp.name)
        env: simpy.Environment = SelectEnvironment() if bench.realtime else simpy.Environment()
        recorder = TraceRecorder(clock=lambda: float(env.now))
        plan = bench.lines
        try:
            device_ends, server_ends = wire_lines(bench, plan, workdir)
        except BaseException:
            tmp.cleanup()
            raise
        lines = dict(device_ends)
        serial_ports = wrap_device_ends(bench, plan, device_ends, server_ends, lambda: float(env.now))
        traced: dict[str, Transport] = {
            line.name: TracingTransport(device_ends[line.name], recorder, line.trace_name) for line in plan
        }
        emulated = EmulatedTable(
            profile,
            bench.seed if seed is None else seed,
            traced,
            lines=plan,
            env=env,
            players=bench.players if crowd is None else crowd,
            script=table_script,
        )
        assert emulated.lamp is not None
        driver = OrdinalLampDriver(emulated.lamp)
        emulated.driver = driver
        rig = cls(bench, env, emulated, adapter, recorder, dict(players), workdir, driver, lines, _tmp=tmp)
        rig.serial_ports = serial_ports
        driver.server_opened = rig._server_opened
        setup = ServerSetup(
            players=tuple(PlayerSpec(p, b) for p, b in players.items()),
            devices=server_ends,
            lines={line.name: line for line in plan},
            env=env,
            workdir=workdir,
            betting_s=bench.timing.betting_s,
            round_gap_s=bench.timing.round_gap_s,
            pause_timeout_s=profile.table.pause_timeout,
            reshake_cap=profile.table.max_reshakes,
            result_timeout_s=bench.timing.result_timeout_s,
            heartbeat_s=bench.timing.heartbeat_s,
            auto_open=bench.server.opens_rounds == "server",
        )
        try:
            adapter.start(setup)
            adapter.provision_players(setup.players)
        except BaseException:
            rig.close()
            raise
        if isinstance(env, SelectEnvironment):
            env.fds = emulated.hub.fds
            env.on_ready = emulated.wake
            env.sync()
        if (crowd if crowd is not None else bench.players) > 0:
            if bench.realtime:
                env.process(rig._forward_crowd())
            else:
                rig._start_crowd_timer()
        for hook in BUILD_HOOKS:
            hook(rig)
        return rig

    def close(self) -> None:
        """Stop the server and release every port and temp file; never raises."""
        try:
            self.adapter.stop()
        finally:
            self.emulated.hub.close()
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ time
    @property
    def now(self) -> float:
        return float(self.env.now)

    def run_for(self, seconds: float) -> None:
        """Let ``seconds`` of bench time pass (sim seconds; wall seconds on a real-time bench)."""
        self.env.run(until=self.env.now + seconds)

    def run_until(self, done: Callable[[], bool], what: str, timeout_s: float | None = None) -> None:
        """Run until ``done()`` holds. Raises BenchTimeout naming ``what`` after ``timeout_s`` (default: the bench's
        step timeout). ``done`` must read the bench's state, not its clock: in virtual time it is checked only
        after slices in which something happened (see :meth:`run_slices`)."""
        limit = self.bench.timing.step_timeout_s if timeout_s is None else timeout_s
        self.run_slices(lambda: not done(), self.env.now + limit)
        if not done():
            raise BenchTimeout(f"timed out after {limit:g} s waiting for {what}")

    def run_slices(self, keep_going: Callable[[], bool], deadline: float) -> None:
        """``while keep_going() and now < deadline: run one slice`` (:data:`SLICE_VIRTUAL_S`, or
        :data:`SLICE_REAL_S` on a real-time bench). Ends on the slice grid from now, at the first slice boundary
        where ``keep_going()`` is false or the deadline is reached.

        In virtual time a slice in which no event runs is skipped without running the environment: the bench's
        state cannot change in it, so ``keep_going`` must depend on that state, not on the clock."""
        env = self.env
        if self.bench.realtime:
            while keep_going() and env.now < deadline:
                env.run(until=env.now + SLICE_REAL_S)
            return
        boundary = float(env.now)
        while keep_going():
            while True:
                if boundary >= deadline:
                    if env.now < boundary:
                        env.run(until=boundary)
                        env.step()  # SimPy leaves its spent stop event queued at ``now``, ahead of all else: drop it
                    return
                nxt = boundary + SLICE_VIRTUAL_S
                if env.peek() < nxt:
                    break
                boundary = nxt  # hot path: an empty slice is skipped without running the environment
            env.run(until=nxt)
            env.step()
            boundary = nxt

    # ------------------------------------------------------------------ acting
    def note(self, who: str, what: str, detail: str = "") -> None:
        self.actions.append(Action(self.now, who, what, detail))

    def supervise(self, action: str, reason: str = "") -> None:
        """A supervisor action through the adapter (recorded). Raises AdapterError when refused."""
        self.note("supervisor", action, reason)
        current = self.current_round()
        self.adapter.supervise(action, reason)
        if action == "cancel" and current:
            self.cancelled.append(current)

    def open_round(self, table_sees: bool = True) -> str:
        """Ask the server to open a round; wait until the server reports it open and (``table_sees``) the
        table's lamp shows betting open. Returns the server's round id. Raises BenchTimeout / AdapterError.

        On a bench whose server opens rounds itself (``server.opens_rounds: server``) nothing is asked: the round
        is the next one the server opened since the rig started that no earlier call returned (rounds 1, 2, ...
        from the first that opened after the scenario started), passing over a round whose OPEN the table's lamp
        heard too late to play it (:meth:`_server_opened`)."""
        server_opens = self.bench.server.opens_rounds == "server"
        before = self.adapter.round_events()
        known = set(self.opened) if server_opens else set(self._opened_before(before))  # a copy: opened() adds
        seen = 0 if server_opens else len(before)  # the event log only grows: later checks read what came after
        if not server_opens:
            self.supervise("open")
        found: list[str] = []

        def opened() -> bool:
            nonlocal seen
            events = self.adapter.round_events()
            self._opened_before(events)  # notes when each opening was first read
            found.extend(
                e.round_id for e in events[seen:] if e.kind == RoundEventKind.OPENED and e.round_id not in known
            )
            seen = len(events)
            return bool(found)

        lamp = self.emulated.lamp
        while True:
            self.run_until(opened, "the server to open a round")
            rid = found.pop(0)
            if not table_sees:
                break
            assert lamp is not None
            self.run_until(partial(self._lamp_decided, lamp, rid), f"the lamp to show betting open for round {rid}")
            if rid not in self._heard_late:
                break
            self.note("rig", "skip", f"round {rid}: the lamp heard its OPEN too late to play it")
        self.opened.append(rid)
        return rid

    def _lamp_decided(self, lamp: Lamp, rid: str) -> bool:
        """The lamp shows betting open for round ``rid``, or passed over its OPEN as heard too late."""
        return (rid in self.driver.rounds and lamp.state is LampState.BETTING_OPEN) or rid in self._heard_late

    def _opened_before(self, events: list[RoundEvent]) -> set[str]:
        """The ids of the rounds ``events`` (the cumulative log) reports opened: the rig's own set, brought up to
        date by reading only the events it has not read yet."""
        for event in events[self._opened_seen :]:
            if event.kind == RoundEventKind.OPENED:
                self._opened_ids.add(event.round_id)
                self._opened_at.setdefault(event.round_id, self.now)
        self._opened_seen = len(events)
        return self._opened_ids

    def unplug(self, device: str) -> None:
        """Pull the cable of one device line (a fault). Raises ValueError when the bench forbids faults or the
        line cannot be unplugged."""
        if not self.bench.faults_allowed:
            raise ValueError(f"bench {self.bench.name} does not allow faults (faults_allowed: false)")
        line = self.lines.get(self._line_of(device))
        unplug = getattr(line, "unplug", None)
        if unplug is None:
            raise ValueError(f"the {device} line of bench {self.bench.name} cannot be unplugged")
        self.note("harness", "unplug", device)
        unplug()

    def _line_of(self, device: str) -> str:
        """The name of the line that carries ``device`` (a device name, or a line name)."""
        for line in self.bench.lines:
            if device.lower() == line.name or device.upper() in (r.value for r in line.roles):
                return line.name
        return device.lower()

    def bet(self, player: str, bet_type: str, stake: int, *, lose_reply: bool = False) -> BetReply:
        """Send one bet now (recorded with whether the table had closed betting). Raises AdapterError only
        when the server cannot be reached."""
        client_id = f"{player}-{len(self.sent) + 1}"
        closed_rounds = self._closed_at_table()
        self.note(player, "bet", f"{bet_type} {stake}{' (reply lost)' if lose_reply else ''}")
        reply = self.adapter.place_bet(player, client_id, bet_type, stake, lose_reply=lose_reply)
        # Judged for the round the server put the bet in: was betting already closed at the table for that
        # round when the bet left? (A round the table has not seen open yet cannot have been closed there.)
        sim = self.driver.rounds.get(reply.round_id) if reply.round_id else None
        self.sent.append(SentBet(reply, sim is not None and sim in closed_rounds))
        return reply

    def _closed_at_table(self) -> set[int]:
        """The simulator rounds whose betting the table has seen closed, now."""
        self._index_truth()
        return self._closed_rounds

    def _index_truth(self) -> None:
        """Index the ground-truth events not indexed yet (the log only grows)."""
        log = self.truth
        for event in log[self._truth_seen :]:
            if isinstance(event, BettingClosed):
                self._closed_rounds.add(event.round)
            elif isinstance(event, RoundEnded):
                self._table_ends.setdefault(event.round, event)
        self._truth_seen = len(log)

    def _start_crowd_timer(self) -> None:
        """Virtual time: forward the crowd's bets on the grid of :data:`SLICE_VIRTUAL_S` from now, as a polling
        loop would, but only at the grid points after a bet was planned."""
        timer = GridTimer(self.env, SLICE_VIRTUAL_S, self._forward_new_bets)

        def watch(event: Event) -> None:
            if isinstance(event, BetSent):
                timer.arm_at(float(self.env.now))

        self.emulated.watchers.append(watch)
        timer.start()

    def _forward_new_bets(self, _now: float) -> None:
        log = self.emulated.model.log.events
        new = log[self._crowd_seen :]
        self._crowd_seen = len(log)
        for event in new:
            if isinstance(event, BetSent):
                self.env.process(self._deliver(event))

    def _forward_crowd(self) -> Generator[simpy.Event, Any, None]:
        """Send the simulator crowd's bets to the server when they arrive (random-crowd runs)."""
        while True:
            self._forward_new_bets(float(self.env.now))
            yield self.env.timeout(SLICE_REAL_S if self.bench.realtime else SLICE_VIRTUAL_S)

    def _deliver(self, event: BetSent) -> Generator[simpy.Event, Any, None]:
        yield self.env.timeout(max(event.arrives - self.env.now, 0.0))
        try:
            self.adapter.connect(event.player)
            self.bet(event.player, str(event.bet), event.stake)
        except AdapterError as exc:
            self.note(event.player, "bet failed", str(exc))

    # ------------------------------------------------------------------ reading
    @property
    def truth(self) -> list[Event]:
        return self.emulated.model.log.events

    def current_round(self) -> str:
        return self.opened[-1] if self.opened else ""

    def round_id(self, ordinal: int) -> str:
        """The server id of the ``ordinal``-th round this rig opened (1-based). Raises KeyError."""
        for rid, n in self.driver.rounds.items():
            if n == ordinal:
                return rid
        raise KeyError(f"round {ordinal} has not been opened (opened: {len(self.driver.rounds)})")

    def server_end(self, rid: str) -> RoundEvent | None:
        """The server's first event that ended round ``rid``, if any yet."""
        events = self.adapter.round_events()  # cumulative: only the events not indexed yet are read
        for event in events[self._events_seen :]:
            if event.ends_round:
                self._server_ends.setdefault(event.round_id, event)
        self._events_seen = len(events)
        return self._server_ends.get(rid)

    def table_end(self, rid: str) -> RoundEnded | None:
        """The table's verdict on the simulator round the server calls ``rid``, if any yet."""
        sim = self.driver.rounds.get(rid)
        if sim is None:
            return None
        self._index_truth()
        return self._table_ends.get(sim)

    def play_to_end(self, rid: str) -> RoundEvent:
        """Run until the server ends round ``rid``, then until the table has cleared it too (bounded)."""
        self.run_until(lambda: self.server_end(rid) is not None, f"the server to end round {rid}")
        # the server may end the round itself (cancel, void by lamp): then the table is cleared without a verdict
        with contextlib.suppress(BenchTimeout):
            self.run_until(lambda: self.table_end(rid) is not None, "the table's verdict", timeout_s=0.5)
        end = self.server_end(rid)
        assert end is not None
        return end

    def observation(self) -> Observation:
        """Everything the oracle needs, read from the server now."""
        records = {p: self.adapter.bet_record(p) for p in self.opening}
        balances = {p: self.adapter.balance(p) for p in self.opening}
        return Observation(
            truth=tuple(self.truth),
            rounds=dict(self.driver.rounds),
            server_events=tuple(self._judged_events()),
            records=records,
            balances=balances,
            opening=dict(self.opening),
            sent=tuple(s for s in self.sent if s.reply.player_id in self.opening),
            supervisor_cancelled=tuple(self.cancelled),
            server_clock_is_sim=self.adapter.clock_is_sim_time,
        )

    def verdict(self) -> Verdict:
        return judge(self.observation())

    def _server_opened(self, round_id: str) -> bool:
        """Whether the table's lamp takes the OPEN of ``round_id``: the server reported it opened since the rig
        started (True when it cannot be asked, a server being restarted, so a round is never hidden from the table
        by a failed read). On a bench whose server opens rounds itself, not when the OPEN reaches the lamp more than
        half the betting period after the rig first read the opening: the lamp was still working through the
        commands the server queued while no table listened (between scenarios), and the dealer would start that
        round's shake at its close; the rig passes over such a round (:meth:`open_round`)."""
        try:
            events = self.adapter.round_events()
        except AdapterError:
            return True
        if round_id not in self._opened_before(events):
            return False
        late = self.now - self._opened_at[round_id] > self.bench.timing.betting_s / 2
        if late and self.bench.server.opens_rounds == "server" and round_id not in self.opened:
            self._heard_late.add(round_id)
            return False
        return True

    def _judged_events(self) -> list[RoundEvent]:
        """The server's round events the oracle judges: all of them, except, on a bench whose server opens rounds
        itself, those of a round still in play that the run never took (the server's timer opened it after the
        run's last round; it is not the run's to judge yet)."""
        events = self.adapter.round_events()
        if self.bench.server.opens_rounds != "server":
            return events
        ended = {e.round_id for e in events if e.ends_round}
        return [e for e in events if e.round_id in ended or e.round_id in self.opened]
