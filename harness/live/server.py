"""The live page's web server: one static page and the bench event feed, on a background thread.

Routes:

- ``GET /``: the page (``static/index.html``); ``GET /static/NAME``: its script and style (no external resources:
  the page works offline).
- ``GET /feed``: the feed as Server-Sent Events, from event ``?from=N`` (default 0; a reconnecting browser resumes
  from ``Last-Event-ID``), one ``data:`` line of the event's JSON each, ``id:`` its number; an ``end`` event
  (``event: closed``) when the feed is closed, after which the stream ends.
- ``GET /feed.json``: every event so far as one JSON array (replay loads it whole; tests read it).
- ``GET /info``: ``{"mode": "live" | "replay", "speed": X, "title": ..., "events": N, "closed": bool, "rounds": M}``
  (``rounds``: the rounds the command plays, the page's "round N of M"; 0 when not known).

:class:`LiveServer` runs uvicorn on its own thread with its own event loop; the bench keeps the main thread. The
server only reads the feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from harness.errors import InputError
from harness.feed import Feed

STATIC = Path(__file__).resolve().parent / "static"
POLL_S = 0.1  # how often an open event stream looks for new events
START_TIMEOUT_S = 10.0


class LiveAddressError(InputError):
    """A ``--live`` address that does not parse or cannot be listened on."""


def parse_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (host default 127.0.0.1; port 0 picks a free one) as (host, port).

    Raises:
        LiveAddressError: no port, a port that is not a whole number in 0..65535.
    """
    host, _, port_text = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise LiveAddressError(f"--live {text!r}: expected [HOST:]PORT, e.g. 8080 or 127.0.0.1:0") from None
    if not 0 <= port <= 65535:
        raise LiveAddressError(f"--live {text!r}: port must be 0..65535")
    return host, port


def build_app(feed: Feed, mode: str = "live", speed: float = 1.0, title: str = "", rounds: int = 0) -> Starlette:
    """The page's ASGI app over ``feed`` (read only); ``rounds``: the rounds the command plays (0: not known)."""

    async def page(_request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def info(_request: Request) -> Response:
        doc = {"mode": mode, "speed": speed, "title": title, "events": feed.count, "closed": feed.closed}
        return JSONResponse({**doc, "rounds": rounds})

    async def whole(_request: Request) -> Response:
        body = "[" + ",".join(feed.lines_since(0)) + "]"
        return Response(body, media_type="application/json")

    async def stream(request: Request) -> Response:
        first = request.query_params.get("from") or ""
        last_id = request.headers.get("last-event-id", "")
        start = int(last_id) + 1 if last_id.isdigit() else int(first) if first.isdigit() else 0

        async def events() -> AsyncIterator[str]:
            cursor = start
            yield "retry: 1000\n\n"
            while True:
                batch = feed.lines_since(cursor)
                if batch:
                    yield "".join(f"id: {seq}\ndata: {line}\n\n" for seq, line in enumerate(batch, cursor))
                    cursor += len(batch)
                elif feed.closed:
                    yield "event: closed\ndata: {}\n\n"
                    return
                elif await request.is_disconnected():
                    return
                else:
                    await asyncio.sleep(POLL_S)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

    routes = [
        Route("/", page),
        Route("/info", info),
        Route("/feed", stream),
        Route("/feed.json", whole),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes)


class LiveServer:
    """Serves :func:`build_app` on ``host:port`` from a daemon thread. :meth:`start` returns once it listens."""

    def __init__(
        self,
        feed: Feed,
        host: str,
        port: int,
        mode: str = "live",
        speed: float = 1.0,
        title: str = "",
        rounds: int = 0,
    ) -> None:
        self.feed = feed
        self.host = host
        self.port = port
        self.app = build_app(feed, mode, speed, title, rounds)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> str:
        """Listen and serve; returns the page's URL.

        Raises:
            LiveAddressError: the address cannot be listened on (in use, not an address of this machine).
        """
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise LiveAddressError(f"--live {self.host}:{self.port}: cannot listen ({exc.strerror})") from None
        sock.listen(64)
        self._sock = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1, access_log=False
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(target=lambda: server.run(sockets=[sock]), name="live-page", daemon=True)
        self._thread.start()
        waited = 0.0
        while not server.started and waited < START_TIMEOUT_S and self._thread.is_alive():
            threading.Event().wait(0.02)
            waited += 0.02
        return self.url

    def stop(self) -> None:
        """Close the feed's streams and stop serving (bounded: a few seconds at most). Never raises."""
        self.feed.close()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()


def info_json(server: LiveServer) -> str:
    """The address as one JSON line (for tools that start a command and read where its page is)."""
    return json.dumps({"url": server.url, "host": server.host, "port": server.port})
