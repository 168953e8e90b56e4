"""The reference server's HTTP/WebSocket application (``gameserver.api.Api``) in the bench's own process, over the
in-process adapter's engine, in virtual time: the in-process bench's ``api: http``.

:class:`EngineFacade` is what the API needs of a ``gameserver.service.GameService``: each command runs on the
engine at once, on the caller's thread, and its events are committed (recorded, stored in the ledger, the lamp
commands queued) before the command is answered, as the service's group commit does; the engine is ticked on the
bench's grid, never by a command. :class:`AsgiHost` builds the application and sends it requests through ASGI on
an event loop of its own, run only while a request is answered: the request parsing, the authentication and the
endpoints are the server's own, and no socket or thread of a server is involved (the API's ledger reads run on
the loop's worker threads, as they do in the server process). Time does not pass while a request is answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from starlette.types import Message

from gameserver.api import Api, read_inline
from gameserver.config import Principal
from gameserver.engine import RoundEngine
from gameserver.events import ROUND_ENDS, Event
from gameserver.ledger import Ledger
from gameserver.model import Rejection
from gameserver.service import ServiceStopped
from harness.errors import AdapterError

__all__ = ["REQUEST_TIMEOUT_S", "AsgiHost", "EngineFacade", "Stream"]

#: Wall seconds one request may take to be answered (the engine answers at once; only the ledger reads wait).
REQUEST_TIMEOUT_S = 10.0
#: Batches of events handed to the API's streams before its event loop is run to deliver them (a stream that falls
#: 1000 batches behind is dropped by the API).
_DELIVER_EVERY = 100

Done = Callable[[Any, BaseException | None], None]


class EngineFacade:
    """A ``GameService`` as :class:`gameserver.api.Api` uses it, over an engine run by someone else.

    ``engine`` and ``ledger`` return the current ones; ``commit`` records the events the engine holds (raising when
    they cannot be: the server died or its ledger refused them); ``failure`` says why the engine stopped, if it
    did. :meth:`stop` makes every later command fail with ``ServiceStopped``, as a dead service's do.
    """

    def __init__(
        self,
        engine: Callable[[], RoundEngine],
        ledger: Callable[[], Ledger],
        commit: Callable[[], None],
        failure: Callable[[], str | None],
    ) -> None:
        self._engine, self._ledger, self._commit, self._failure = engine, ledger, commit, failure
        self._subscribers: list[Callable[[list[Event]], None]] = []
        self.running = True

    @property
    def engine(self) -> RoundEngine:
        return self._engine()

    @property
    def ledger(self) -> Ledger:
        return self._ledger()

    @property
    def failure(self) -> str | None:
        return self._failure()

    def stop(self) -> None:
        """Take no more commands (a killed server's API answers none)."""
        self.running = False

    def subscribe(self, callback: Callable[[list[Event]], None]) -> None:
        """Call ``callback(events)`` after each committed batch (:meth:`publish`)."""
        self._subscribers.append(callback)

    def publish(self, events: list[Event]) -> None:
        """Hand committed ``events`` to the subscribers, in order."""
        for callback in self._subscribers:
            callback(events)

    def submit_then(self, command: Callable[[RoundEngine], Any], done: Done) -> None:
        """Run ``command(engine)`` now, commit its events, then call ``done(value, None)``; ``done(None, error)``
        with the Rejection (nothing changed: its events, if any, are committed all the same), the error of a command
        that failed, the commit's error, or ``ServiceStopped`` when stopped or the engine has failed."""
        if not self.running or self.failure is not None:
            done(None, ServiceStopped(self.failure or "the engine is not running"))
            return
        value: Any = None
        error: BaseException | None = None
        try:
            value = command(self.engine)
        except Rejection as exc:
            error = exc
        except Exception as exc:  # an engine bug: the caller is told, the table runs on
            error = exc
        try:
            self._commit()
        except Exception as exc:
            done(None, exc)
            return
        done(None if error is not None else value, error)


@dataclass
class Stream:
    """One open ``/v1/stream`` WebSocket: its connection task on the host's loop and its inbox."""

    task: asyncio.Task[None]
    inbox: asyncio.Queue[dict[str, Any]]
    messages: int = 0  # messages the server sent on it, the hello included


@dataclass
class _Response:
    status: int = 0
    body: bytearray = field(default_factory=bytearray)


class AsgiHost:
    """The API's ASGI application on an event loop of this host, started (its lifespan) at construction.

    Raises:
        AdapterError: ``start_failed`` when the application's startup fails.
    """

    def __init__(
        self,
        facade: EngineFacade,
        tokens: Mapping[str, Principal],
        health: Callable[[], dict[str, Any]],
        identity: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        """``identity``: the body of ``GET /v1/identity`` (:class:`gameserver.api.Api`); None: 404."""
        self.facade = facade
        # the facade is what Api uses of a service; this loop serves one request at a time, so reads run inline
        api = Api(facade, tokens, health, identity, read=read_inline)  # type: ignore[arg-type]
        self.api = api
        self.app = self.api.app()
        self.loop = asyncio.new_event_loop()
        self._published = 0
        self._shutdown: asyncio.Future[None] = self.loop.create_future()
        started: asyncio.Future[str] = self.loop.create_future()
        self._lifespan = self.loop.create_task(self._run_lifespan(started))
        outcome = self._run(started)
        if outcome != "lifespan.startup.complete":
            self.close()
            raise AdapterError("start_failed", f"the API did not start: {outcome}")

    # ------------------------------------------------------------------ the loop
    def _run(self, coroutine: Coroutine[Any, Any, Any] | asyncio.Future[Any]) -> Any:
        """Run the loop until ``coroutine`` is done (bounded by :data:`REQUEST_TIMEOUT_S`); its result.

        Raises:
            AdapterError: ``unreachable`` when it takes longer.
        """
        try:
            return self.loop.run_until_complete(asyncio.wait_for(coroutine, REQUEST_TIMEOUT_S))
        except TimeoutError:
            raise AdapterError("unreachable", f"the API did not answer within {REQUEST_TIMEOUT_S:g} s") from None

    def events(self, events: list[Event]) -> None:
        """Committed ``events``, for the API's streams; delivered (the loop run) with a batch that ends a round
        (:data:`gameserver.events.ROUND_ENDS`: its clients have all its events by then, and the next request does not
        carry the round's delivery), every :data:`_DELIVER_EVERY` batches, and on every request."""
        self.facade.publish(events)
        self._published += 1
        due = self._published >= _DELIVER_EVERY or any(e.kind in ROUND_ENDS for e in events)
        if due and not self.loop.is_running() and self.api.streams:
            self._published = 0
            self.loop.run_until_complete(asyncio.sleep(0))

    async def _run_lifespan(self, started: asyncio.Future[str]) -> None:
        sent_startup = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_startup
            if not sent_startup:
                sent_startup = True
                return {"type": "lifespan.startup"}
            await self._shutdown
            return {"type": "lifespan.shutdown"}

        async def send(message: Message) -> None:
            if not started.done() and message["type"].startswith("lifespan.startup"):
                started.set_result(message["type"] + (f": {message['message']}" if message.get("message") else ""))

        try:
            await self.app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
        finally:
            if not started.done():
                started.set_result("the application ended its lifespan")

    def close(self) -> None:
        """End the lifespan, every stream and the loop; never raises."""
        with contextlib.suppress(Exception):
            for q, _ in list(self.api.streams):
                q.put_nowait(None)
            if not self._shutdown.done():
                self._shutdown.set_result(None)
            pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
            if pending:
                self.loop.run_until_complete(asyncio.wait(pending, timeout=REQUEST_TIMEOUT_S))
            for task in pending:
                task.cancel()
            if pending:  # a cancelled task ends only when the loop runs it once more
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_default_executor())
        with contextlib.suppress(Exception):
            self.loop.close()

    # ------------------------------------------------------------------ HTTP
    def request(self, method: str, path: str, token: str | None, body: Any = None) -> tuple[int, Any]:
        """One HTTP request through the application (``path`` with its query; ``token`` None: no
        ``Authorization`` header; ``body`` None: none); returns (status, decoded JSON body, or an error body when
        it is not JSON).

        Raises:
            AdapterError: ``unreachable`` when it is not answered in time.
        """
        raw = b"" if body is None else json.dumps(body).encode()
        headers = [(b"host", b"xocdia-server"), (b"content-length", str(len(raw)).encode())]
        if body is not None:
            headers.append((b"content-type", b"application/json"))
        if token is not None:
            headers.append((b"authorization", f"Bearer {token}".encode()))
        response = self._run(self._http(method, path, headers, raw))
        try:
            return response.status, json.loads(bytes(response.body))
        except ValueError:
            text = bytes(response.body[:200]).decode(errors="replace")
            return response.status, {"error": {"code": "bad_response", "message": text}}

    async def _http(self, method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes) -> _Response:
        parts = urlsplit(path)
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": parts.path,
            "raw_path": parts.path.encode(),
            "query_string": parts.query.encode(),
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 40000),
            "server": ("127.0.0.1", 80),
            "state": {},
        }
        response = _Response()
        answered = asyncio.Event()
        requested = False

        async def receive() -> dict[str, Any]:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": body, "more_body": False}
            await answered.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                response.status = int(message["status"])
            elif message["type"] == "http.response.body":
                response.body += message.get("body", b"")
                if not message.get("more_body", False):
                    answered.set()

        await self.app(scope, receive, send)
        answered.set()
        return response

    # ------------------------------------------------------------------ WebSocket streams
    def open_stream(self, token: str | None) -> tuple[Stream | None, int | None, str]:
        """Open ``/v1/stream`` with ``token`` (None: no ``?token=``) and wait for the server's first message:
        (the open stream, None, "") after its hello, or (None, close code, reason) when it closed the stream.

        Raises:
            AdapterError: ``unreachable`` when the server says nothing in time.
        """
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        inbox.put_nowait({"type": "websocket.connect"})
        first: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        query = b"" if token is None else f"token={token}".encode()
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "scheme": "ws",
            "path": "/v1/stream",
            "raw_path": b"/v1/stream",
            "query_string": query,
            "root_path": "",
            "headers": [(b"host", b"xocdia-server")],
            "client": ("127.0.0.1", 40001),
            "server": ("127.0.0.1", 80),
            "subprotocols": [],
            "state": {},
        }
        counter = [0]

        async def send(message: Message) -> None:
            kind = message["type"]
            if kind == "websocket.send":
                counter[0] += 1
            if kind in ("websocket.send", "websocket.close") and not first.done():
                first.set_result(dict(message))

        async def connection() -> None:
            try:
                await self.app(scope, inbox.get, send)
            finally:
                if not first.done():
                    first.set_result({"type": "websocket.close", "code": 1011, "reason": "ended"})

        task = self.loop.create_task(connection())
        message = self._run(asyncio.shield(first))
        if message["type"] == "websocket.close":
            self._run(task)
            return None, int(message.get("code", 1000)), str(message.get("reason", ""))
        stream = Stream(task, inbox)
        stream.messages = counter[0]
        return stream, None, ""

    def close_stream(self, stream: Stream) -> None:
        """The client goes away without a goodbye (a dropped network): the server runs its end of the stream.
        Never raises."""
        stream.inbox.put_nowait({"type": "websocket.disconnect", "code": 1006})
        with contextlib.suppress(Exception):
            self._run(stream.task)
