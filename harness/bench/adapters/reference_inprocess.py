"""The reference server in the bench's own process, in SimPy virtual time: the in-process bench's adapter.

The gameserver's pure round engine runs with its clock injected (``env.now``); its own protocol decoder and
server link (``gameserver.protocol``, ``gameserver.link``) read the device lines, which are in-memory byte pipes,
and each line's ``gameserver.device_clock.DeviceClock`` turns a frame's device time into sim time:
table events travel as encoded frames through both codecs, as on a real bench. A grid timer
(:mod:`harness.bench.gridtimer`) services the lines on the grid of :data:`SERVICE_S` sim seconds, only at the points
where input arrived or a deadline is due: it feeds reports to the engine, ticks it, stores its events in the
server's SQLite ledger (``gameserver.sqlite_ledger``, a file in the rig's work folder, as the server process keeps
one; option ``ledger: memory`` keeps them in memory instead) and sends the lamp commands the events call for
(``gameserver.gateway.lamp_command``). Fault injection kills and restarts it (``harness.faults.fault_adapters``;
:class:`InProcessAdapter`), and a crash point makes it die inside a ledger write (:meth:`InProcessAdapter.arm_crash`).

The import contracts keep ``gameserver`` out of the judge, the shared records, the errors and the wire
(docs/architecture.md); this adapter and its line ends import it.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import simpy

from gameserver.config import Principal, ServerConfig
from gameserver.crash_points import CrashingConnection, ServerCrash, writes_end_of
from gameserver.engine import RoundEngine
from gameserver.events import Event, EventKind, ReportKind, TableReport
from gameserver.gateway import lamp_command
from gameserver.identity import IdentitySource, config_document
from gameserver.ledger import InMemoryLedger, Ledger
from gameserver.model import EngineConfig, Rejection
from gameserver.players import Sessions, bet_record
from gameserver.protocol import BadFrame
from gameserver.sqlite_ledger import LedgerError, SqliteLedger
from harness.bench.adapters.access_http import answer_of, http_ask, ws_answer
from harness.bench.adapters.base import GameServerAdapter, ServerSetup
from harness.bench.adapters.event_window import RoundEventWindow
from harness.bench.adapters.http_support import code_of, round_bets
from harness.bench.adapters.inprocess_api import AsgiHost, EngineFacade, Stream
from harness.bench.adapters.inprocess_port import EARLY_S, ServerPort
from harness.bench.adapters.reference_events import ROUND_KINDS, bet_row, round_event
from harness.bench.adapters.reference_identity import reported_identity
from harness.bench.gridtimer import GridTimer
from harness.errors import AdapterError
from harness.judge.access import AccessAction, AccessAnswer, AccessRequest
from harness.records import OPTIONAL_RECORD_FIELDS, BetRecordRow, BetReply, DeviceRole, RoundEvent
from harness.wire.transports.base import Transport, TransportClosed

__all__ = ["EARLY_S", "SERVICE_S", "InProcessAdapter", "ServerPort"]

SERVICE_S = 0.005  # sim seconds between two grid points of the line service
# the engine's event kinds that can be round events; every kind with a lamp command is one (``lamp_command``)
_ROUND_KINDS = frozenset(kind for kind in EventKind if kind.value in ROUND_KINDS)
_BET_ACCEPTED = EventKind.BET_ACCEPTED
LEDGERS = ("sqlite", "memory")  # the values of the ``ledger`` option
APIS = ("http", "direct")  # the values of the ``api`` option
SUPERVISOR = "bench-supervisor"  # the supervisor's id in the server's tokens (``api: http``)


class InProcessAdapter(GameServerAdapter):
    """The reference round engine on the bench's SimPy environment, reading its in-memory device lines through the
    server's own codec and link; round events are dated in sim time (:attr:`clock_is_sim_time`).

    :meth:`kill_server` stops the server as a kill -9 would (only the ledger survives), :meth:`restart_server`
    starts a new one on the ledger (a round in progress is cancelled, ERR-3), :attr:`server_up` says which; every
    player and supervisor call raises ``AdapterError("unreachable")`` in between. :meth:`arm_crash` makes the server
    die between two statements of the ledger write that ends a round (ATOM-1).

    Options: ``ledger``: ``sqlite`` (default: the server's own SQLite ledger in a file of the rig's work folder) or
    ``memory`` (``gameserver.ledger.InMemoryLedger``: no file, no crash points). ``api``: ``direct`` (default: the
    players' and the supervisor's calls go to the engine, past the API) or ``http``: they are requests to the
    server's own HTTP/WebSocket application (``gameserver.api``) over ASGI in this process
    (:mod:`harness.bench.adapters.inprocess_api`), each player with a token and the supervisor with its own, so
    request parsing, authentication and the endpoints run on every call; a player is connected while its event
    stream (``/v1/stream``) is open. Only with ``http`` does the adapter act as another principal
    (:class:`~harness.bench.adapters.capabilities.Principals`, :attr:`checks_credentials`). Round events, the
    device lines and the counts of ignored frames are read from the engine either way.
    """

    clock_is_sim_time = True  # the engine's clock is ``env.now``
    service_step_s = SERVICE_S  # its lines are serviced, and the engine ticked, on this grid
    bet_record_fields = frozenset(OPTIONAL_RECORD_FIELDS)  # GET /v1/players/{id}/bets serves both balances

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._engine: RoundEngine | None = None
        kind = str(self.options.get("ledger", "sqlite"))
        if kind not in LEDGERS:
            raise AdapterError("bad_option", f"server.options.ledger: {kind!r}; expected one of {', '.join(LEDGERS)}")
        self._ledger_kind = kind
        api = str(self.options.get("api", "direct"))
        if api not in APIS:
            raise AdapterError("bad_option", f"server.options.api: {api!r}; expected one of {', '.join(APIS)}")
        self._api = api
        self._host: AsgiHost | None = None  # the server's API (``api: http``); a new one after each restart
        self._dead_hosts: list[AsgiHost] = []  # hosts of killed servers, closed once no request runs on them
        self._tokens: dict[str, str] = {}  # player id -> token (``api: http``)
        self._boss = ""  # the supervisor's token
        self._streams: dict[str, Stream] = {}  # each connected player's open event stream (``api: http``)
        self.access_log: list[AccessAnswer] = []  # every answer of request_as, in order (Principals)
        self._ledger: Ledger = InMemoryLedger()
        self._ledger_path: Path | None = None
        self._writer: CrashingConnection | None = None  # the SQLite ledger's writing connection
        self._crash_at: tuple[int, int] | None = None  # (round, statements) of the armed crash point
        self.crash: ServerCrash | None = None  # the crash point the server died at, since the last arm_crash
        self.failure: str | None = None  # why the engine stopped (its ledger refused a write), until a restart
        self._ports: list[ServerPort] = []
        self._events = RoundEventWindow()
        self._connected: set[str] = set()
        self._sessions = Sessions()  # the server's own record of who is connected (gameserver/players.py)
        self._env: simpy.Environment | None = None
        self._next_bet = 0
        self._heartbeat_s = 3.0
        self._up = True
        self._timer: GridTimer | None = None  # services the lines; a new one after each restart
        self._logged = 0  # events in the ledger's log
        self.event_watchers: list[Callable[[], None]] = []  # called whenever new round events are recorded
        self._identity_config: dict[str, Any] = {}  # the server's configuration as its identity digests it
        self._identity: IdentitySource | None = None  # taken at the first identify() (not at every scenario start)

    # ------------------------------------------------------------------ lifecycle
    def start(self, setup: ServerSetup) -> None:
        env = self._env = setup.env
        try:
            config = EngineConfig(**setup.reference_engine())
        except ValueError as exc:  # a choice the engine refuses (docs/table-configuration.md)
            raise AdapterError("bad_setup", f"table: {exc}") from None
        if self._ledger_kind == "sqlite":
            self._ledger_path = setup.workdir / "ledger.sqlite"
            self._ledger = self._open_ledger()
        self._engine = RoundEngine(config, lambda: float(env.now))
        for player in setup.players:
            self._engine.open_wallet(player.player_id, player.balance)
        for name, transport in setup.devices.items():
            if not isinstance(transport, Transport):
                raise AdapterError("bad_setup", f"device {name}: the in-process server needs a transport object")
            self._ports.append(ServerPort(name, transport, setup.lines.get(name), env.now, setup.heartbeat_s))
        self._heartbeat_s = setup.heartbeat_s
        self._identity_config = _identity_config(config, setup)
        for port in self._ports:
            port.transport.notify(lambda port=port: self._on_input(port))  # type: ignore[misc]
        self._flush()
        if self._api == "http":
            self._boss = "boss-" + setup.workdir.name
            self._tokens = {p.player_id: f"tok-{i}-{setup.workdir.name}" for i, p in enumerate(setup.players)}
            self._host = self._new_host()
        self._start_service(env)

    def stop(self) -> None:
        for player in list(self._streams):
            self.disconnect(player)
        if self._host is not None:
            self._dead_hosts.append(self._host)
            self._host = None
        self._close_dead_hosts()
        for port in self._ports:
            port.transport.close()
        self._close_ledger()

    def _new_host(self) -> AsgiHost:
        """The server's API over the engine, as a starting server process builds it from its config: every player's
        token and the supervisor's."""
        principals = {token: Principal(pid, "player") for pid, token in self._tokens.items()}
        principals[self._boss] = Principal(SUPERVISOR, "supervisor")
        facade = EngineFacade(lambda: self.engine, lambda: self._ledger, self._flush_call, lambda: self.failure)
        return AsgiHost(facade, principals, dict, self._identity_body)

    def _close_dead_hosts(self) -> None:
        """Close the APIs of killed servers (a kill inside a request leaves its API to close after it)."""
        while self._dead_hosts and not self._dead_hosts[0].loop.is_running():
            self._dead_hosts.pop(0).close()

    def _open_ledger(self) -> Ledger:
        """Open the SQLite ledger file, its writer wrapped for crash points, as a starting server process does."""
        assert self._ledger_path is not None
        return SqliteLedger(self._ledger_path, wrap_writer=self._wrap_writer)

    def _wrap_writer(self, db: Any) -> CrashingConnection:
        self._writer = CrashingConnection(db)
        return self._writer

    def _close_ledger(self) -> None:
        """Close the SQLite ledger's connections (a dead process's are gone; what it committed stays)."""
        if isinstance(self._ledger, SqliteLedger):
            with contextlib.suppress(Exception):
                self._ledger.close()

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
        if self._timer is not None:
            self._timer.stop()
        self._connected.clear()  # a killed server runs no code for the connections it loses
        self._streams.clear()
        if self._host is not None:  # its API takes no more commands; closed once no request runs on it
            self._host.facade.stop()
            self._dead_hosts.append(self._host)
            self._host = None
            self._close_dead_hosts()
        self._crash_at = None
        self._close_ledger()

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
        if self._ledger_path is not None:
            self._ledger = self._open_ledger()
            self._events.reread(self._durable_events())
        engine = RoundEngine(self._engine.config, lambda: float(env.now), self._ledger.snapshot())
        engine.recover_after_restart()
        self._engine = engine
        self._sessions = Sessions()  # a new process: nobody is connected yet
        self.failure = None
        self._close_dead_hosts()
        if self._api == "http":
            self._host = self._new_host()  # the same tokens: a new process reads the same config
        now = float(env.now)
        for port in self._ports:
            port.reopen(now)
        self._up = True
        self._flush()
        self._start_service(env)

    def _durable_events(self) -> list[RoundEvent]:
        """The round events in the ledger's log (what a restarted server reports: what its ledger committed)."""
        out: list[RoundEvent] = []
        after, self._logged = 0, 0
        while page := self._ledger.events(after=after, limit=1000):
            for event in page:
                normal = round_event(event.to_json()) if event.kind in _ROUND_KINDS else None
                if normal is not None:
                    out.append(normal)
            after = page[-1].seq
            self._logged += len(page)
        return out

    # ------------------------------------------------------------------ crash points (ATOM-1)
    def arm_crash(self, round_id: str, after: int) -> None:
        """Arm a crash point: the server dies, as a kill -9 would, just before statement ``after + 1`` of the
        ledger write that records the end of round ``round_id`` (settled, void or cancelled) or a correction of it
        (statements: ``BEGIN``, each ``INSERT``/``UPDATE``, ``COMMIT``; :mod:`gameserver.crash_points`). Once it
        died, :attr:`crash` says where and the server is down as after :meth:`kill_server`; a write of ``after``
        statements or fewer completes, and the point is spent with :attr:`crash` None.

        Raises:
            AdapterError: ``not_supported`` with ``ledger: memory`` (no statements to die between).
        """
        if self._ledger_path is None:
            raise AdapterError("not_supported", "crash points need the SQLite ledger (server.options.ledger: sqlite)")
        if after < 0:
            raise AdapterError("bad_request", f"crash point after {after} statements: expected 0 or more")
        self._crash_at = (int(round_id), after)
        self.crash = None

    @property
    def crash_armed(self) -> bool:
        """True while an armed crash point waits for its write."""
        return self._crash_at is not None

    def _append(self, events: Sequence[Event]) -> bool:
        """Store ``events`` in the ledger, through the armed crash point when this write is its write. Returns
        False when the server died in it (it is then down: :meth:`kill_server`) or the ledger refused the write:
        memory and disk then disagree, and the engine stops as the server process's does (``gameserver.service``):
        the lines are no longer serviced and every later call fails ``unavailable`` (:attr:`failure`) until a
        restart rebuilds it from the ledger."""
        point, writer = self._crash_at, self._writer
        hit = point is not None and writes_end_of(events, point[0])
        if point is not None and writer is not None and hit:
            self._crash_at = None
            writer.arm(point[1])
        try:
            self._ledger.append(events)
        except ServerCrash as crash:
            self.crash = crash
            self.kill_server()
            return False
        except LedgerError as exc:
            self.failure = f"ledger write failed: {exc}"
            if self._timer is not None:
                self._timer.stop()
            return False
        finally:
            if writer is not None and writer.armed:
                writer.disarm()
        return True

    def _require_up(self) -> None:
        if not self._up:
            raise AdapterError("unreachable", "the server is down (killed)")

    def _require_running(self) -> None:
        """Up, and its engine still running (a call that changes something)."""
        self._require_up()
        if self.failure is not None:
            raise AdapterError("unavailable", f"the game engine is unavailable: {self.failure}")

    # ------------------------------------------------------------------ the device lines
    def _start_service(self, env: simpy.Environment) -> None:
        """Service the lines now and then on the grid ``now + k * SERVICE_S`` until the server is killed: at the
        next grid point after input arrives (the transports' ``notify``), and by the deadlines of the links, the
        engine and bytes the transports hold back. Between those, a service step would find nothing to do."""
        self._timer = GridTimer(env, SERVICE_S, self._service_all, keep_place=False)
        self._timer.start()

    def _service_all(self, now: float) -> None:
        """One service step: read and decode every line that is not idle (:meth:`ServerPort.idle`: servicing it would
        change nothing), run the links' and the engine's timers, record the engine's events, write what the links
        want written; then arm the next step."""
        ports = self._ports
        for port in ports:
            if not port.idle(now):
                self._service(port, now)
        self.engine.tick()
        self._flush(arm=False)
        if not self._up or self.failure is not None:  # it died, or its engine stopped, writing what the step did
            return
        for port in ports:
            self._write(port)
        self._lines_written(now)
        self._arm()

    def _on_input(self, port: ServerPort) -> None:
        """Bytes arrived on ``port``'s line (called by its transport): service it at the next grid point."""
        port.dirty = True
        timer = self._timer
        if self._up and timer is not None and self._env is not None:
            timer.arm_at(self._env._now)  # hot path: SimPy's clock without its property

    def _arm(self) -> None:
        """Arm the next service step for the earliest deadline (early by :data:`EARLY_S`: a step with nothing
        due changes nothing) or, when a link has bytes to write, the next grid point."""
        timer = self._timer
        if not self._up or timer is None or self._env is None:
            return
        due = self.engine.next_deadline()
        if due is None:
            due = math.inf
        for port in self._ports:
            line = port.line
            if line.has_output:
                due = -math.inf
                break
            deadline = line.next_deadline()
            if deadline < due:
                due = deadline
            held = port.transport.next_release()
            if held is not None and held < due:
                due = held
        if due != math.inf:
            timer.arm_at(due - EARLY_S)

    def _lines_written(self, now: float) -> None:
        """Called after each service step has written to the lines (a hook for wrapped lines)."""

    def _service(self, port: ServerPort, now: float) -> None:
        port.dirty = False
        try:
            data = port.transport.read(0.0)
        except TransportClosed:
            data = b""
        engine = self.engine
        for frame in port.line.feed(data, now) if data else ():
            if isinstance(frame, BadFrame) or not port.admit(frame, engine):
                continue
            report = port.report_of(frame, now)
            if report is not None:
                engine.report(report)
        silent = port.line.tick(now)
        for frame in port.line.released(now):  # held back by the line, let go without new bytes
            if isinstance(frame, BadFrame) or not port.admit(frame, engine):
                continue
            report = port.report_of(frame, now)
            if report is not None:
                engine.report(report)
        if silent:
            who = "device" if len(port.line.roles) <= 1 else ", ".join(silent)
            engine.report(TableReport(ReportKind.PROBLEM, port.name, detail=f"link down: {who} silent"))
        self._write(port)

    @staticmethod
    def _write(port: ServerPort) -> None:
        out = port.line.take_output()
        if out:
            with contextlib.suppress(TransportClosed):  # an unplugged line loses the bytes; the link retransmits
                port.transport.write(out)

    def _flush(self, arm: bool = True) -> None:
        """Record the engine's new events and queue the lamp commands they call for; then (``arm``) arm the line
        service for what they changed (a call from a player or the supervisor). Accepted bets alone change no
        deadline of the engine (``RoundEngine.place_bet``) and queue nothing on a line, and every other change to
        the lines, the transports and the engine arms the service where it happens (:meth:`_on_input`, the end of
        :meth:`_service_all`, this method): so they arm nothing."""
        events = self.engine.drain()
        if not events or not self._append(events):
            return
        self._logged += len(events)
        now = float(self._env.now) if self._env is not None else 0.0
        moved = False  # whether an event may have moved a deadline or queued a lamp command
        for event in events:
            if event.kind not in _ROUND_KINDS:
                moved = moved or event.kind is not _BET_ACCEPTED
                continue  # hot path: no round event and no lamp command for wallets, bets, corrections...
            moved = True
            normal = round_event(event.to_json())
            if normal is not None:
                self._events.append(normal)
            cmd = lamp_command(event)
            if cmd is not None:
                for port in self._ports:
                    if port.name == DeviceRole.LAMP or port.line.carries_lamp:
                        port.line.send(cmd[0], cmd[1], now)
        if self._host is not None:
            self._host.events(list(events))
        for watcher in self.event_watchers:
            watcher()
        if arm and moved:
            self._arm()  # (a bet moves no deadline and sends nothing: arming again would arm what is armed)

    def _flush_call(self) -> None:
        """:meth:`_flush` for a player's or the supervisor's call: when the server died writing what the call did
        (a crash point), the call fails as a request to a dying server does.

        Raises:
            AdapterError: ``unreachable``, the server died.
        """
        self._flush()
        if not self._up:
            raise AdapterError("unreachable", f"the server died while it wrote this call's events ({self.crash})")
        if self.failure is not None:
            raise AdapterError("unavailable", f"the game engine is unavailable: {self.failure}")

    # ------------------------------------------------------------------ players and supervisor
    def connect(self, player_id: str) -> None:
        """Open the player's session on the server (:class:`gameserver.players.Sessions`), as a stream does; with
        ``api: http``, the player's event stream (``/v1/stream`` with its token), open until :meth:`disconnect`.

        Raises:
            AdapterError: ``unknown_player`` without a wallet; ``unreachable`` or ``unavailable`` when down; the
                server's code when it refuses the stream.
        """
        self._require_running()
        if self.engine.wallets.get(player_id) is None:
            raise AdapterError("unknown_player", f"no wallet for {player_id!r}")
        if player_id in self._connected:
            return
        if self._host is not None:
            host = self._host
            stream, code, reason = host.open_stream(self._token(player_id))
            self._after_request()
            if stream is None:
                raise AdapterError(reason or "refused", f"the stream of {player_id} was closed with code {code}")
            self._streams[player_id] = stream
            self._connected.add(player_id)
            return
        self._connected.add(player_id)
        self._sessions.opened(self.engine, player_id)
        self._flush_call()

    def disconnect(self, player_id: str) -> None:
        """Drop the session: the server runs its end-of-connection code, as when a stream drops (not when down)."""
        if player_id not in self._connected:
            return
        self._connected.discard(player_id)
        stream = self._streams.pop(player_id, None)
        if not self._up:
            return
        if stream is not None and self._host is not None:
            self._host.close_stream(stream)
            self._close_dead_hosts()
        elif stream is None:
            self._sessions.closed(self.engine, player_id)
            self._flush()

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        return self._place(player_id, client_bet_id, bet_type, stake, None, lose_reply)

    def place_bet_for_round(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: str
    ) -> BetReply:
        """The engine's ``place_bet`` with ``round_id`` (an integer, as the bet endpoint's ``round_id`` field)."""
        return self._place(player_id, client_bet_id, bet_type, stake, int(round_id), False)

    def _place(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: int | None, lose_reply: bool
    ) -> BetReply:
        self._require_running()
        if player_id not in self._connected:
            raise AdapterError("not_connected", f"player {player_id!r} is not connected")
        if self._host is not None:
            return self._place_http(player_id, client_bet_id, bet_type, stake, round_id, lose_reply)
        confirmed = not lose_reply
        try:
            ack, _replayed = self.engine.place_bet(player_id, client_bet_id, bet_type, stake, round_id)
        except Rejection as exc:
            self._flush_call()
            return BetReply(player_id, client_bet_id, bet_type, stake, False, confirmed, code=exc.code)
        finally:
            if lose_reply:
                self.disconnect(player_id)
        self._flush_call()
        return BetReply(
            player_id,
            client_bet_id,
            bet_type,
            stake,
            True,
            confirmed,
            bet_id=str(ack.bet_id),
            round_id=str(ack.round_id),
            balance_before=ack.balance_before,
            balance_after=ack.balance_after,
        )

    def _place_http(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: int | None, lose_reply: bool
    ) -> BetReply:
        """``POST /v1/bets`` with the player's token; ``lose_reply``: the server answers, the player never reads it
        and its stream drops (``confirmed`` False)."""
        body: dict[str, Any] = {"client_bet_id": client_bet_id, "bet_type": bet_type, "stake": stake}
        if round_id is not None:
            body["round_id"] = round_id
        try:
            status, data = self._request("POST", "/v1/bets", self._token(player_id), body)
        finally:
            if lose_reply:
                self.disconnect(player_id)
        confirmed = not lose_reply
        if status in (200, 201):
            bet = data["bet"]
            return BetReply(
                player_id,
                client_bet_id,
                bet_type,
                stake,
                True,
                confirmed,
                bet_id=str(bet["bet_id"]),
                round_id=str(bet["round_id"]),
                balance_before=int(bet["balance_before"]),
                balance_after=int(bet["balance_after"]),
            )
        return BetReply(player_id, client_bet_id, bet_type, stake, False, confirmed, code=code_of(data))

    def supervise(self, action: str, reason: str = "") -> None:
        self._require_running()
        if self._host is not None:
            status, data = self._request(
                "POST", f"/v1/supervisor/{action}", self._boss, {"reason": reason} if reason else {}
            )
            if status != 200:
                raise AdapterError(code_of(data), str(data.get("error", {}).get("message", data)))
            return
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
            self._flush_call()

    def correct(self, round_id: str, faces: str) -> None:
        """The engine's correction (``RoundEngine.correct``; with ``api: http``, ``POST /v1/supervisor/correct``); a
        rejection is ``AdapterError`` with its code."""
        self._require_running()
        if self._host is not None:
            body = {"round_id": int(round_id), "faces": faces}
            status, data = self._request("POST", "/v1/supervisor/correct", self._boss, body)
            if status != 200:
                raise AdapterError(code_of(data), str(data.get("error", {}).get("message", data)))
            return
        try:
            self.engine.correct(int(round_id), faces)
        except Rejection as exc:
            raise AdapterError(exc.code, exc.message) from None
        finally:
            self._flush_call()

    # ------------------------------------------------------------------ the API (``api: http``)
    def _token(self, player_id: str) -> str:
        token = self._tokens.get(player_id)
        if token is None:
            raise AdapterError("unknown_player", f"no token for player {player_id!r}")
        return token

    def _request(self, method: str, path: str, token: str | None, body: Any = None) -> tuple[int, Any]:
        """One request to the server's API; (status, decoded body).

        Raises:
            AdapterError: ``unreachable`` when the server is down or died answering it, ``unavailable`` when its
                engine stopped meanwhile.
        """
        host = self._host
        if host is None:
            raise AdapterError("unreachable", "the server is down (killed)")
        answer = host.request(method, path, token, body)
        self._after_request(writes=method != "GET")
        return answer

    def _after_request(self, writes: bool = True) -> None:
        """After a request: close the API of a server that died answering it, and fail the call as a request to a
        dying server fails, or (``writes``) one that changed something while its engine stopped; a read the server
        answered stands (the ledger is still read when the engine has failed closed, as with ``api: direct``).

        Raises:
            AdapterError: ``unreachable`` or ``unavailable``.
        """
        self._close_dead_hosts()
        if not self._up:
            raise AdapterError("unreachable", f"the server died while it answered this call ({self.crash})")
        if writes and self.failure is not None:
            raise AdapterError("unavailable", f"the game engine is unavailable: {self.failure}")

    @property
    def checks_credentials(self) -> bool:
        """True with ``api: http``: every call carries credentials the server's API checks. False with
        ``direct``: calls reach the engine past the API, so :meth:`request_as` cannot choose credentials."""
        return self._api == "http"

    def request_as(self, request: AccessRequest) -> AccessAnswer:
        """``request`` to the server's API with its credentials (:func:`~harness.bench.adapters.access_http.http_ask`),
        or, for a ``connect``, an event stream opened with them and closed at once; the answer is appended to
        :attr:`access_log`.

        Raises:
            AdapterError: ``not_supported`` with ``api: direct``; ``unreachable`` or ``unavailable`` when down;
                ``unknown_player`` for a holder without a token.
        """
        if self._api != "http":
            raise AdapterError("not_supported", "server.options.api: direct reaches the engine past its credentials")
        self._require_running()
        ask = http_ask(request, self._tokens, self._boss)
        if request.action == AccessAction.CONNECT:
            host = self._host
            if host is None:
                raise AdapterError("unreachable", "the server is down (killed)")
            stream, code, reason = host.open_stream(ask.token)
            if stream is not None:
                host.close_stream(stream)
            self._after_request()
            answer = ws_answer(request, code, reason)
        else:
            status, data = self._request(ask.method, ask.path, ask.token, ask.body)
            answer = answer_of(request, status, data)
        self.access_log.append(answer)
        return answer

    # ------------------------------------------------------------------ identification (Identifying)
    def identify(self) -> dict[str, Any]:
        """The server's own report of what it is: with ``api: http`` its ``GET /v1/identity`` (supervisor's token),
        with ``direct`` the same body taken from the server's identity at once
        (:func:`~harness.bench.adapters.reference_identity.reported_identity`). The inventory is of the
        ``gameserver`` package this process imported; "at start" is the first identification after :meth:`start`.

        Raises:
            AdapterError: ``not_started`` before :meth:`start`; ``unreachable`` while the server is down.
        """
        self._require_up()
        if self._host is not None:
            status, data = self._request("GET", "/v1/identity", self._boss)
            if status != 200:
                raise AdapterError(code_of(data), f"GET /v1/identity answered {status}")
            return reported_identity(data)
        return reported_identity(self._identity_body())

    def _identity_body(self) -> dict[str, Any]:
        """What ``GET /v1/identity`` serves: the identity at the first call and now."""
        if self._env is None:
            raise AdapterError("not_started", "the in-process server was not started")
        if self._identity is None:
            self._identity = IdentitySource(self._identity_config)
        return self._identity.to_json()

    # ------------------------------------------------------------------ records
    def round_events(self) -> list[RoundEvent]:
        self._require_up()
        return self._events.held()

    def round_events_since(self, n: int) -> list[RoundEvent]:
        self._require_up()
        return self._events.since(n)

    def forget_round_events(self, n: int) -> None:
        """:class:`~harness.bench.adapters.capabilities.ForgetsRoundEvents`; also while the server is down."""
        self._events.forget(n)

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        """What ``GET /v1/players/{id}/bets`` serves (:func:`gameserver.players.bet_record`), through JSON (with
        ``api: http``, that request with the supervisor's token)."""
        self._require_up()
        if self._host is not None:
            status, data = self._request("GET", f"/v1/players/{player_id}/bets", self._boss)
            if status != 200:
                raise AdapterError(code_of(data), f"cannot read the bet record of {player_id}")
            return [bet_row(raw) for raw in data["bets"]]
        return [bet_row(raw) for raw in json.loads(json.dumps(bet_record(self._ledger, player_id)))]

    def round_bet_record(self, round_id: str) -> list[BetRecordRow]:
        """Every player's bets of round ``round_id`` (:class:`~harness.bench.adapters.capabilities.RoundRecords`):
        the ledger's rows of that round through JSON, or with ``api: http`` the supervisor's game recall
        ``GET /v1/rounds/{id}``; ``[]`` for a round the server does not know."""
        self._require_up()
        if self._host is not None:
            return round_bets(self._request, self._boss, round_id)
        if not round_id.isdigit() or len(round_id) > 18:
            return []
        rows = bet_record(self._ledger, None, int(round_id))
        return [bet_row(raw) for raw in json.loads(json.dumps(rows))]

    def balance(self, player_id: str) -> int:
        """The player's balance in the ledger (with ``api: http``, ``GET /v1/players/{id}/balance`` with the
        supervisor's token). Raises AdapterError ``unknown_player`` without a wallet."""
        self._require_up()
        if self._host is not None:
            status, data = self._request("GET", f"/v1/players/{player_id}/balance", self._boss)
            if status != 200:
                raise AdapterError(code_of(data), f"cannot read the balance of {player_id}")
            return int(data["balance"])
        value = self._ledger.balance(player_id)
        if value is None:
            raise AdapterError("unknown_player", f"no wallet for {player_id!r}")
        return value

    def ignored_device_frames(self) -> int:
        """Device frames the lines refused (wrong device, untagged result) plus reports the engine ignored, since
        the server started (a restart starts the counts again, as a new process would)."""
        self._require_up()
        return sum(self.engine.ignored.counts.values()) + sum(sum(p.guard.counts.values()) for p in self._ports)

    def event_log_size(self) -> int:
        """Entries in the ledger's event log."""
        return self._logged


def _identity_config(engine: EngineConfig, setup: ServerSetup) -> dict[str, Any]:
    """The configuration this server runs, as a server process started for the same setup is configured
    (:func:`harness.bench.adapters.server_process.server_config`) and its identity digests it
    (:func:`gameserver.identity.config_document`)."""
    lines = setup.lines
    config = ServerConfig(
        engine=engine,
        heartbeat_timeout_s=setup.heartbeat_s,
        device_dialects={name: line.dialect.name for name, line in lines.items()},
        device_roles={name: tuple(r.value for r in line.roles) for name, line in lines.items()},
        device_options={name: line.dialect.server_options() for name, line in lines.items()},
        device_untagged={name: not line.dialect.capabilities.round_tags for name, line in lines.items()},
    )
    return config_document(config, setup.devices)
