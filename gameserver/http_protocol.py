"""The server's HTTP protocol: uvicorn's httptools protocol with the limits of
:class:`~gameserver.http_limits.HttpLimits` enforced before the application sees a request (what each limit does:
:mod:`gameserver.http_limits`, docs/server.md "HTTP limits")."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from gameserver.http_limits import HttpLimits


def _response(status: bytes, text: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: "
        + str(len(text)).encode() + b"\r\nconnection: close\r\n\r\n" + text
    )  # fmt: skip


_TOO_LARGE = _response(b"431 Request Header Fields Too Large", b"request header fields too large")
_HEADER_TIMEOUT = _response(b"408 Request Timeout", b"request header not received in time")
_BODY_TIMEOUT = _response(b"408 Request Timeout", b"request body not received in time")
_FULL = _response(b"503 Service Unavailable", b"too many connections")
#: How long a connection answered 431 is kept to discard what its client still sends (so the answer is read).
_LINGER_S = 1.0


#: How often (s) the deadlines of a server's connections are checked: timeouts are enforced within this of their
#: value, with no timer armed per request.
SWEEP_S = 0.5


class _Registry:
    """The open HTTP connections of one server, oldest first, in all and per client address; checks their
    deadlines every :data:`SWEEP_S` while any is open."""

    def __init__(self) -> None:
        self.all: dict[LimitedHttpProtocol, None] = {}
        self.by_client: dict[str, dict[LimitedHttpProtocol, None]] = {}
        self.now = 0.0  # the loop's time at the last sweep (deadlines are set from it)
        self._sweeping: asyncio.TimerHandle | None = None

    def add(self, conn: LimitedHttpProtocol) -> None:
        self.all[conn] = None
        self.by_client.setdefault(conn.client_host, {})[conn] = None
        if self._sweeping is None:
            self.now = conn.loop.time()
            self._sweeping = conn.loop.call_later(SWEEP_S, self._sweep, conn.loop)

    def discard(self, conn: LimitedHttpProtocol) -> None:
        self.all.pop(conn, None)
        mine = self.by_client.get(conn.client_host)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.by_client[conn.client_host]

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self.now = now = loop.time()
        for conn in [c for c in self.all if c.deadline is not None and c.deadline <= now]:
            conn.expire()
        self._sweeping = loop.call_later(SWEEP_S, self._sweep, loop) if self.all else None


_HEAD, _BODY = 1, 2


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the limits of :class:`HttpLimits` (:mod:`gameserver.http_limits`). Built by
    :func:`protocol_class`, which binds the limits and one registry of connections per server."""

    limits: HttpLimits = HttpLimits()
    registry: _Registry = _Registry()

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.client_host = ""
        self.deadline: float | None = None  # when the head (or body) in progress must be complete (loop time)
        self._waiting = 0  # _HEAD or _BODY: what the deadline is for
        self._in_head = True  # between requests or receiving a request's head
        self._head_bytes = 0  # bytes received since the head began (bounds what the parser buffers)
        self._too_large = False
        self._tracked = False
        self._closing = False

    # ------------------------------------------------------------------ connections and caps
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.client_host = self.client[0] if self.client else ""
        reg, limits = self.registry, self.limits
        reg.add(self)
        self._tracked = True
        mine = reg.by_client[self.client_host]
        if len(mine) > limits.max_connections_per_client and not _evict_idle(mine, self):
            self._refuse()
            return
        if len(reg.all) > limits.max_connections and not _evict_idle(reg.all, self):
            self._refuse()
            return
        self.deadline, self._waiting = reg.now + limits.header_timeout_s, _HEAD

    def connection_lost(self, exc: Exception | None) -> None:
        self._untrack()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        self._untrack()
        super().handle_websocket_upgrade()

    def _untrack(self) -> None:
        self.deadline = None
        if self._tracked:
            self.registry.discard(self)
            self._tracked = False

    @property
    def idle(self) -> bool:
        """Between requests, or still sending a request's head: nothing of it is being served."""
        return self._in_head and (self.cycle is None or self.cycle.response_complete) and not self.pipeline

    def _refuse(self) -> None:
        self._close_with(_FULL)

    def evict(self) -> None:
        """Close this idle connection to make room for a new one."""
        self._close_with(b"")

    def _close_with(self, response: bytes) -> None:
        self._untrack()
        self._closing = True
        if not self.transport.is_closing():
            if response:
                self.transport.write(response)
            self.transport.close()

    # ------------------------------------------------------------------ the request head and body
    def data_received(self, data: bytes) -> None:
        if self._closing:
            return  # answered and closing: what the client still sends is discarded unread
        if self._in_head:
            if self.deadline is None:
                self.deadline, self._waiting = self.registry.now + self.limits.header_timeout_s, _HEAD
            self._head_bytes += len(data)
        super().data_received(data)
        over = self._too_large or (self._in_head and self._head_bytes > self.limits.max_header_bytes)
        if over and not self.transport.is_closing():
            self._linger_with(_TOO_LARGE)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > self.limits.max_header_bytes or self._closing:
            self.deadline = None
            self._too_large = not self._closing
            self._closing = True  # no request is made of it; the rest of what was received is ignored
            return
        self.deadline, self._waiting = self.registry.now + self.limits.body_timeout_s, _BODY
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self._closing:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self.deadline = None
        if not self._closing:
            super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        cycle = self.cycle
        if cycle is None or (cycle.response_complete and not cycle.more_body):
            self._in_head = True
            self._head_bytes = 0

    def _linger_with(self, response: bytes) -> None:
        """Answer, stop reading the request, and close after a short linger (so the client reads the answer)."""
        self._untrack()
        self._closing = True
        if self.cycle is not None:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.write(response)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_LINGER_S, self.transport.close)

    # ------------------------------------------------------------------ deadlines
    def expire(self) -> None:
        """The deadline passed: a head not complete is ``408`` (closed without an answer when nothing of it came),
        a body not complete is ``408`` (or a bare close once the response began); the application sees a
        disconnect."""
        self.deadline = None
        if self.transport.is_closing():
            return
        if self._waiting == _HEAD:
            if self._in_head:
                self._close_with(_HEADER_TIMEOUT if self._head_bytes else b"")
            return
        cycle = self.cycle
        if cycle is None or not cycle.more_body:
            return
        started = cycle.response_started
        cycle.disconnected = True
        cycle.message_event.set()
        self._close_with(b"" if started else _BODY_TIMEOUT)


def _evict_idle(conns: dict[LimitedHttpProtocol, None], newcomer: LimitedHttpProtocol) -> bool:
    """Close the oldest idle connection of ``conns`` other than ``newcomer``; False when every one is served."""
    for conn in conns:
        if conn is not newcomer and conn.idle:
            conn.evict()
            return True
    return False


def protocol_class(limits: HttpLimits) -> type[LimitedHttpProtocol]:
    """A protocol class for one server (uvicorn's ``Config(http=...)``): ``limits`` and a fresh registry bound."""
    return type("BoundLimitedHttpProtocol", (LimitedHttpProtocol,), {"limits": limits, "registry": _Registry()})


def uvicorn_options(limits: HttpLimits) -> dict[str, Any]:
    """The ``uvicorn.Config`` keyword arguments that carry ``limits``: the HTTP protocol, the keep-alive idle
    timeout and the WebSocket limits (no per-message compression: a small frame cannot inflate past the limit)."""
    return {
        "http": protocol_class(limits),
        "timeout_keep_alive": limits.keep_alive_s,
        "ws_max_size": limits.ws_max_message_bytes,
        "ws_max_queue": limits.ws_max_queue,
        "ws_ping_interval": limits.ws_ping_interval_s,
        "ws_ping_timeout": limits.ws_ping_timeout_s,
        "ws_per_message_deflate": False,
    }
