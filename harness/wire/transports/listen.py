"""The device end of a line as a TCP server that the game server dials, as a foreign vendor's server dials its
controller and its result camera: :class:`ListenPort`, named in a bench file as ``listen://HOST:PORT``
(:func:`parse_listen_url`; docs/benches.md, "Device ends that listen"). The server opens it as pyserial's
``socket://HOST:PORT`` (:attr:`ListenPort.address`).

One client at a time, like a serial line: a connection that comes while a client is connected (or while the port is
unplugged) is refused, closed at once, and counted in :attr:`ListenPort.refused`. With no client, bytes the device
writes are lost as on an unplugged cable, and counted in ``dropped``. A connection that ends and a new one that comes
are the cable pulled and put back: :attr:`ListenPort.connected` stays False through the first :meth:`ListenPort.tick`
after a connection ends, so an owner that ticks before it looks at ``connected`` (the device hub) always sees the
line go down and come back, and closes and opens its device end (the device sends HELLO again). A client that
reconnects before its old connection's end was read is that re-plug too, not a second client.
"""

from __future__ import annotations

import contextlib
import re
import select
import socket
from dataclasses import dataclass

from harness.wire.transports.base import Transport, TransportClosed

__all__ = ["LISTEN_FORMS", "ListenAddress", "ListenPort", "ListenUrlError", "is_listen_url", "parse_listen_url"]

SCHEME = "listen://"
#: The form a ``listen://`` URL takes, as error messages name it.
LISTEN_FORMS = (
    "listen://HOST:PORT (HOST a name or an IPv4 address, an IPv6 address in [brackets]; PORT 0-65535, 0: any free port)"
)
MAX_PORT = 65535
BACKLOG = 4  # connections the kernel holds until the next tick accepts (the first) or refuses (the others)
RECV_BYTES = 65536
_HOST_PORT = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)):(?P<port>\d+)"
)


class ListenUrlError(ValueError):
    """A ``listen://`` URL that does not name a host and a port; :attr:`why` says what is wrong with it."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"{url!r}: {why}; must be {LISTEN_FORMS}")
        self.url = url
        self.why = why


@dataclass(frozen=True, slots=True)
class ListenAddress:
    """Where a device end listens: ``host`` (a name or an address, IPv6 without brackets) and ``port`` (0: any free
    port, chosen when it binds)."""

    host: str
    port: int

    @property
    def hostport(self) -> str:
        """``HOST:PORT``, an IPv6 host in brackets."""
        return _hostport(self.host, self.port)


def is_listen_url(url: str) -> bool:
    """True when ``url`` names a device end that listens (``listen://``, any case); anything else is a URL or path
    the device end dials or opens with pyserial."""
    return url[: len(SCHEME)].lower() == SCHEME


def parse_listen_url(url: str) -> ListenAddress:
    """The host and port of a ``listen://HOST:PORT`` URL.

    Raises:
        ListenUrlError: ``url`` is not ``listen://`` followed by exactly ``HOST:PORT`` (an empty or malformed host, no
            port, a port that is not a whole number in 0-65535, a path or anything else after the port).
    """
    if not is_listen_url(url):
        raise ListenUrlError(url, "not a listen:// URL")
    rest = url[len(SCHEME) :]
    found = _HOST_PORT.fullmatch(rest)
    if found is None:
        why = "no port" if ":" not in rest else "the host or the port is malformed"
        raise ListenUrlError(url, why)
    port = int(found["port"])
    if port > MAX_PORT:
        raise ListenUrlError(url, f"port {port} is out of range")
    return ListenAddress(found["v6"] or found["host"], port)


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ListenPort(Transport):
    """A listening TCP port carrying one device's serial line (raw bytes), bound when constructed.

    Reads and writes go to the client connected now. :meth:`tick` accepts a waiting client (so :attr:`connected`
    turns True before any byte is read) and refuses the others: an owner ticks it before it reads (the device hub
    does, on every service). It is
    :class:`~harness.wire.transports.capabilities.Pluggable`: :meth:`unplug` ends the client's connection and refuses
    every connection until :meth:`replug`.

    Raises:
        TransportClosed: the address cannot be bound (in use, not this machine's, a name that does not resolve); the
            message names the line and the address.
    """

    def __init__(self, name: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.name = name
        self.host = host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port in TIME_WAIT binds again at once
            listener.bind((host, port))
            listener.listen(BACKLOG)
        except OSError as exc:
            listener.close()
            why = exc.strerror or str(exc)
            raise TransportClosed(f"{name}: cannot listen on {_hostport(host, port)}: {why}") from exc
        listener.setblocking(False)
        self.listener = listener
        self.port = int(listener.getsockname()[1])
        self.client: socket.socket | None = None
        #: Connections refused: a second client while one is connected, or any while unplugged.
        self.refused = 0
        #: Clients accepted so far.
        self.accepted = 0
        self._unplugged = False
        self._closed = False
        self._ended = False  # a connection ended since the last tick: the next tick makes no client
        self._held: socket.socket | None = None  # a client that reconnected before its old connection's end was read

    @property
    def address(self) -> str:
        """What the game server opens: ``socket://HOST:PORT``, with the port bound (the one chosen for port 0)."""
        return f"socket://{_hostport(self.host, self.port)}"

    @property
    def connected(self) -> bool:
        """True while a client is connected (and the port is neither unplugged nor closed)."""
        return self.client is not None and not self._unplugged and not self._closed

    def fds(self) -> list[int]:
        """The listener's descriptor (readable when a client connects) and the client's, when one is connected; none
        once closed."""
        if self._closed:
            return []
        fds = [self.listener.fileno()]
        if self.client is not None:
            fds.append(self.client.fileno())
        return fds

    def tick(self, now: float) -> float | None:
        """Accept the waiting connections. The first becomes the client when none is connected; one that comes while
        the client's connection has ended unread (a client that reconnected at once) is held and becomes the client
        two ticks later; the others are refused (:attr:`refused`), and every one while unplugged. The first tick after
        a connection ended makes no client, so :attr:`connected` is False through it. Returns ``now`` while a
        connection is held (the next tick makes it the client), else None."""
        if self._closed:
            return None
        if self._ended and not self._unplugged:
            self._ended = False
            return now if self._held is not None else None
        if self.client is None and self._held is not None and not self._unplugged:
            self._take(self._held)
            self._held = None
        while True:
            try:
                sock, _peer = self.listener.accept()
            except OSError:  # none waiting (BlockingIOError), or one that went away before it was accepted
                break
            if self._unplugged or self._held is not None:
                self._refuse(sock)
            elif self.client is None:
                self._take(sock)
            elif _ended_unread(self.client):
                self._end_connection()
                self._held = sock
            else:
                self._refuse(sock)
        return now if self._held is not None else None

    def _take(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client = sock
        self.accepted += 1

    def _refuse(self, sock: socket.socket) -> None:
        self.refused += 1
        sock.close()

    def read(self, timeout_s: float = 0.0) -> bytes:
        """The bytes the client sent within ``timeout_s`` seconds (``b""`` if none, or with no client connected: a
        port nobody has dialled is not gone).

        Raises:
            TransportClosed: the port is closed or unplugged, or the client's connection ended during this read
                (the line is then down until a client connects again).
        """
        self._check_open()
        client = self.client
        if client is None:
            return b""
        if timeout_s > 0:
            ready, _, _ = select.select([client], [], [], timeout_s)
            if not ready:
                return b""
        try:
            data = client.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            self._end_connection()
            raise TransportClosed(f"{self.name}: the client's connection failed: {exc.strerror or exc}") from exc
        if not data:
            self._end_connection()
            raise TransportClosed(f"{self.name}: the client closed its connection")
        return data

    def write(self, data: bytes) -> None:
        """Send ``data`` to the client without blocking. What cannot go (no client connected, a client whose buffers
        are full, a connection that failed, which then ends) is lost and counted in ``dropped``.

        Raises:
            TransportClosed: the port is closed or unplugged.
        """
        self._check_open()
        client = self.client
        if client is None:
            self.dropped += len(data)
            return
        view = memoryview(data)
        try:
            while view:
                view = view[client.send(view) :]
        except BlockingIOError:
            self.dropped += len(view)
        except OSError:
            self.dropped += len(view)
            self._end_connection()

    def unplug(self) -> None:
        """Pull the cable: the client's connection ends (the server sees its socket closed) and every connection is
        refused until :meth:`replug`; reads and writes raise TransportClosed meanwhile. Idempotent."""
        self._end_connection()
        self._drop_held()
        self._unplugged = True

    def replug(self) -> None:
        """Put the cable back: the next client that connects (after one more tick) is the line's. Idempotent."""
        self._unplugged = False

    def close(self) -> None:
        """End the client's connection and stop listening; idempotent."""
        self._end_connection()
        self._drop_held()
        if not self._closed:
            self._closed = True
            self.listener.close()

    def _check_open(self) -> None:
        if self._closed:
            raise TransportClosed(f"{self.name}: closed")
        if self._unplugged:
            raise TransportClosed(f"{self.name}: unplugged")

    def _end_connection(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(OSError):
                client.close()
            self._ended = True

    def _drop_held(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.close()


def _ended_unread(sock: socket.socket) -> bool:
    """True when the peer of the non-blocking ``sock`` closed its connection (or it failed) and nothing it sent is left
    to read."""
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
