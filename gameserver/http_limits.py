"""Limits on unfinished HTTP requests and on connections, enforced in the server's HTTP protocol (uvicorn's
httptools protocol, extended), before the application sees anything.

- **Request head size**: the request line and headers of one request may take at most ``max_header_bytes``; more,
  and the answer is ``431`` with ``Connection: close``; the body is never read.
- **Header timeout**: a request's head must arrive within ``header_timeout_s`` of its first byte (or of the
  connection opening, for its first request): else ``408`` and close (a connection that sent nothing is closed).
- **Body timeout**: a request's body must arrive within ``body_timeout_s`` of the end of its head: else ``408``
  and close (the application sees a disconnect, so nothing is submitted).
- **Keep-alive idle**: a connection with no request for ``keep_alive_s`` after a response is closed (uvicorn's
  ``timeout_keep_alive``).
- **Connection caps**: at most ``max_connections`` HTTP connections in all and ``max_connections_per_client`` from
  one client address. A new connection over a cap closes the oldest *idle* connection under that cap (one that is
  between requests or still sending its head); only when every connection under the cap is being served is the new
  one refused (``503``, closed). Idle or slow connections therefore never lock out a client that is served.

WebSocket limits (message size, queue, pings) are uvicorn's own options. The protocol is
:mod:`gameserver.http_protocol`; this module only states the limits (it needs no HTTP parser).
"""

from __future__ import annotations

import resource
from dataclasses import dataclass, replace

#: File descriptors kept free below the open-file limit for the ledger, the devices, the trace and the listener.
FD_RESERVE = 64


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The HTTP and WebSocket limits (docs/server.md, "HTTP limits"); every field has a safe default."""

    max_header_bytes: int = 16 * 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    keep_alive_s: int = 15
    max_connections: int = 1000
    max_connections_per_client: int = 100
    ws_max_message_bytes: int = 64 * 1024
    ws_max_queue: int = 32
    ws_ping_interval_s: float = 20.0
    ws_ping_timeout_s: float = 20.0

    def fitted(self) -> HttpLimits:
        """These limits with ``max_connections`` (and the per-client cap) lowered, when needed, to what the
        process's open-file limit allows with :data:`FD_RESERVE` descriptors to spare."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self
        room = max(1, soft - FD_RESERVE)
        if self.max_connections <= room:
            return self
        return replace(
            self, max_connections=room, max_connections_per_client=min(room, self.max_connections_per_client)
        )


#: (field, kind, low, high): the allowed values of each limit, as the config file states them.
FIELDS: tuple[tuple[str, type, float, float], ...] = (
    ("max_header_bytes", int, 1024, 1024 * 1024),
    ("header_timeout_s", float, 0.1, 3600),
    ("body_timeout_s", float, 0.1, 3600),
    ("keep_alive_s", int, 1, 3600),
    ("max_connections", int, 1, 100_000),
    ("max_connections_per_client", int, 1, 100_000),
    ("ws_max_message_bytes", int, 1024, 16 * 1024 * 1024),
    ("ws_max_queue", int, 1, 1024),
    ("ws_ping_interval_s", float, 1, 3600),
    ("ws_ping_timeout_s", float, 1, 3600),
)
