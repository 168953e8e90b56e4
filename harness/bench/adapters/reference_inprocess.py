"""The reference server in the bench's own process, in SimPy virtual time: the in-process bench's adapter.

The gameserver's pure round engine runs with its clock injected (``env.now``); its own protocol decoder and
server link (``gameserver.protocol``, ``gameserver.link``) read the device lines, which are in-memory byte pipes,
and each line's ``gameserver.device_clock.DeviceClock`` turns a frame's device time into sim time:
table events travel as encoded frames through both codecs, as on a real bench. A SimPy process services the
lines every :data:`SERVICE_S` sim seconds, feeds reports to the engine, ticks it, stores its events in an
in-memory ledger and sends the lamp commands the events call for (``gameserver.gateway.lamp_command``).

Fault injection's interface (``harness.faults.fault_adapters``): :meth:`InProcessAdapter.kill_server` stops the
server as a kill -9 would (only the ledger survives), :meth:`InProcessAdapter.restart_server` starts a new one on
the ledger, :attr:`InProcessAdapter.server_up` says which; every player and supervisor call fails with
``unreachable`` in between.

It is the one harness module that imports ``gameserver``; the import contracts keep ``gameserver`` out of the judge,
the shared records, the errors and the wire (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping
from dataclasses import replace
from typing import Any

import simpy

from gameserver.device_clock import DeviceClock
from gameserver.engine import RoundEngine
from gameserver.events import ReportKind, TableReport
from gameserver.gateway import lamp_command, timed_report
from gameserver.ledger import InMemoryLedger
from gameserver.link import ServerLink
from gameserver.model import EngineConfig, Rejection
from gameserver.protocol import Decoder
from harness.bench.adapters.base import GameServerAdapter, ServerSetup
from harness.bench.adapters.reference_events import bet_row, round_event
from harness.errors import AdapterError
from harness.records import BetRecordRow, BetReply, DeviceRole, RoundEvent
from harness.wire.transports.base import Transport, TransportClosed

SERVICE_S = 0.005  # sim seconds between two services of the device lines


class _Port:
    def __init__(self, name: str, transport: Transport, now: float, silence_s: float) -> None:
        self.name = name
        self.transport = transport
        self.link = ServerLink(name, now, silence_s)
        self.decoder = Decoder()
        self.clock = DeviceClock()  # the line's device time -> sim time (protocol 1.2 ``at``)


class InProcessAdapter(GameServerAdapter):
    """The reference round engine on the bench's SimPy environment, reading its in-memory device lines through the
    server's own codec and link; round events are dated in sim time (:attr:`clock_is_sim_time`).

    :meth:`kill_server` stops the server as a kill -9 would (only the ledger survives), :meth:`restart_server`
    starts a new one on the ledger (a round in progress is cancelled, ERR-3), :attr:`server_up` says which; every
    player and supervisor call raises ``AdapterError("unreachable")`` in between.
    """

    clock_is_sim_time = True  # the engine's clock is ``env.now``

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._engine: RoundEngine | None = None
        self._ledger = InMemoryLedger()
        self._ports: list[_Port] = []
        self._events: list[RoundEvent] = []
        self._connected: set[str] = set()
        self._env: simpy.Environment | None = None
        self._next_bet = 0
        self._heartbeat_s = 3.0
        self._up = True
        self._generation = 0  # bumped by each kill: a line service started before it stops

    # ------------------------------------------------------------------ lifecycle
    def start(self, setup: ServerSetup) -> None:
        env = self._env = setup.env
        config = EngineConfig(
            betting_s=setup.betting_s,
            round_gap_s=setup.round_gap_s,
            auto_open=False,
            reshake_cap=setup.reshake_cap,
            pause_timeout_s=setup.pause_timeout_s,
            result_timeout_s=setup.result_timeout_s,
        )
        self._engine = RoundEngine(config, lambda: float(env.now))
        for player in setup.players:
            self._engine.open_wallet(player.player_id, player.balance)
        for name, transport in setup.devices.items():
            if not isinstance(transport, Transport):
                raise AdapterError("bad_setup", f"device {name}: the in-process server needs a transport object")
            self._ports.append(_Port(name, transport, env.now, setup.heartbeat_s))
        self._heartbeat_s = setup.heartbeat_s
        self._flush()
        env.process(self._serve())

    def stop(self) -> None:
        for port in self._ports:
            port.transport.close()

    @property
    def engine(self) -> RoundEngine:
        """The running server's round engine (after :meth:`kill_server`: the dead one's, no longer ticked).

        Raises:
            AdapterError: ``not_started`` before :meth:`start`.
        """
        if self._engine is None:
            raise AdapterError("not_started", "the in-process server was not started")
        return self._engine

    # ------------------------------------------------------------------ kill -9 and restart
    @property
    def server_up(self) -> bool:
        """False between :meth:`kill_server` and :meth:`restart_server`, True otherwise."""
        return self._up

    @property
    def can_restart(self) -> bool:
        """Always True: this adapter owns the server (an engine in this process), so :meth:`kill_server` and
        :meth:`restart_server` really kill it and bring it back on its ledger."""
        return True

    def kill_server(self) -> None:
        """Stop the server as a kill -9 would: only the ledger survives (everything the engine committed, as a
        SQLite WAL would hold it). The device lines are not serviced from the next service step on, every
        player's session is dropped, and until :meth:`restart_server` every player and supervisor call raises
        ``AdapterError("unreachable")`` (:meth:`disconnect` still works). Killing a dead server changes nothing
        more."""
        self._up = False
        self._generation += 1
        self._connected.clear()

    def restart_server(self) -> None:
        """Start a new server on the ledger, as a new process would: the engine is rebuilt from the ledger's
        snapshot and applies the restart policy (``recover_after_restart``: a round in progress is cancelled and
        refunded; its events are recorded), every device line gets a fresh link, decoder and device clock (no
        clock offset learnt yet), and the lines are serviced again. Players must connect again. Does nothing
        while the server is up.

        Raises:
            AdapterError: ``not_started`` when :meth:`start` never ran.
        """
        if self._up:
            return
        env = self._env
        if env is None or self._engine is None:
            raise AdapterError("not_started", "the in-process server was not started")
        engine = RoundEngine(self._engine.config, lambda: float(env.now), self._ledger.snapshot())
        engine.recover_after_restart()
        self._engine = engine
        now = float(env.now)
        for port in self._ports:
            port.link = ServerLink(port.name, now, self._heartbeat_s)
            port.decoder = Decoder()
            port.clock = DeviceClock()  # a restarted server has learnt no line's clock offset yet
        self._up = True
        self._flush()
        env.process(self._serve())

    def _require_up(self) -> None:
        if not self._up:
            raise AdapterError("unreachable", "the server is down (killed)")

    # ------------------------------------------------------------------ the device lines
    def _serve(self) -> Generator[simpy.Event, Any, None]:
        """Service the lines every :data:`SERVICE_S` until the server is killed (a later restart starts a new
        service; this one stops at its next step)."""
        assert self._env is not None
        env = self._env
        generation = self._generation
        while self._up and generation == self._generation:
            now = float(env.now)
            for port in self._ports:
                self._service(port, now)
            self.engine.tick()
            self._flush()
            for port in self._ports:
                self._write(port)
            yield env.timeout(SERVICE_S)

    def _service(self, port: _Port, now: float) -> None:
        try:
            data = port.transport.read(0.0)
        except TransportClosed:
            data = b""
        for item in port.decoder.feed(data) if data else ():
            frame = port.link.receive(item, now)
            report = None if frame is None else timed_report(port.name, frame, port.clock, now)
            if report is not None:
                self.engine.report(report)
        if port.link.tick(now):
            self.engine.report(TableReport(ReportKind.PROBLEM, port.name, detail="link down: device silent"))
        self._write(port)

    @staticmethod
    def _write(port: _Port) -> None:
        out = port.link.take_output()
        if out:
            with contextlib.suppress(TransportClosed):  # an unplugged line loses the bytes; the link retransmits
                port.transport.write(out)

    def _flush(self) -> None:
        events = self.engine.drain()
        if not events:
            return
        self._ledger.append(events)
        now = float(self._env.now) if self._env is not None else 0.0
        for event in events:
            normal = round_event(event.to_json())
            if normal is not None:
                self._events.append(normal)
            cmd = lamp_command(event)
            if cmd is not None:
                for port in self._ports:
                    if port.name == DeviceRole.LAMP or port.link.peer == "LAMP":
                        port.link.send(cmd[0], cmd[1], now)

    # ------------------------------------------------------------------ players and supervisor
    def connect(self, player_id: str) -> None:
        self._require_up()
        if self.engine.wallets.get(player_id) is None:
            raise AdapterError("unknown_player", f"no wallet for {player_id!r}")
        self._connected.add(player_id)

    def disconnect(self, player_id: str) -> None:
        self._connected.discard(player_id)

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        self._require_up()
        if player_id not in self._connected:
            raise AdapterError("not_connected", f"player {player_id!r} is not connected")
        base = BetReply(player_id, client_bet_id, bet_type, stake, accepted=False, confirmed=not lose_reply)
        try:
            ack, _replayed = self.engine.place_bet(player_id, client_bet_id, bet_type, stake)
        except Rejection as exc:
            self._flush()
            return replace(base, code=exc.code)
        finally:
            if lose_reply:
                self._connected.discard(player_id)
        self._flush()
        return replace(
            base,
            accepted=True,
            bet_id=str(ack.bet_id),
            round_id=str(ack.round_id),
            balance_before=ack.balance_before,
            balance_after=ack.balance_after,
        )

    def supervise(self, action: str, reason: str = "") -> None:
        self._require_up()
        engine = self.engine
        try:
            if action == "open":
                engine.open_round()
            elif action == "pause":
                engine.pause(reason)
            elif action == "resume":
                engine.resume()
            elif action == "cancel":
                engine.cancel(reason)
            else:
                raise AdapterError("unknown_action", f"unknown supervisor action {action!r}")
        except Rejection as exc:
            raise AdapterError(exc.code, exc.message) from None
        finally:
            self._flush()

    # ------------------------------------------------------------------ records
    def round_events(self) -> list[RoundEvent]:
        self._require_up()
        return list(self._events)

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        self._require_up()
        return [bet_row(bet.record(rnd)) for bet, rnd in self._ledger.bets(player_id)]

    def balance(self, player_id: str) -> int:
        self._require_up()
        value = self._ledger.balance(player_id)
        if value is None:
            raise AdapterError("unknown_player", f"no wallet for {player_id!r}")
        return value
