"""A TCP fault proxy on loopback, between one player and a game-server process: the real implementation of the
player-link seam (:mod:`harness.faults.links` is the in-memory one): one :class:`FaultProxy` per player.

One asyncio event loop on a daemon thread serves every proxy of a :class:`ProxyHub`; :meth:`ProxyHub.close`
stops it and closes every socket (bounded wait).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
CALL_TIMEOUT_S = 5.0


class ProxyHub:
    """The event loop thread shared by several proxies."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="fault-proxy", daemon=True)
        self._thread.start()
        self.proxies: list[FaultProxy] = []

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it (bounded). Raises TimeoutError after CALL_TIMEOUT_S."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=CALL_TIMEOUT_S)

    def proxy(self, upstream_host: str, upstream_port: int) -> FaultProxy:
        """A new proxy to ``upstream``, listening on a free loopback port."""
        proxy = FaultProxy(self, upstream_host, upstream_port)
        self.call(proxy._start())
        self.proxies.append(proxy)
        return proxy

    def close(self) -> None:
        """Close every proxy and stop the loop; idempotent, never raises."""
        if not self.loop.is_running():
            return
        for proxy in self.proxies:
            with contextlib.suppress(Exception):
                self.call(proxy._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=CALL_TIMEOUT_S)
        with contextlib.suppress(RuntimeError):
            self.loop.close()


class FaultProxy:
    """One player's link: listens on ``127.0.0.1:<port>`` (``port`` is where the player connects) and forwards every
    connection to ``upstream``. Its faults, switchable at any time from any thread:

    - ``latency``: every chunk is delivered ``latency`` seconds late, in both directions;
    - ``blackhole``: bytes from the player are swallowed (the connection stays open, nothing arrives);
    - ``reset_replies``: requests go through, but the first bytes the server sends back abort the connection with
      a TCP RST instead (the request landed; the player never sees the answer);
    - :meth:`reset`: every open connection is aborted with a TCP RST (SO_LINGER 0) on both sides;
    - ``down``: new connections are accepted and immediately reset, and :meth:`reset` is applied (a disconnect;
      clearing ``down`` is the reconnect).
    """

    def __init__(self, hub: ProxyHub, upstream_host: str, upstream_port: int) -> None:
        self.hub = hub
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.latency = 0.0
        self.blackhole = False
        self.reset_replies = False
        self.down = False
        self.connections = 0  # accepted so far (for tests and evidence)
        self.swallowed = 0  # bytes dropped by the blackhole
        self.replies_reset = 0  # answers turned into an RST
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    # ------------------------------------------------------------------ control (any thread)
    def set(
        self,
        *,
        latency: float | None = None,
        blackhole: bool | None = None,
        reset_replies: bool | None = None,
        down: bool | None = None,
    ) -> None:
        """Switch faults; ``down=True`` also resets every open connection."""
        if latency is not None:
            self.latency = max(0.0, latency)
        if blackhole is not None:
            self.blackhole = blackhole
        if reset_replies is not None:
            self.reset_replies = reset_replies
        if down is not None:
            self.down = down
            if down:
                self.reset()

    def heal(self) -> None:
        self.set(latency=0.0, blackhole=False, reset_replies=False, down=False)

    def reset(self) -> None:
        """Abort every open connection with an RST."""
        self.hub.call(self._reset_all())

    def retarget(self, host: str, port: int) -> None:
        """Forward new connections to another upstream (a restarted server on a new port)."""
        self.upstream = (host, port)

    # ------------------------------------------------------------------ the loop side
    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _stop(self) -> None:
        await self._reset_all()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _reset_all(self) -> None:
        for writer in list(self._open):
            _abort(writer)
        self._open.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.down:
            _abort(writer)
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(*self.upstream), CALL_TIMEOUT_S)
        except (OSError, TimeoutError):
            _abort(writer)
            return
        self._open |= {writer, up_writer}
        try:
            await asyncio.gather(self._pipe(reader, up_writer, True), self._pipe(up_reader, writer, False))
        finally:
            for w in (writer, up_writer):
                self._open.discard(w)
                with contextlib.suppress(Exception):
                    w.close()

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, from_player: bool) -> None:
        try:
            while True:
                data = await src.read(65536)
                if not data:
                    break
                if from_player and self.blackhole:
                    self.swallowed += len(data)
                    continue
                if not from_player and self.reset_replies:
                    self.replies_reset += 1
                    await self._reset_all()
                    break
                if self.latency > 0:
                    await asyncio.sleep(self.latency)
                dst.write(data)
                await dst.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                if dst.can_write_eof():
                    dst.write_eof()


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close with SO_LINGER 0: the peer gets a TCP RST, not a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
