"""A rig: one bench wired up for one scenario (or one ``xocdia-hil run``).

It builds the SimPy environment (virtual time for the in-process bench, the real-time bridge otherwise), the
emulated table and its five devices on the bench's transport (each line traced in both directions), and the game
server through its adapter; it then lets steps open rounds, place bets, act as supervisor and wait for the server,
and it keeps what the oracle needs (ground truth, the harness's own actions, what the server said).

Round numbers: the lamp device numbers rounds in the order the server opens them (1, 2, ...), whatever ids the
server uses, so a script for "round 1" applies to the first round a scenario opens. A round's opening is taken
from whichever comes first, the lamp's OPEN or the server's report, and the other is reconciled with it when it
comes (:meth:`Rig._server_opened`).

What the table's devices send follows the declaration of each line's dialect
(:class:`~harness.wire.dialects.base.ProtocolCapabilities`): no round tags or event times where a line declares
none, and so on (:mod:`harness.bench.devices.declared`); a lamp whose line carries no betting time on OPEN shows
betting open until the server's CLOSE, announcing the bench's ``timing.betting_s`` as its close. Round ids are the
server's, text or numeric (up to 2³²−1): the rig only ever keys on them as strings.
"""

from __future__ import annotations

import contextlib
import gc
import tempfile
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Any, Self

import simpy

from harness.bench.adapters.base import GameServerAdapter, ServerSetup
from harness.bench.adapters.capabilities import ForgetsRoundEvents, Principals, Restartable, RoundRecords
from harness.bench.adapters.loader import load_adapter
from harness.bench.clock import SLICE_REAL_S, SLICE_VIRTUAL_S, BenchClock, BenchTimeout
from harness.bench.config import Bench
from harness.bench.crowd import CrowdForwarder, CrowdTally, seat_wallet
from harness.bench.devices.emulated import EmulatedTable
from harness.bench.devices.lamp import HeldOpen, OpenVerdict, OrdinalLampDriver
from harness.bench.round_index import ServerRounds, TableRounds
from harness.bench.wiring import wire_lines, wrap_device_ends
from harness.errors import AdapterError
from harness.files import load_profile
from harness.judge.oracle import Observation, SentBet, Verdict, judge
from harness.judge.stream import RoundPart, StreamingJudge
from harness.judge.timeline import Alteration, Kill, Timing
from harness.records import BetRecordRow, BetReply, PlayerSpec, RoundEvent, RoundEventKind
from harness.table_config import table_profile
from harness.wire.messages import Source
from harness.wire.realtime import SelectEnvironment
from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.base import Transport
from harness.wire.transports.capabilities import Pluggable
from harness.wire.transports.faults import FaultyTransport
from simulator.events import BetSent, Event, RoundEnded
from simulator.lamp import Lamp, LampState
from simulator.script import Script

__all__ = ["BUILD_HOOKS", "SLICE_REAL_S", "SLICE_VIRTUAL_S", "Action", "BenchTimeout", "Rig"]

BUILD_HOOKS: list[Callable[[Rig], None]] = []  # called with each rig :meth:`Rig.build` made, last (observers only)
HEAP_ROUNDS = 1000  # a long run's heap is collected and frozen every this many rounds opened (Rig.open_round)
JUDGE_ROUNDS = 1000  # a streamed run reads whole bet records at least this many rounds apart by default
JUDGE_SHARE = 4  # ... and at least 1/JUDGE_SHARE of the rounds played apart (reads cost the records so far)


@dataclass
class Action:
    """Something the harness did, at sim time ``t``: for the evidence and for the oracle."""

    t: float
    who: str
    what: str
    detail: str = ""


@dataclass
class Rig(BenchClock):
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
    paused: list[str] = field(default_factory=list)  # rounds the harness's supervisor paused
    opened: list[str] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)  # the harness's planned server kills
    corrections: dict[str, str] = field(default_factory=dict)  # corrections the server accepted: round -> faces
    alterations: list[Alteration] = field(default_factory=list)  # device reports the harness changed
    disconnects: list[tuple[str, str]] = field(default_factory=list)  # (player, round in play) the harness cut off
    timing: Timing | None = None  # what the server was configured with
    crowd_tally: CrowdTally = field(default_factory=CrowdTally)  # every crowd bet: accepted, refused, failed
    wallets_per_seat: int = 0  # > 0: a seat's k-th player bets from regular wallet (k - 1) % n + 1 (seat_wallet)
    _tmp: tempfile.TemporaryDirectory[str] | None = None
    _server_rounds: ServerRounds = field(default_factory=ServerRounds)
    _table_rounds: TableRounds = field(default_factory=TableRounds)
    _passed_over: set[str] = field(default_factory=set)  # server-opened rounds the table does not play (_server_opened)
    _watching: bool = False  # the watch over the lamp's held OPENs runs (_watch_held)
    _froze_heap: bool = False  # this rig froze the collector's heap (open_round); close unfreezes it
    _forwarder: CrowdForwarder | None = None  # delivers the crowd's bets from the table's log (build)
    _stream: _RoundStream | None = None  # the oracle fed round by round (stream_judging)
    _sent_before: int = 0  # bets sent and dropped from :attr:`sent` once judged (stream_judging)

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        bench: Bench,
        players: Mapping[str, int],
        script: list[dict[str, Any]] | None = None,
        crowd: int | None = None,
        seed: int | None = None,
        wallets_per_seat: int = 0,
    ) -> Rig:
        """Wire the bench up and start the server. ``wallets_per_seat`` > 0: the random crowd's players bet from
        their seat's regular wallets (:func:`~harness.bench.crowd.seat_wallet`; ``players`` must hold them), else
        each under the model's own name. Raises AdapterError, or an InputError (ProfileError, ScriptError, an adapter
        path that does not load) with a message naming what is wrong; nothing is left open on failure."""
        # validate everything before opening any port; the table's dealer follows the bench's table configuration
        profile = table_profile(load_profile(bench.profile), bench.table)
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
            until_close_s=bench.timing.betting_s,
        )
        assert emulated.lamp is not None
        driver = OrdinalLampDriver(emulated.lamp, emulated.lamp_until_close_s)
        emulated.driver = driver
        rig = cls(bench, env, emulated, adapter, recorder, dict(players), workdir, driver, lines, _tmp=tmp)
        rig.serial_ports = serial_ports
        rig.wallets_per_seat = wallets_per_seat
        rig.timing = Timing(
            bench.timing.betting_s,
            profile.table.pause_timeout,
            bench.table.result_timeout_s,
            profile.table.max_reshakes,
            adapter.service_step_s,
            reshake_count=bench.table.reshake_count,
            shakes_during_pause=bench.table.shakes_during_pause,
        )
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
            result_timeout_s=bench.table.result_timeout_s,
            heartbeat_s=bench.timing.heartbeat_s,
            auto_open=bench.server.opens_rounds == "server",
            table=bench.table,
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
            step = SLICE_REAL_S if bench.realtime else SLICE_VIRTUAL_S
            forwarder = CrowdForwarder(env, emulated.model.log, rig._send_crowd_bet, step)
            rig._forwarder = forwarder
            if bench.realtime:
                forwarder.start_polling()
            else:
                forwarder.start_on_log(emulated.watchers)
        for hook in BUILD_HOOKS:
            hook(rig)
        return rig

    def close(self) -> None:
        """Stop the server and release every port and temp file, and unfreeze the collector's heap if this rig froze
        it (``gc.unfreeze`` thaws every frozen object of the process, not only this rig's); never raises."""
        try:
            self.adapter.stop()
        finally:
            self.emulated.hub.close()
            if self._tmp is not None:
                self._tmp.cleanup()
                self._tmp = None
            if self._froze_heap:
                gc.unfreeze()
                self._froze_heap = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ acting
    def note(self, who: str, what: str, detail: str = "") -> None:
        self.actions.append(Action(self.now, who, what, detail))

    def alter(
        self, kind: str, source: str, message: str, round_tag: str | None = None, faces: str = "", line: str = ""
    ) -> Alteration:
        """Record that the harness changed what the server hears of the current round (for the judge:
        :class:`~harness.judge.timeline.Alteration`); the caller makes the change."""
        alteration = Alteration(self.current_round(), self.now, kind, source, message, round_tag, faces, line)
        self.alterations.append(alteration)
        return alteration

    def kill_server(self, kill: Callable[[], None], write: str = "") -> None:
        """Record a planned kill of the server (the rounds in play then, for the judge), then call ``kill``. In play:
        the rounds the rig opened (and, on a server that opens rounds itself, any other it opened) that the server
        has not ended, as the server says now when it is up (so the record never depends on when someone last read
        the server), else as last read (a dead server: a round it ended unread counts in play, and the judge then
        finds its end was not a cancellation made on restart).
        ``write``: what the server was writing when it died at a crash point (``kill`` then only takes note)."""
        index = self._server_rounds
        with contextlib.suppress(AdapterError):  # up: read its ends now, so in play never depends on who read last
            index.read_ends(self.adapter.round_events_since(index.ends_read))
            if self.bench.server.opens_rounds == "server":
                self._read_openings()
        # a server that opens rounds itself may have opened one no step asked for: in play too, in opening order
        mine = set(self.opened)
        theirs = [rid for rid in index.opened_at if rid not in mine and rid in index.opened]
        ended = index.ends
        in_play = tuple(rid for rid in (*self.opened, *theirs) if rid not in ended)
        self.kills.append(Kill(self.now, in_play, write))
        detail = ", ".join(f"round {r} in play" for r in in_play) + (f"; died writing {write}" if write else "")
        self.note("harness", "kill -9 the server", detail)
        kill()

    def player_disconnected(self, player: str, detail: str = "") -> None:
        """Record that the harness cut ``player`` off during the current round (DC-1..DC-3, for the judge); the
        caller cuts the link."""
        self.note(player, "disconnected", detail)
        self.disconnects.append((player, self.current_round()))

    def corrected(self, round_id: str, faces: str) -> None:
        """Record a correction of ``round_id`` to ``faces`` that the server accepted (COR-1, for the judge)."""
        self.corrections[round_id] = faces

    def supervise(self, action: str, reason: str = "") -> None:
        """A supervisor action through the adapter (recorded). Raises AdapterError when refused."""
        self.note("supervisor", action, reason)
        current = self.current_round()
        self.adapter.supervise(action, reason)
        if action == "cancel" and current:
            self.cancelled.append(current)
        elif action == "pause" and current:
            self.paused.append(current)

    def open_round(self, table_sees: bool = True) -> str:
        """Ask the server to open a round; wait until the server reports it open and (``table_sees``) the
        table's lamp shows betting open. Returns the server's round id. Raises BenchTimeout / AdapterError.

        Either evidence of the opening may come first: the lamp's OPEN (held until the server's report of the
        opening comes, then shown as of its arrival) or that report (the OPEN is shown when it comes); see
        :meth:`_server_opened`.

        On a bench whose server opens rounds itself (``server.opens_rounds: server``) nothing is asked: the round
        is the next one the server opened since the rig started that no earlier call returned (rounds 1, 2, ...
        from the first that opened after the scenario started), passing over a round whose OPEN and opening report
        came too far apart for the table to play it (:meth:`_server_opened`)."""
        server_opens = self.bench.server.opens_rounds == "server"
        found: list[str] = []
        if server_opens:
            known = set(self.opened)
            seen = 0

            def opened() -> bool:
                nonlocal seen
                events = self.adapter.round_events()
                self._opened_before(events)  # notes when each opening was first read
                found.extend(
                    e.round_id for e in events[seen:] if e.kind == RoundEventKind.OPENED and e.round_id not in known
                )
                seen = len(events)
                return bool(found)

        else:
            index = self._server_rounds
            self._read_openings()
            start = index.openings_read  # the log only grows: the round asked for opens after this place
            taken = len(index.openings)

            def opened() -> bool:  # the OPENED events after ``start`` of rounds not opened before it
                nonlocal taken
                self._read_openings()  # notes when each opening was first read
                new = index.openings[taken:]
                taken += len(new)
                found.extend(rid for _place, rid in new if index.first_opening[rid] >= start)
                return bool(found)

            self.supervise("open")

        lamp = self.emulated.lamp
        while True:
            self.run_until(opened, "the server to open a round")
            rid = found.pop(0)
            if not table_sees:
                break
            assert lamp is not None
            self.run_until(partial(self._lamp_decided, lamp, rid), f"the lamp to show betting open for round {rid}")
            if rid not in self._passed_over:
                break
            self.note("rig", "skip", f"round {rid}: its OPEN and the server's report of it came too far apart to play")
        self.opened.append(rid)
        if len(self.opened) % HEAP_ROUNDS == 0:
            self._freeze_heap()
        return rid

    def _freeze_heap(self) -> None:
        """Collect, then freeze, the cyclic garbage collector's heap (every :data:`HEAP_ROUNDS` rounds of a long
        run): what the run keeps (ground truth, ledger, records) then lies outside the collector's generations, so
        its automatic full collections scan only what came since, and their cost a round stays flat in the run's
        length instead of growing with the heap. Garbage cycles are collected before each freeze; :meth:`close`
        unfreezes. Nothing the run observes depends on when the collector runs."""
        gc.collect()
        gc.freeze()
        self._froze_heap = True

    def _lamp_decided(self, lamp: Lamp, rid: str) -> bool:
        """The lamp shows betting open for round ``rid``, or the rig passed that round over (:meth:`_server_opened`)."""
        return (rid in self.driver.rounds and lamp.state is LampState.BETTING_OPEN) or rid in self._passed_over

    def _opened_before(self, events: list[RoundEvent]) -> set[str]:
        """The ids of the rounds ``events`` (the cumulative log) reports opened (the rig's own set, kept up to date);
        the lamp's held OPENs are then reconciled with it (:meth:`_reconcile_held`)."""
        opened = self._server_rounds.read_openings(events, self.now)
        self._reconcile_held()
        return opened

    def _read_openings(self) -> set[str]:
        """:meth:`_opened_before`, reading only the server's events since the last read. Raises AdapterError."""
        index = self._server_rounds
        opened = index.read_new_openings(self.adapter.round_events_since(index.openings_read), self.now)
        self._reconcile_held()
        return opened

    def _pass_window_s(self) -> float:
        """On a bench whose server opens rounds itself, how far apart (seconds) a round's OPEN on the lamp line and
        the rig's first read of the server's report that it opened may come, in either order, for the table to
        play that round: half of ``timing.betting_s``."""
        return self.bench.timing.betting_s / 2

    def _hold_until(self, held: HeldOpen) -> float:
        """Until when (bench time) the lamp holds ``held`` for the server's report of its round's opening: its
        betting deadline, and on a bench whose server opens rounds itself no later than :meth:`_pass_window_s`
        after its arrival."""
        if self.bench.server.opens_rounds != "server":
            return held.deadline
        return min(held.deadline, held.at + self._pass_window_s())

    def _reconcile_held(self) -> None:
        """Settle each OPEN the lamp holds against the server's openings as last read: one whose round the server
        reported opened is shown as of its arrival (:meth:`OrdinalLampDriver.show_held`) while its hold lasts
        (:meth:`_hold_until`) and no other command for its round came meanwhile; any other whose round was reported,
        or whose hold is over, is let go, and on a bench whose server opens rounds itself its round is passed over
        (:meth:`open_round` never waits for the table to play it). Never raises."""
        driver = self.driver
        if not driver.held:
            return
        opened, now = self._server_rounds.opened, self.now
        server_opens = self.bench.server.opens_rounds == "server"
        for rid, held in list(driver.held.items()):
            in_time = now <= self._hold_until(held)
            if rid in opened and in_time and not held.overtaken:
                driver.show_held(rid)
            elif rid in opened or not in_time:
                driver.drop_held(rid)
                if server_opens and rid not in self.opened:
                    self._passed_over.add(rid)

    def _watch_held(self) -> Generator[simpy.Event, object, None]:
        """While the lamp holds an OPEN: every slice (:data:`SLICE_VIRTUAL_S`, :data:`SLICE_REAL_S` in real time),
        read the server's openings (a failed read is taken as no news) and reconcile the held OPENs with them, so a
        held OPEN is shown, or let go, within a slice of the report or of its hold's end, whatever step is running.
        Ends when none is held."""
        step = SLICE_REAL_S if self.bench.realtime else SLICE_VIRTUAL_S
        try:
            while self.driver.held:
                yield self.env.timeout(step)
                try:
                    self._read_openings()
                except AdapterError:
                    self._reconcile_held()
        finally:
            self._watching = False

    def unplug(self, device: str) -> None:
        """Pull the cable of one device line (a fault). Raises ValueError when the bench forbids faults or the
        line's device end cannot be unplugged (it is not :class:`~harness.wire.transports.capabilities.Pluggable`)."""
        if not self.bench.faults_allowed:
            raise ValueError(f"bench {self.bench.name} does not allow faults (faults_allowed: false)")
        line = self.lines.get(self._line_of(device))
        if not isinstance(line, Pluggable):
            raise ValueError(f"the {device} line of bench {self.bench.name} cannot be unplugged")
        self.note("harness", "unplug", device)
        line.unplug()

    def _line_of(self, device: str) -> str:
        """The name of the line that carries ``device`` (a device name, or a line name)."""
        for line in self.bench.lines:
            if device.lower() == line.name or device.upper() in (r.value for r in line.roles):
                return line.name
        return device.lower()

    def bet(
        self, player: str, bet_type: str, stake: int, *, lose_reply: bool = False, round_id: str | None = None
    ) -> BetReply:
        """Send one bet now (recorded with whether the table had closed betting); ``round_id``: the bet names that
        round (:meth:`~harness.bench.adapters.base.GameServerAdapter.place_bet_for_round`). Raises AdapterError only
        when the server cannot be reached (``not_supported`` when the adapter cannot name a round)."""
        client_id = f"{player}-{self._sent_before + len(self.sent) + 1}"
        named = "" if round_id is None else f" naming round {round_id}"
        self.note(player, "bet", f"{bet_type} {stake}{named}{' (reply lost)' if lose_reply else ''}")
        return self.send(player, client_id, bet_type, stake, lose_reply=lose_reply, round_id=round_id)

    def send(
        self,
        player: str,
        client_id: str,
        bet_type: str,
        stake: int,
        *,
        lose_reply: bool = False,
        round_id: str | None = None,
    ) -> BetReply:
        """Send one bet with this client bet id (a retry when it was sent before) and record it for the judge: its
        reply, when it left, the round in play and whether the table had closed betting. Raises AdapterError when
        the server could not take it; when the server answered that it failed (``unavailable``: its engine stopped)
        the bet is recorded first, as refused with that code (a retry of a confirmed bet must not fail, IDEM-1)."""
        closed_rounds = self._closed_at_table()
        sent_at, in_play = self.now, self.current_round()
        try:
            if round_id is None:
                reply = self.adapter.place_bet(player, client_id, bet_type, stake, lose_reply=lose_reply)
            else:
                reply = self.adapter.place_bet_for_round(player, client_id, bet_type, stake, round_id)
        except AdapterError as exc:
            if exc.code == "unavailable":
                failed = BetReply(player, client_id, bet_type, stake, False, not lose_reply, code=exc.code)
                self.sent.append(SentBet(failed, False, sent_at, in_play))
            raise
        # Judged for the round the server put the bet in: was betting already closed at the table for that
        # round when the bet left? (A round the table has not seen open yet cannot have been closed there.)
        sim = self.driver.rounds.get(reply.round_id) if reply.round_id else None
        self.sent.append(SentBet(reply, sim is not None and sim in closed_rounds, sent_at, in_play))
        return reply

    def _closed_at_table(self) -> set[int]:
        """The simulator rounds whose betting the table has seen closed, now."""
        self._table_rounds.read(self.emulated.model.log)
        return self._table_rounds.closed

    def _send_crowd_bet(self, event: BetSent) -> None:
        """Send one of the crowd's bets (at its arrival time) from the player's wallet, and count it in
        :attr:`crowd_tally`; a bet the server cannot take is noted and counted as failed, not raised."""
        player = seat_wallet(event.player, self.wallets_per_seat) if self.wallets_per_seat else event.player
        in_play = self.current_round()
        try:
            self.adapter.connect(player)
            reply = self.bet(player, event.bet.value, event.stake)  # the member's own string, shared by every bet
        except AdapterError as exc:
            self.note(player, "bet failed", str(exc))
            self.crowd_tally.failed_with(in_play, exc.code)
        else:
            self.crowd_tally.replied(in_play, reply)

    # ------------------------------------------------------------------ reading
    @property
    def truth(self) -> list[Event]:
        """The table's ground truth: every event it logged, except those a run judged round by round with ``drop``
        (:meth:`stream_judging`) has judged and forgotten."""
        return self.emulated.model.log.events

    def forget_truth(self, position: int) -> None:
        """Forget the table's events before ``position`` (of its log, :attr:`~simulator.eventlog.EventLog.end`),
        or before the first one the crowd's forwarder has not read yet, whichever is earlier; the table-round index
        reads the whole log first."""
        log = self.emulated.model.log
        self._table_rounds.read(log)
        upto = position if self._forwarder is None else min(position, self._forwarder.read_to)
        log.forget(upto)

    def forget_server_events(self, position: int) -> None:
        """Where the adapter can (:class:`~harness.bench.adapters.capabilities.ForgetsRoundEvents`), forget the
        server's round events before ``position`` (a position of
        :meth:`~harness.bench.adapters.base.GameServerAdapter.round_events_since`), or before the first one the
        rig's index of the server's rounds has not read yet, whichever is earlier."""
        if isinstance(self.adapter, ForgetsRoundEvents):
            index = self._server_rounds
            self.adapter.forget_round_events(min(position, index.openings_read, index.ends_read))

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
        index = self._server_rounds
        return index.read_ends(self.adapter.round_events_since(index.ends_read)).get(rid)

    def table_end(self, rid: str) -> RoundEnded | None:
        """The table's verdict on the simulator round the server calls ``rid``, if any yet."""
        sim = self.driver.rounds.get(rid)
        if sim is None:
            return None
        self._table_rounds.read(self.emulated.model.log)
        return self._table_rounds.ends.get(sim)

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
            timing=self.timing,
            kills=tuple(self.kills),
            corrections=dict(self.corrections),
            alterations=tuple(self.alterations),
            supervisor_paused=tuple(self.paused),
            reader_line=self.observation_reader_line(),
            disconnects=tuple(self.disconnects),
            access=tuple(self.adapter.access_log) if isinstance(self.adapter, Principals) else (),
        )

    def observation_reader_line(self) -> str:
        """The name of the line the reader's reports travel on ("" when the bench has none)."""
        return next((line.name for line in self.bench.lines if Source.READER in line.roles), "")

    def verdict(self) -> Verdict:
        """The oracle's verdict on everything so far: of the whole observation, or, judging round by round
        (:meth:`stream_judging`), of the rounds judged and every round left, with the balances read now."""
        if self._stream is not None:
            return self._stream.finish(self)
        return judge(self.observation())

    def stream_judging(self, keep_checks: bool = False, drop: bool = True, every: int | None = None) -> StreamingJudge:
        """Judge the run round by round from now on (call before the first round): :meth:`judge_ended` feeds the
        oracle each ended round, and :meth:`verdict` finishes it. ``drop``: a round's sent bets leave :attr:`sent`
        once judged, and as rounds are judged :attr:`actions` and the serial trace (:attr:`recorder`) are emptied
        and the table's events and the server's judged are forgotten (:meth:`forget_truth`,
        :meth:`forget_server_events`), so that what the rig keeps stays flat
        in the run's length (nothing else may read them: no tap, no evidence); ``keep_checks``: as
        :class:`~harness.judge.stream.StreamingJudge`'s; ``every``: the fewest rounds between two feeds
        (:meth:`judge_ended`). An adapter that reads one round's bets
        (:class:`~harness.bench.adapters.capabilities.RoundRecords`) has each round's rows read once, as the round
        is fed, and ``every`` defaults to 1; otherwise the whole bet records are read at each feed, and ``every``
        defaults to :data:`JUDGE_ROUNDS`. Raises ValueError after a round was opened, or for ``every`` < 1."""
        if self.opened:
            raise ValueError("stream_judging: call it before the first round")
        of_round = self.adapter.round_bet_record if isinstance(self.adapter, RoundRecords) else None
        if every is None:
            every = JUDGE_ROUNDS if of_round is None else 1
        if every < 1:
            raise ValueError(f"stream_judging: every must be >= 1 round, got {every}")
        judge_ = StreamingJudge(
            self.opening,
            server_clock_is_sim=self.adapter.clock_is_sim_time,
            timing=self.timing,
            reader_line=self.observation_reader_line(),
            keep_checks=keep_checks,
        )
        self._stream = _RoundStream(judge_, drop, every, of_round)
        return judge_

    def money(self) -> tuple[int, int]:
        """(every stake of the bets the server accepted, every amount the observed players' bet records returned):
        judging round by round, of the rounds judged (all of them once :meth:`verdict` is made), else read now.
        Raises AdapterError when the server cannot be read."""
        if self._stream is not None:
            return self._stream.staked, self._stream.returned
        staked = sum(s.reply.stake for s in self.sent if s.reply.accepted)
        return staked, sum(row.returned for p in self.opening for row in self.adapter.bet_record(p))

    def judge_ended(self) -> int:
        """Judging round by round (:meth:`stream_judging`): feed the oracle the rounds the table is done with (a
        later round has opened at the table) once a feed is due (``every`` rounds after the last; reading whole
        bet records, also :data:`JUDGE_SHARE`), and not while the server is down (a kill, before its restart).
        Returns how many rounds were fed (0 when not judging round by round). Raises AdapterError when the server
        cannot be read."""
        if self._stream is None:
            return 0
        return self._stream.feed_due(self)

    def _server_opened(self, round_id: str) -> OpenVerdict:
        """What the table's lamp does with the OPEN of ``round_id``, a round new to it, arriving now. The server's
        report of an opening and the OPEN on the lamp line travel apart (an adapter's events may come on another
        connection), so either may come first, and the rig takes the first and reconciles the other when it comes:

        - the server reported the round opened since the rig started: SHOW (also when the server cannot be asked,
          one being restarted, so a round is never hidden from the table by a failed read);
        - not yet: HOLD. The lamp keeps the OPEN (:attr:`OrdinalLampDriver.held`) and the rig watches the server's
          openings meanwhile (:meth:`_watch_held`); when the report comes within the hold (:meth:`_hold_until`: the
          OPEN's betting period, and half of ``timing.betting_s`` on a bench whose server opens rounds itself), the
          OPEN is shown as of its arrival, its betting closing its ``ms`` after it reached the lamp, so the dealer's
          timing is the server's (:meth:`_reconcile_held`). An OPEN whose round is never reported, left over from
          before the table was there (a round that opened before the rig started, its OPEN sent again), is let go
          at the hold's end, and the table never shows that round.

        On a bench whose server opens rounds itself the two must come within :meth:`_pass_window_s` of each other,
        in either order, or the rig passes over the round (PASS here; :meth:`open_round` skips it): an OPEN that
        reaches the lamp longer after the rig first read the opening comes from a lamp still working through the
        commands the server queued while no table listened (between scenarios), and the dealer would start that
        round's shake at its close; a report that comes longer after the OPEN leaves too little of its betting."""
        try:
            opened = self._read_openings()
        except AdapterError:
            return OpenVerdict.PASS if round_id in self._passed_over else OpenVerdict.SHOW
        if round_id in self._passed_over:  # (reading may have just passed it over: its held OPEN was overtaken)
            return OpenVerdict.PASS
        if round_id not in opened:
            if not self._watching:
                self._watching = True
                self.env.process(self._watch_held())
            return OpenVerdict.HOLD
        late = self.now - self._server_rounds.opened_at[round_id] > self._pass_window_s()
        if late and self.bench.server.opens_rounds == "server" and round_id not in self.opened:
            self._passed_over.add(round_id)
            return OpenVerdict.PASS
        return OpenVerdict.SHOW

    def _judged_events(self) -> list[RoundEvent]:
        """The server's round events the oracle judges: all of them, except, on a bench whose server opens rounds
        itself, those of a round still in play that the run never took (the server's timer opened it after the
        run's last round; it is not the run's to judge yet)."""
        events = self.adapter.round_events()
        if self.bench.server.opens_rounds != "server":
            return events
        ended = {e.round_id for e in events if e.ends_round}
        return [e for e in events if e.round_id in ended or e.round_id in self.opened]


@dataclass
class _RoundStream:
    """What the rig keeps to feed a :class:`~harness.judge.stream.StreamingJudge` round by round: how far it read
    the truth, the server's events, the bet records and the bets sent, and what it read of the rounds not fed yet.
    Only the rounds not yet fed are held. With ``of_round`` (the adapter's
    :class:`~harness.bench.adapters.capabilities.RoundRecords` read) each round's bets are read once, as it is fed;
    otherwise the whole bet records are read, at geometrically growing intervals, so that the reads cost linear
    work in all, and a row of a round already fed is fed late."""

    judge: StreamingJudge
    drop: bool
    every: int = JUDGE_ROUNDS
    of_round: Callable[[str], list[BetRecordRow]] | None = None
    returned: int = 0  # every amount the bet records returned, summed as rows are fed
    staked: int = 0  # every stake of the bets accepted, summed as they are fed
    _truth_read: int = 0
    _events_read: int = 0
    _rows_read: dict[str, int] = field(default_factory=dict)
    _sent_read: int = 0
    _kills_told: int = 0  # how many of the rig's kills the judge was told of
    _fed_at: int = 0  # rounds opened when the records were last read
    _fed: set[str] = field(default_factory=set)
    _rounds_read: int = 0  # how many of the lamp driver's rounds (a dict that only grows) were seen
    _waiting: dict[str, None] = field(default_factory=dict)  # rounds seen and not fed yet, in the driver's order
    _truth: dict[int, list[Event]] = field(default_factory=dict)
    _events: dict[str, list[RoundEvent]] = field(default_factory=dict)
    _rows: dict[str, dict[str, list[BetRecordRow]]] = field(default_factory=dict)
    _sent: dict[str, list[SentBet]] = field(default_factory=dict)
    _late: list[SentBet] = field(default_factory=list)  # bets naming no round, or a round already fed

    def feed_due(self, rig: Rig) -> int:
        played = len(rig.opened)
        share = 0 if self.of_round is not None else self._fed_at // JUDGE_SHARE
        if played - self._fed_at < max(self.every, share):
            return 0
        if isinstance(rig.adapter, Restartable) and not rig.adapter.server_up:
            return 0
        return self._feed(rig, final=False)

    def _read(self, rig: Rig) -> None:
        log = rig.emulated.model.log
        for event in log.since(self._truth_read):
            number = getattr(event, "round", None)
            if isinstance(number, int):
                self._truth.setdefault(number, []).append(event)
        self._truth_read = log.end
        new = rig.adapter.round_events_since(self._events_read)
        self._events_read += len(new)
        for said in new:
            self._events.setdefault(said.round_id, []).append(said)
        for player in rig.opening if self.of_round is None else ():
            record = rig.adapter.bet_record(player)
            for row in record[self._rows_read.get(player, 0) :]:
                if row.round_id in self._fed:
                    self.judge.feed_rows(player, [row])
                    self.returned += row.returned
                else:
                    self._rows.setdefault(row.round_id, {}).setdefault(player, []).append(row)
            self._rows_read[player] = len(record)
        for sent in rig.sent[self._sent_read :]:
            if sent.reply.player_id not in rig.opening:
                continue
            rid = sent.reply.round_id or sent.in_play
            if rid and rid not in self._fed:
                self._sent.setdefault(rid, []).append(sent)
            else:
                self._late.append(sent)
        self._sent_read = len(rig.sent)

    def _feed(self, rig: Rig, final: bool) -> int:
        self._read(rig)
        self.judge.know_kills(rig.kills[self._kills_told :])  # a kill between rounds is in no round's part
        self._kills_told = len(rig.kills)
        self._fed_at = len(rig.opened)
        table_round = max(self._truth, default=0)  # the table's latest round: the ones before are done
        rounds = rig.driver.rounds
        if len(rounds) > self._rounds_read:  # the new ones are the dict's last: read from its end, not its start
            new = list(islice(reversed(rounds), len(rounds) - self._rounds_read))
            self._waiting.update(dict.fromkeys(reversed(new)))
            self._rounds_read = len(rounds)
        order = [rid for rid in self._waiting if rid not in self._fed]
        if final:
            if rig.bench.server.opens_rounds == "server":  # a round the server's timer opened after the run's last
                taken = set(rig.opened)  # is not the run's to judge (Rig._judged_events)
                for rid in [r for r in self._events if r not in taken]:
                    if not any(e.ends_round for e in self._events[rid]):
                        del self._events[rid]
            order += [rid for rid in (*self._events, *self._rows, *self._sent) if rid not in self._fed]
        fed = 0
        for rid in dict.fromkeys(order):
            sim = rig.driver.rounds.get(rid)
            if not final and (sim is None or sim >= table_round or rig.server_end(rid) is None):
                continue
            self._feed_round(rig, rid, sim)
            fed += 1
        if self.drop:
            kept = [s for s in rig.sent[: self._sent_read] if (s.reply.round_id or s.in_play) not in self._fed]
            rig._sent_before += self._sent_read - len(kept)
            del rig.sent[: self._sent_read]
            rig.sent[:0] = kept
            self._sent_read = len(kept)
            rig.actions.clear()
            rig.recorder.records.clear()
            rig.forget_truth(self._truth_read)
            rig.forget_server_events(self._events_read)
        return fed

    def _feed_round(self, rig: Rig, rid: str, sim: int | None) -> None:
        self._fed.add(rid)
        if self.drop:
            rig._server_rounds.ends.pop(rid, None)
            if sim is not None:
                rig._table_rounds.ends.pop(sim, None)
        self._waiting.pop(rid, None)
        rows = self._rows.pop(rid, {})
        if self.of_round is not None:
            for row in self.of_round(rid):
                if row.player_id in rig.opening:
                    rows.setdefault(row.player_id, []).append(row)
        sent = self._sent.pop(rid, [])
        self.returned += sum(row.returned for record in rows.values() for row in record)
        self.staked += sum(s.reply.stake for s in sent if s.reply.accepted)
        access = rig.adapter.access_log if isinstance(rig.adapter, Principals) else ()
        self.judge.feed(
            RoundPart(
                round_id=rid,
                sim_round=sim,
                truth=tuple(self._truth.pop(sim, ())) if sim is not None else (),
                server_events=tuple(self._events.pop(rid, ())),
                records=rows,
                sent=tuple(sent),
                supervisor_cancelled=rid in rig.cancelled,
                supervisor_paused=rig.paused.count(rid),
                kills=tuple(k for k in rig.kills if rid in k.in_play),
                correction=rig.corrections.get(rid, ""),
                alterations=tuple(a for a in rig.alterations if a.round_id == rid),
                disconnects=tuple(dict.fromkeys(p for p, r in rig.disconnects if r == rid)),
                access=tuple(a for a in access if a.round_id == rid),
            )
        )

    def finish(self, rig: Rig) -> Verdict:
        """Feed every round left, then the run's verdict with the balances read now. Raises AdapterError."""
        self._feed(rig, final=True)
        balances = {p: rig.adapter.balance(p) for p in rig.opening}
        self.staked += sum(s.reply.stake for s in self._late if s.reply.accepted)
        access = rig.adapter.access_log if isinstance(rig.adapter, Principals) else ()
        return self.judge.finish(
            rig.opening,
            balances,
            sent=tuple(self._late),
            access=tuple(a for a in access if a.round_id not in self._fed),
            kills=tuple(k for k in rig.kills if not any(rid in self._fed for rid in k.in_play)),
        )
