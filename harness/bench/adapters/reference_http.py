"""The reference server as a separate process, over HTTP and WebSocket: the local HIL bench's adapter.

:meth:`HttpAdapter.start` writes a server config (the players with tokens, a supervisor, the bench's timings,
rounds opened by the supervisor only), starts the bench's command (default ``xocdia-server``) with
``--db``, ``--port 0``, ``--config`` and one ``--device NAME=URL`` per line, and waits (bounded) until it says
it is listening. Players bet over HTTP (``POST /v1/bets``) and are *connected* while their WebSocket stream
(``/v1/stream``) is open; round events are read from the supervisor's ``/v1/events`` log.

With ``server.kind: url`` (a staging server already running) nothing is started: ``options`` must give
``supervisor_token``, and either ``players`` (id → token, accounts funded by hand) or nothing, when each scenario's
players are created with their opening balances through :meth:`HttpAdapter.provision_players`; only the events
logged after :meth:`HttpAdapter.start` are the scenario's. A lab would normally write its own adapter. Attached
so, the adapter takes the server as up from :meth:`HttpAdapter.start` to :meth:`HttpAdapter.stop` (a dead server
shows as failing calls) and cannot kill or restart it (:attr:`HttpAdapter.can_restart` is False).

Fault injection's interface (``harness.faults.fault_adapters``): :meth:`HttpAdapter.kill_server` (SIGKILL),
:meth:`HttpAdapter.restart_server` (the same command line again, on a new port), :attr:`HttpAdapter.server_up`,
:attr:`HttpAdapter.address` (where the server listens now) and :meth:`HttpAdapter.player_address` (where a
player's requests and event stream go: a subclass routes them through a proxy by overriding it).

The server process itself (config file, command line, the port it listens on, SIGKILL) is
:mod:`harness.bench.adapters.server_process`; this module is the adapter over HTTP and WebSocket.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.sync.client import ClientConnection, connect

from harness.bench.adapters.access_http import answer_of, http_ask, ws_answer
from harness.bench.adapters.base import GameServerAdapter, ServerSetup
from harness.bench.adapters.event_window import RoundEventWindow
from harness.bench.adapters.http_support import code_of, log_end, provision, resolve, round_bets
from harness.bench.adapters.reference_events import bet_row, round_event
from harness.bench.adapters.reference_identity import reported_identity
from harness.bench.adapters.server_process import PUMP_JOIN_S, START_TIMEOUT_S, ServerProcess, server_config
from harness.errors import AdapterError
from harness.judge.access import CREATE_PLAYER, AccessAction, AccessAnswer, AccessRequest
from harness.records import OPTIONAL_RECORD_FIELDS, BetRecordRow, BetReply, PlayerSpec, RoundEvent

HTTP_TIMEOUT_S = 10.0
SUPERVISOR = "bench-supervisor"

__all__ = ["HTTP_TIMEOUT_S", "PUMP_JOIN_S", "START_TIMEOUT_S", "SUPERVISOR", "HttpAdapter"]


class HttpAdapter(GameServerAdapter):
    """The reference server as a process: started from ``command`` (argv prefix, default ``xocdia-server``), or
    attached by ``url`` (then ``players``, id → token, and ``supervisor_token`` are required options). Bets go over
    HTTP, a player is connected while its WebSocket stream is open, round events come from the supervisor's event
    log. Started by it, the server can be killed and restarted (:attr:`can_restart`); attached by ``url``, it is
    taken as up from :meth:`start` to :meth:`stop` and never killed.
    """

    bet_record_fields = frozenset(OPTIONAL_RECORD_FIELDS)  # GET /v1/players/{id}/bets serves both balances

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._server = ServerProcess()
        self._crash_file: Path | None = None  # the server process's --crash-file (None: attached by url)
        self._host = "127.0.0.1"
        self._port = 0
        self._tokens: dict[str, str] = dict(self.options.get("players") or {})
        self._boss = str(self.options.get("supervisor_token") or "")
        self._streams: dict[str, ClientConnection] = {}
        self._stacks: dict[str, contextlib.ExitStack] = {}
        self._events = RoundEventWindow()
        self._after = 0
        self._read_rows = 0  # entries of the event log read so far
        self._trace: Path | None = None
        self._attached = False  # started with ``url``: between start and stop, up by definition
        self._ids: dict[str, str] = {}  # scenario player id -> server id, for players it created (attached)
        self.access_log: list[AccessAnswer] = []  # every answer of request_as, in order (Principals)

    # ------------------------------------------------------------------ lifecycle
    def start(self, setup: ServerSetup) -> None:
        url = str(self.options.get("url") or "")
        if url:
            parts = urlsplit(url)
            self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
            self._attached = True
            self._after = log_end(self._call, self._boss)  # earlier scenarios' rounds are not this one's
            return
        self._boss = "boss-" + setup.workdir.name
        self._tokens = {p.player_id: f"tok-{i}-{setup.workdir.name}" for i, p in enumerate(setup.players)}
        config = server_config(setup, self._tokens, SUPERVISOR, self._boss)
        cfg = setup.workdir / "server.yaml"
        cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
        db = setup.workdir / "server.db"
        self._trace = setup.workdir / "server.serial.jsonl"
        command = resolve(list(self.options.get("command") or ["xocdia-server"]))
        argv = [*command, "--db", str(db), "--port", "0", "--config", str(cfg), "--trace", str(self._trace)]
        self._crash_file = setup.workdir / "crash-point.json"
        argv += ["--crash-file", str(self._crash_file)]
        for name, address in setup.devices.items():
            argv += ["--device", f"{name}={address}"]
        self._server.spawn(argv, f"cannot run {command[0]!r}")
        self._port = self._wait_listening()

    def _wait_listening(self) -> int:
        port = self._server.wait_listening()
        if port is None:
            self.stop()
            raise AdapterError("start_failed", f"the server did not listen within {START_TIMEOUT_S:g} s")
        return port

    def provision_players(self, players: tuple[PlayerSpec, ...]) -> None:
        """Attached by ``url`` without a ``players`` option: create the scenario's players on the server
        (:func:`~harness.bench.adapters.http_support.provision`); otherwise nothing (they are in the config it
        started the server with, or were funded by hand). Raises AdapterError."""
        if self._attached and not self.options.get("players"):
            self._tokens, self._ids = provision(self._call, self._boss, players)

    def stop(self) -> None:
        for player in list(self._streams):
            self.disconnect(player)
        self._attached = False
        self._server.terminate()

    # ------------------------------------------------------------------ kill -9 and restart
    @property
    def address(self) -> tuple[str, int]:
        """Where the server listens now, direct (host, port): the port changes on :meth:`restart_server`; port 0
        before :meth:`start`."""
        return self._host, self._port

    def player_address(self, player_id: str) -> tuple[str, int]:
        """Where ``player_id``'s bets and event stream go: :attr:`address` here. A subclass overrides this to
        route a player through a proxy; the supervisor and the record reads always go to :attr:`address`."""
        return self.address

    @property
    def server_up(self) -> bool:
        """Whether the bench may treat the server as up. Started by this adapter: True while its process runs
        (False before :meth:`start`, after :meth:`stop`, between :meth:`kill_server` and :meth:`restart_server`).
        Attached by ``url``: True from :meth:`start` to :meth:`stop`; this adapter owns no process to watch, so a
        dead server shows as calls failing with ``unreachable``, as on any adapter."""
        return self._attached or self._server.running

    @property
    def can_restart(self) -> bool:
        """True when this adapter starts the server process itself (no ``url`` option): :meth:`kill_server` and
        :meth:`restart_server` then really SIGKILL it and run it again on the same database. False when attached
        by ``url``: both do nothing, so fault injection must not plan a server kill (it refuses one). Known from
        the options alone, before :meth:`start`."""
        return not self.options.get("url")

    def kill_server(self) -> None:
        """SIGKILL the server process (no shutdown: only what it committed to its ``--db`` survives), after
        dropping every player's stream; waits (at most 10 s) until it has exited, and keeps its command line for
        :meth:`restart_server`. Does nothing when this adapter started no process (``url``) or after
        :meth:`stop`."""
        if self._server.proc is None:
            return
        for player in list(self._streams):
            self.disconnect(player)
        self._server.kill()

    def restart_server(self) -> None:
        """Run the killed server's command line again (the same ``--db``, config, trace and device lines) and
        wait (at most :data:`START_TIMEOUT_S`) until it listens; :attr:`address` then has its new port. Players
        must connect again. Does nothing while the server is up, or when :meth:`kill_server` never ran.

        Raises:
            AdapterError: ``start_failed`` when the command cannot be run, exits, or does not listen in time.
        """
        if self.server_up or not self._server.argv:
            return
        self._server.spawn(self._server.argv, "cannot restart the server")
        self._port = self._wait_listening()

    # ------------------------------------------------------------------ crash points (ATOM-1)
    def arm_crash(self, round_id: str, after: int) -> None:
        """Arm a crash point in the server process (its ``--crash-file``, ``gameserver.crash_points``): it dies, with
        status 137, just before statement ``after + 1`` of the ledger write that ends round ``round_id`` (or
        corrects it); a write of ``after`` statements or fewer completes and spends the point. The bench sees the
        death as :attr:`server_up` False; :meth:`kill_server` and :meth:`restart_server` then bring it back.

        Raises:
            AdapterError: ``not_supported`` when attached by ``url`` (no process of its own, no crash file);
                ``bad_request`` for a negative ``after``.
        """
        if self._crash_file is None:
            raise AdapterError("not_supported", "crash points need a server process this adapter starts (not url)")
        if after < 0:
            raise AdapterError("bad_request", f"crash point after {after} statements: expected 0 or more")
        staged = self._crash_file.with_suffix(".tmp")
        staged.write_text(json.dumps({"round": int(round_id), "after": after}), encoding="utf-8")
        os.replace(staged, self._crash_file)  # the server reads whole files only

    @property
    def crash_armed(self) -> bool:
        """True while the armed point waits for its write (the server removes the file when it arms it)."""
        return self._crash_file is not None and self._crash_file.exists()

    # ------------------------------------------------------------------ HTTP
    def _call(
        self, method: str, path: str, token: str | None, body: Any = None, to: tuple[str, int] | None = None
    ) -> tuple[int, Any]:
        """One request (``token`` None: no ``Authorization`` header); returns (status, decoded body).

        Raises:
            AdapterError: ``unreachable`` when the server cannot be reached.
        """
        host, port = self.address if to is None else to
        conn = http.client.HTTPConnection(host, port, timeout=HTTP_TIMEOUT_S)
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            resp = conn.getresponse()
            text = resp.read().decode()
        except OSError as exc:
            raise AdapterError("unreachable", f"{method} {path}: {exc}") from None
        finally:
            conn.close()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, {"error": {"code": "bad_response", "message": text[:200]}}

    def _token(self, player_id: str) -> str:
        token = self._tokens.get(player_id)
        if token is None:
            raise AdapterError("unknown_player", f"no token for player {player_id!r}")
        return token

    # ------------------------------------------------------------------ players and supervisor
    def connect(self, player_id: str) -> None:
        if player_id in self._streams:
            return
        host, port = self.player_address(player_id)
        url = f"ws://{host}:{port}/v1/stream?token={self._token(player_id)}"
        stack = contextlib.ExitStack()
        try:
            ws = stack.enter_context(connect(url, open_timeout=HTTP_TIMEOUT_S, max_queue=None))
            ws.recv(timeout=HTTP_TIMEOUT_S)  # the server's hello: the session is open
        except (OSError, WebSocketException, TimeoutError) as exc:
            stack.close()
            raise AdapterError("unreachable", f"stream of {player_id}: {exc}") from None
        self._streams[player_id] = ws
        self._stacks[player_id] = stack

    def disconnect(self, player_id: str) -> None:
        ws = self._streams.pop(player_id, None)
        stack = self._stacks.pop(player_id, None)
        if ws is not None:
            with contextlib.suppress(Exception):
                ws.socket.close()  # abrupt: no closing handshake, as a lost network
        if stack is not None:
            with contextlib.suppress(Exception):
                stack.close()

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        return self._place(
            player_id, {"client_bet_id": client_bet_id, "bet_type": bet_type, "stake": stake}, lose_reply
        )

    def place_bet_for_round(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: str
    ) -> BetReply:
        """``POST /v1/bets`` with the optional ``round_id`` field (docs/server.md)."""
        body = {"client_bet_id": client_bet_id, "bet_type": bet_type, "stake": stake, "round_id": int(round_id)}
        return self._place(player_id, body, False)

    def _place(self, player_id: str, body: dict[str, Any], lose_reply: bool) -> BetReply:
        client_bet_id, bet_type, stake = body["client_bet_id"], body["bet_type"], body["stake"]
        if player_id not in self._streams:
            raise AdapterError("not_connected", f"player {player_id!r} is not connected")
        base = BetReply(player_id, client_bet_id, bet_type, stake, accepted=False, confirmed=not lose_reply)
        if lose_reply:
            self._send_and_drop(player_id, body)
            self.disconnect(player_id)
            return base
        status, data = self._call("POST", "/v1/bets", self._token(player_id), body, self.player_address(player_id))
        if status in (200, 201):
            bet = data["bet"]
            return BetReply(
                player_id,
                client_bet_id,
                bet_type,
                stake,
                accepted=True,
                bet_id=str(bet["bet_id"]),
                round_id=str(bet["round_id"]),
                balance_before=int(bet["balance_before"]),
                balance_after=int(bet["balance_after"]),
            )
        return BetReply(player_id, client_bet_id, bet_type, stake, accepted=False, code=code_of(data))

    def _send_and_drop(self, player_id: str, body: dict[str, Any]) -> None:
        """Send the request and close the socket without reading the answer (the player's network drops)."""
        host, port = self.player_address(player_id)
        conn = http.client.HTTPConnection(host, port, timeout=HTTP_TIMEOUT_S)
        headers = {"Authorization": f"Bearer {self._token(player_id)}", "Content-Type": "application/json"}
        try:
            conn.request("POST", "/v1/bets", body=json.dumps(body), headers=headers)
        except OSError as exc:
            raise AdapterError("unreachable", f"POST /v1/bets: {exc}") from None
        finally:
            conn.close()

    def supervise(self, action: str, reason: str = "") -> None:
        status, data = self._call("POST", f"/v1/supervisor/{action}", self._boss, {"reason": reason} if reason else {})
        if status != 200:
            raise AdapterError(code_of(data), str(data.get("error", {}).get("message", data)))

    def correct(self, round_id: str, faces: str) -> None:
        """``POST /v1/supervisor/correct {round_id, faces}``; raises AdapterError with the server's code."""
        body = {"round_id": int(round_id), "faces": faces}
        status, data = self._call("POST", "/v1/supervisor/correct", self._boss, body)
        if status != 200:
            raise AdapterError(code_of(data), str(data.get("error", {}).get("message", data)))

    # ------------------------------------------------------------------ records
    def round_events(self) -> list[RoundEvent]:
        self._read_events()
        return self._events.held()

    def round_events_since(self, n: int) -> list[RoundEvent]:
        self._read_events()
        return self._events.since(n)

    def forget_round_events(self, n: int) -> None:
        """:class:`~harness.bench.adapters.capabilities.ForgetsRoundEvents` (reads nothing from the server)."""
        self._events.forget(n)

    def _read_events(self) -> None:
        """Drain the players' streams, then append the round events the server logged since the last read."""
        for ws in self._streams.values():  # keep the streams drained (their content is not needed here)
            with contextlib.suppress(TimeoutError, WebSocketException, OSError):
                while True:
                    ws.recv(timeout=0)
        while True:
            status, data = self._call("GET", f"/v1/events?after={self._after}&limit=1000", self._boss)
            if status != 200:
                raise AdapterError(code_of(data), "cannot read the event log")
            rows = data["events"]
            self._read_rows += len(rows)
            for raw in rows:
                self._after = max(self._after, int(raw["seq"]))
                event = round_event(raw)
                if event is not None:
                    self._events.append(event)
            if len(rows) < 1000:
                return

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        status, data = self._call("GET", f"/v1/players/{self._ids.get(player_id, player_id)}/bets", self._boss)
        if status != 200:
            raise AdapterError(code_of(data), f"cannot read the bet record of {player_id}")
        return [replace(bet_row(r), player_id=player_id) for r in data["bets"]]

    def round_bet_record(self, round_id: str) -> list[BetRecordRow]:
        """Every player's bets of round ``round_id`` by the supervisor's game recall ``GET /v1/rounds/{id}``
        (:class:`~harness.bench.adapters.capabilities.RoundRecords`), each row under the scenario's name of a
        player this adapter created; ``[]`` for a round the server does not know."""
        named = {server: own for own, server in self._ids.items()}
        rows = round_bets(self._call, self._boss, round_id)
        return [replace(row, player_id=named.get(row.player_id, row.player_id)) for row in rows]

    def balance(self, player_id: str) -> int:
        status, data = self._call("GET", f"/v1/players/{self._ids.get(player_id, player_id)}/balance", self._boss)
        if status != 200:
            raise AdapterError(code_of(data), f"cannot read the balance of {player_id}")
        return int(data["balance"])

    def ignored_device_frames(self) -> int:
        """Device frames the server's lines refused plus the reports its engine ignored, as ``/health`` counts them
        (``devices.*.rejected``, ``ignored_reports.counts``: docs/server.md)."""
        status, data = self._call("GET", "/health", self._boss)
        if status not in (200, 503) or not isinstance(data, dict):
            raise AdapterError(code_of(data), "cannot read /health")
        refused = sum(sum(line.get("rejected", {}).values()) for line in data.get("devices", {}).values())
        ignored = data.get("ignored_reports", {}).get("counts", {})
        counted = (n for kinds in ignored.values() for whys in kinds.values() for n in whys.values())
        return int(refused) + sum(int(n) for n in counted)

    def event_log_size(self) -> int:
        """How many entries of the server's event log (``/v1/events``) this adapter has read, after reading the new
        ones: its growth is the number of entries added (counted, not taken from the sequence numbers, which need
        only increase)."""
        self._read_events()
        return self._read_rows

    # ------------------------------------------------------------------ acting as another principal (ACC-*)
    @property
    def checks_credentials(self) -> bool:
        """Always True: every request reaches the server's authentication."""
        return True

    def request_as(self, request: AccessRequest) -> AccessAnswer:
        """``request`` over HTTP with its credentials (:func:`~harness.bench.adapters.access_http.http_ask`), or, for a
        ``connect``, a WebSocket stream opened with them and closed at once; the answer is appended to
        :attr:`access_log`. A player to create goes under a fresh server id (the target plus a random suffix, as
        :meth:`provision_players` names them), which :meth:`balance` and :meth:`bet_record` then read.

        Raises:
            AdapterError: ``unreachable`` when the server cannot be reached; ``unknown_player`` for a holder
                without a token.
        """
        if request.supervisor_action == CREATE_PLAYER and request.target not in self._ids:
            self._ids[request.target] = f"{request.target}-{secrets.token_hex(4)}"  # an id no other run has used
        ask = http_ask(request, self._tokens, self._boss, self._ids)
        if request.action == AccessAction.CONNECT:
            answer = self._probe_stream(request, ask.token)
        else:
            to = self.player_address(request.holder) if request.holder else None
            status, data = self._call(ask.method, ask.path, ask.token, ask.body, to)
            answer = answer_of(request, status, data)
        self.access_log.append(answer)
        return answer

    def _probe_stream(self, request: AccessRequest, token: str | None) -> AccessAnswer:
        """Open ``/v1/stream`` with ``token`` (none: no ``?token=``) and close it again: the server's answer."""
        host, port = self.player_address(request.holder) if request.holder else self.address
        url = f"ws://{host}:{port}/v1/stream" + (f"?token={token}" if token is not None else "")
        try:
            with connect(url, open_timeout=HTTP_TIMEOUT_S) as ws:
                try:
                    ws.recv(timeout=HTTP_TIMEOUT_S)  # the hello, or the close that refuses the stream
                except ConnectionClosed as closed:
                    received = closed.rcvd
                    if received is None:
                        return ws_answer(request, 1006)
                    return ws_answer(request, received.code, received.reason)
                return ws_answer(request, None)
        except (OSError, TimeoutError) as exc:
            raise AdapterError("unreachable", f"stream with {request.describe()}: {exc}") from None
        except WebSocketException as exc:
            return ws_answer(request, 1002, str(exc))

    # ------------------------------------------------------------------ identification (Identifying)
    def identify(self) -> dict[str, Any]:
        """The server's own report of what it is, ``GET /v1/identity`` with the supervisor's token
        (:func:`~harness.bench.adapters.reference_identity.reported_identity`).

        Raises:
            AdapterError: ``not_supported`` when the server has no such endpoint (404: a server of an earlier
                version, or another one at the URL); ``unreachable``; the server's code for another refusal.
        """
        status, data = self._call("GET", "/v1/identity", self._boss)
        if status == 404:
            raise AdapterError("not_supported", f"the server at {self._host}:{self._port} has no GET /v1/identity")
        if status != 200:
            raise AdapterError(code_of(data), f"GET /v1/identity answered {status}")
        return reported_identity(data)

    def evidence(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self._trace is not None and self._trace.exists():
            out["server serial trace (jsonl)"] = self._trace.read_text(encoding="utf-8")
        if self._server.stderr:
            out["server stderr"] = self._server.stderr
        return out
