"""The HTTP/WebSocket API (Starlette). Every rejection is a 4xx JSON body ``{"error": {"code", "message"}}``
with a stable code and changes nothing; see docs/server.md for the table of codes.

Authentication: ``Authorization: Bearer <token>`` (or ``?token=`` on the WebSocket only); request bodies are read
within the limits of :mod:`gameserver.http_input`. A player may act on and
read only their own account; a supervisor may read everything and use ``/v1/supervisor/*``.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import logging
import re
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from gameserver.bet_endpoint import BetEndpoint
from gameserver.config import Principal
from gameserver.engine import RoundEngine
from gameserver.event_views import EventViews
from gameserver.events import Event
from gameserver.http_input import ASCII, ApiError, authenticate, error, read_json
from gameserver.ledger import BET_COLUMNS, OUTCOME_COLUMNS
from gameserver.model import Rejection
from gameserver.openapi import openapi_document
from gameserver.players import Sessions, bet_record
from gameserver.provision import parse_players
from gameserver.service import GameService
from gameserver.sqlite_ledger import LedgerError

#: HTTP status of each engine rejection code (everything else a rejection can carry is 409).
STATUS = {
    "unknown_bet_type": 422,
    "stake_not_chip_multiple": 422,
    "stake_below_minimum": 422,
    "stake_above_maximum": 422,
    "invalid_faces": 422,
    "unknown_player": 404,
    "gateway_failure": 503,
}
_UINT = re.compile(r"^[0-9]{1,18}$")
#: WebSocket close codes of a refused ``/v1/stream`` (the reason is the error code).
WS_CLOSE = {"missing_token": 4401, "invalid_token": 4403}
log = logging.getLogger("gameserver.api")


_T = TypeVar("_T")


class Reader(Protocol):
    """How the API runs a blocking read of the ledger or the identity source, returning its result."""

    def __call__(self, func: Callable[..., _T], /, *args: Any) -> Awaitable[_T]: ...


async def read_inline(func: Callable[..., _T], /, *args: Any) -> _T:
    """A :class:`Reader` that runs ``func(*args)`` on the event loop's own thread: for a host whose loop serves one
    request at a time, where a worker thread would only add two thread switches a read."""
    return func(*args)


class Api:
    """Builds the Starlette app around a running :class:`GameService`."""

    def __init__(
        self,
        service: GameService,
        tokens: Mapping[str, Principal],
        health: Callable[[], dict[str, Any]],
        identity: Callable[[], dict[str, Any]] | None = None,
        read: Reader = run_in_threadpool,
    ) -> None:
        """``identity`` gives the body ``GET /v1/identity`` serves (``gameserver.identity.IdentitySource.to_json``);
        None: that endpoint answers 404 ``not_supported``. ``read`` runs the blocking reads: on a worker thread by
        default, so that the loop serves other requests meanwhile (:func:`read_inline`: on the loop's thread)."""
        self.service = service
        self._read = read
        self.identity_source = identity
        self.tokens = dict(tokens)
        self.health_extra = health
        self.streams: set[tuple[asyncio.Queue[list[EventViews] | None], Principal]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None  # the thread that runs ``loop``
        self.sessions = Sessions()  # players' open event streams (gameserver/players.py)
        self.bets = BetEndpoint(self.tokens, self._run)
        self.ledger_failure: str | None = None  # a read found the ledger damaged
        service.subscribe(self._on_events)

    # ------------------------------------------------------------------ plumbing
    def app(self) -> ASGIApp:
        """The ASGI application."""
        routes = [
            Route("/health", self.health),
            Route("/openapi.json", self.openapi),
            Route("/v1/bets", self.bets, methods=["POST"]),
            Route("/v1/players/{player_id}/balance", self.balance),
            Route("/v1/players/{player_id}/bets", self.bet_record),
            Route("/v1/players/{player_id}/bets.csv", self.bet_record_csv),
            Route("/v1/rounds", self.rounds),
            Route("/v1/rounds/current", self.current_round),
            Route("/v1/rounds/{round_id:int}", self.recall),
            Route("/v1/outcomes.csv", self.outcomes_csv),
            Route("/v1/events", self.events),
            Route("/v1/identity", self.identity),
            Route("/v1/supervisor/players", self.provision, methods=["POST"]),
            Route("/v1/supervisor/{action}", self.supervise, methods=["POST"]),
            WebSocketRoute("/v1/stream", self.stream),
        ]
        app = Starlette(
            routes=routes,
            exception_handlers={
                ApiError: self._api_error,
                HTTPException: self._http_error,
                sqlite3.Error: self._ledger_error,
                LedgerError: self._ledger_error,
                Exception: self._crash,
            },
            lifespan=self._lifespan,
        )
        bets = self.bets

        async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
            # hot path: a bet skips Starlette's middleware and router (the route above answers its other methods)
            if scope["type"] == "http" and scope["path"] == "/v1/bets" and scope["method"] == "POST":
                await bets(scope, receive, send)
            else:
                await app(scope, receive, send)

        return asgi

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self.loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        yield
        for q, _ in list(self.streams):
            q.put_nowait(None)

    async def _api_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error(exc.status, exc.code, exc.message)

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
        return error(exc.status_code, code, str(exc.detail), headers=exc.headers)

    async def _ledger_error(self, request: Request, exc: Exception) -> Response:
        """A read of the ledger failed: 503 ``unavailable``, one log line, no traceback. A damaged file (SQLite's
        ``SQLITE_CORRUPT``, ``SQLITE_NOTADB``, an I/O error) fails the ledger: ``/health`` names it and the engine
        fails closed (:meth:`RoundEngine.part_failed`) until the server is restarted."""
        log.error("ledger read failed on %s %s: %s", request.method, request.url.path, exc)
        name = str(getattr(exc, "sqlite_errorname", ""))
        if self.ledger_failure is None and name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_IOERR")):
            why = self.ledger_failure = f"read failed: {exc}"
            self.service.submit_then(lambda e: e.part_failed("ledger", why), lambda value, err: None)
        return error(503, "unavailable", f"the ledger cannot be read: {exc}")

    async def _crash(self, request: Request, exc: Exception) -> Response:
        return error(500, "internal_error", "unexpected server error")

    def _auth(self, conn: HTTPConnection) -> Principal:
        return authenticate(conn, self.tokens, query_ok=conn.scope["type"] == "websocket")

    def _account(self, request: Request) -> tuple[Principal, str]:
        who = self._auth(request)
        player_id = request.path_params["player_id"]
        if who.role != "supervisor" and who.id != player_id:
            raise ApiError(403, "forbidden", "a player may only read their own account")
        return who, player_id

    def _supervisor(self, request: Request) -> Principal:
        who = self._auth(request)
        if who.role != "supervisor":
            raise ApiError(403, "forbidden", "this action needs the supervisor role")
        return who

    async def _run(self, command: Callable[[RoundEngine], Any]) -> Any:
        try:
            return await self._submit(command)
        except Rejection as exc:
            raise ApiError(STATUS.get(exc.code, 409), exc.code, exc.message) from None
        except Exception as exc:
            raise ApiError(503, "unavailable", f"the game engine is unavailable: {exc}") from None

    def _submit(self, command: Callable[[RoundEngine], Any]) -> asyncio.Future[Any]:
        """``command`` on the engine: a future of this loop, resolved once its events are committed."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()

        def done(value: Any, error: BaseException | None) -> None:  # on the engine's thread
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for the answer
                self._soon(loop, _resolve, answer, value, error)

        self.service.submit_then(command, done)
        return answer

    # ------------------------------------------------------------------ events to WebSocket streams
    def _on_events(self, events: list[Event]) -> None:
        if self.loop is not None and self.streams:
            self._soon(self.loop, self._fan_out, events)

    def _soon(self, loop: asyncio.AbstractEventLoop, callback: Callable[..., object], *args: Any) -> None:
        """Have ``loop`` run ``callback(*args)`` at its next turn; from the loop's own thread without writing to
        its wake-up pipe (an engine run on that thread, as the in-process host runs it). Raises RuntimeError when
        the loop is closed."""
        if threading.get_ident() == self._loop_thread:
            loop.call_soon(callback, *args)
        else:
            loop.call_soon_threadsafe(callback, *args)

    def _fan_out(self, events: list[Event]) -> None:
        views = [EventViews(e) for e in events]  # each view's text made once, for every stream it goes to
        public = [v for v in views if v.public]
        for q, who in list(self.streams):
            batch = views if who.role == "supervisor" else public
            if not batch:  # nothing this reader may see: its stream is not woken
                continue
            if q.qsize() >= 1000:  # a reader this far behind is dropped rather than growing without bound
                q.put_nowait(None)
            else:
                q.put_nowait(batch)

    # ------------------------------------------------------------------ endpoints
    async def health(self, request: Request) -> Response:
        """Liveness plus the table's state (no token needed)."""
        if self.service.failure is None:
            state = await self._run(_table_state)
            ignored = await self._run(lambda e: e.ignored.to_json())
        else:  # the engine thread stopped on a ledger failure: its state no longer changes
            state, ignored = _table_state(self.service.engine), self.service.engine.ignored.to_json()
        body: dict[str, Any] = {"status": "ok", "table": state, "ignored_reports": ignored}
        body.update(self.health_extra())
        failures = dict(body.get("failures") or {})
        if self.ledger_failure is not None:
            failures["ledger"] = self.ledger_failure
        if self.service.failure is not None:
            failures["ledger"] = self.service.failure
        body["failures"] = failures
        if failures:
            body["status"] = "failed"
        return JSONResponse(body, status_code=503 if failures else 200)

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_document(self.service.engine.config))

    async def balance(self, request: Request) -> Response:
        _, player_id = self._account(request)
        value = await self._read(self.service.ledger.balance, player_id)
        if value is None:
            raise ApiError(404, "unknown_player", f"no wallet for {player_id!r}")
        return JSONResponse({"player_id": player_id, "balance": value})

    async def _records(self, request: Request) -> list[dict[str, Any]]:
        _, player_id = self._account(request)
        raw = request.query_params.get("round_id")
        if raw is not None and not _UINT.match(raw):
            raise ApiError(422, "invalid_field", "round_id must be an integer 0-999999999999999999")
        return await self._read(bet_record, self.service.ledger, player_id, None if raw is None else int(raw))

    async def bet_record(self, request: Request) -> Response:
        return JSONResponse({"bets": await self._records(request)})

    async def bet_record_csv(self, request: Request) -> Response:
        rows = await self._records(request)
        return _csv(BET_COLUMNS, ([_cell(r[c]) for c in BET_COLUMNS] for r in rows), "BETS.csv")

    async def rounds(self, request: Request) -> Response:
        self._auth(request)
        rows = await self._read(self.service.ledger.rounds)
        return JSONResponse({"rounds": [r.to_json() for r in rows]})

    async def outcomes_csv(self, request: Request) -> Response:
        """OUTCOMES.csv of every round, or with ``?after=N`` only the rounds numbered above N (a follower's
        next read: the rows it has not seen)."""
        self._auth(request)
        raw = request.query_params.get("after")
        if raw is not None and not _UINT.match(raw):
            raise ApiError(422, "invalid_field", "after must be an integer 0-999999999999999999")
        after = -1 if raw is None else int(raw)
        rows = await self._read(self.service.ledger.rounds)
        return _csv(OUTCOME_COLUMNS, (r.outcome_row() for r in rows if r.round_id > after), "OUTCOMES.csv")

    async def current_round(self, request: Request) -> Response:
        self._auth(request)
        return JSONResponse(await self._run(_table_state))

    async def recall(self, request: Request) -> Response:
        """Game recall: one round's facts, the caller's bets in it (all bets for a supervisor) and, for a
        supervisor, its event log."""
        who = self._auth(request)
        round_id = int(request.path_params["round_id"])
        if round_id > 2**62:
            raise ApiError(404, "unknown_round", f"no round {round_id}")
        found = await self._read(self.service.ledger.rounds, round_id)
        if not found:
            raise ApiError(404, "unknown_round", f"no round {round_id}")
        player = None if who.role == "supervisor" else who.id
        rows = await self._read(self.service.ledger.bets, player, round_id)
        body: dict[str, Any] = {"round": found[0].to_json(), "bets": [b.record(r) for b, r in rows]}
        if who.role == "supervisor":
            events = await self._read(self.service.ledger.events, 0, 100_000, round_id)
            body["events"] = [e.to_json() for e in events]
        return JSONResponse(body)

    async def events(self, request: Request) -> Response:
        self._supervisor(request)
        try:
            after = int(request.query_params.get("after", "0"))
            limit = int(request.query_params.get("limit", "1000"))
        except ValueError:
            raise ApiError(422, "invalid_field", "after and limit must be integers") from None
        if not 0 <= after <= 2**62 or not 1 <= limit <= 10_000:
            raise ApiError(422, "invalid_field", "after must be 0 to 2**62 and limit 1-10000")
        rows = await self._read(self.service.ledger.events, after, limit)
        return JSONResponse({"events": [e.to_json() for e in rows]})

    async def identity(self, request: Request) -> Response:
        """The server's identity taken at its start and now (supervisor only; :mod:`gameserver.identity`)."""
        self._supervisor(request)
        if self.identity_source is None:
            raise ApiError(404, "not_supported", "this server was started without an identity")
        return JSONResponse(await self._read(self.identity_source))

    async def supervise(self, request: Request) -> Response:
        self._supervisor(request)
        action = request.path_params["action"]
        data = await read_json(request, required=action == "correct")
        allowed = {"round_id", "faces"} if action == "correct" else {"reason"}
        extra = sorted(set(data) - allowed)
        if extra:
            raise ApiError(422, "invalid_field", f"unknown field {extra[0]!r}")
        reason = data.get("reason", "")
        if not isinstance(reason, str) or len(reason) > 200 or not ASCII.match(reason):
            raise ApiError(422, "invalid_field", "reason must be a string of at most 200 printable ASCII characters")
        command: Callable[[RoundEngine], Any]
        if action == "pause":
            command = lambda e: e.pause(reason)  # noqa: E731
        elif action == "resume":
            command = RoundEngine.resume
        elif action == "cancel":
            command = lambda e: e.cancel(reason)  # noqa: E731
        elif action == "open":
            command = RoundEngine.open_round
        elif action == "correct":
            round_id, faces = data.get("round_id"), data.get("faces")
            if type(round_id) is not int or not isinstance(faces, str):
                raise ApiError(422, "invalid_field", "correct needs round_id (integer) and faces (4 of R/W)")
            command = lambda e: e.correct(round_id, faces)  # noqa: E731
        else:
            raise ApiError(404, "unknown_action", f"unknown supervisor action {action!r}")
        await self._run(command)
        return JSONResponse({"ok": True, "table": await self._run(_table_state)})

    async def provision(self, request: Request) -> Response:
        """Create test players, each with a wallet and a token (supervisor only; :mod:`gameserver.provision`)."""
        self._supervisor(request)
        players = parse_players(await read_json(request), set(self.tokens))

        def open_all(engine: RoundEngine) -> None:
            taken = [pid for pid, _, _ in players if pid in engine.wallets]
            if taken:
                raise Rejection("wallet_exists", f"player {taken[0]!r} already has a wallet")
            for pid, _, balance in players:
                engine.open_wallet(pid, balance)

        await self._run(open_all)
        for pid, token, _ in players:
            self.tokens[token] = Principal(pid, "player")
        return JSONResponse({"ok": True, "players": [pid for pid, _, _ in players]})

    async def stream(self, ws: WebSocket) -> None:
        """Round events as JSON text messages; a player sees public events only (no other player's bets)."""
        try:
            who = self._auth(ws)
        except ApiError as exc:  # accepted, then closed: a close code reaches the client, an HTTP 403 would not say why
            await ws.accept()
            await ws.close(code=WS_CLOSE.get(exc.code, 4403), reason=exc.code)
            return
        await ws.accept()
        q: asyncio.Queue[list[EventViews] | None] = asyncio.Queue()
        entry = (q, who)
        self.streams.add(entry)
        watcher = asyncio.create_task(self._watch_disconnect(ws, q))
        player = who.id if who.role == "player" else None
        try:
            if player is not None:
                await self._run(lambda e: self.sessions.opened(e, player))
            await ws.send_json({"kind": "hello", "table": await self._run(_table_state)})
            supervisor = who.role == "supervisor"
            while True:
                views = await q.get()
                if views is None:
                    break
                for view in views:
                    text = view.supervisor() if supervisor else view.player(who.id)
                    if text is not None:
                        await ws.send_text(text)
        except (WebSocketDisconnect, RuntimeError, ApiError):
            pass
        finally:
            self.streams.discard(entry)
            watcher.cancel()
            if player is not None:  # the server learns of every end of a player's stream, a drop included
                with contextlib.suppress(ApiError):
                    await self._run(lambda e: self.sessions.closed(e, player))
        with contextlib.suppress(Exception):
            await ws.close()

    @staticmethod
    async def _watch_disconnect(ws: WebSocket, q: asyncio.Queue[list[EventViews] | None]) -> None:
        """Wake the stream up when the client goes away (it sends nothing we need)."""
        with contextlib.suppress(Exception):
            while (await ws.receive())["type"] != "websocket.disconnect":
                pass
        q.put_nowait(None)


def _resolve(answer: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if answer.cancelled():  # the request went away while its command ran
        return
    if error is None:
        answer.set_result(value)
    else:
        answer.set_exception(error)


def _table_state(engine: RoundEngine) -> dict[str, Any]:
    r = engine.round
    if r is None:
        return {"round_id": None, "phase": None}
    return {
        "round_id": r.round_id,
        "phase": str(r.phase),
        "paused": r.paused_reason,
        "closes_at": r.closes_at,
        "bets": len(r.bets),
        "reshakes": r.reshakes,
        "faces": r.faces,
    }


def _cell(value: Any) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


def _csv(header: list[str], rows: Any, filename: str) -> Response:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return Response(
        buf.getvalue(),
        media_type="text/csv",
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )
