"""Expose a device port as a network serial server, the way a lab's ser2net does: raw TCP (open it with
pyserial's ``socket://host:port``) or RFC 2217 (``rfc2217://host:port``, telnet with COM-port control, handled by
pyserial's own :class:`serial.rfc2217.PortManager`).

One client at a time, like a serial line: a second client is refused (closed at once) while one is connected.
Without a client, bytes the device writes are lost as on an unplugged cable, and counted in ``dropped``.

The line settings an RFC 2217 client sets (baud, data bits, parity, stop bits) are kept per client and offered by
:meth:`SerialServer.negotiated_line`, which a :class:`~harness.wire.transports.paced.PacedTransport` over the server
reads for every burst: a client's baud change takes effect for the bytes that follow it. A setting the emulated
line cannot take (a baud outside the range of :mod:`harness.wire.transports.line`) is refused: PortManager answers
the client with the setting in force.
"""

from __future__ import annotations

import contextlib
import select
import socket
from typing import Any, cast

from serial.rfc2217 import PortManager

from harness.wire.transports.base import Transport, TransportClosed
from harness.wire.transports.line import LineSettings

_NEGOTIATED = ("baudrate", "bytesize", "parity", "stopbits")


class _LineSettings:
    """What PortManager reads and sets on the 'real' port: the emulated line remembers the settings, refuses one it
    cannot take (ValueError: PortManager then keeps the old one) and notes that the client set them."""

    def __init__(self, line: LineSettings | None = None) -> None:
        line = line or LineSettings()
        self.baudrate: int = line.baud
        self.bytesize: int = line.bytesize
        self.parity: str = line.parity
        self.stopbits: float = line.stopbits
        self.negotiated = False  # True once a client set any of the four
        self.xonxoff = False
        self.rtscts = False
        self.dtr = True
        self.rts = True
        self.break_condition = False
        self.cts = True
        self.dsr = True
        self.ri = False
        self.cd = True

    def __setattr__(self, name: str, value: object) -> None:
        if name in _NEGOTIATED and "negotiated" in self.__dict__:  # a client's setting, not the initial one
            current = {k: getattr(self, k) for k in _NEGOTIATED}
            self.settings(**{**current, name: value})  # raises ValueError (a LineSettingsError) when out of range
            object.__setattr__(self, "negotiated", True)
        object.__setattr__(self, name, value)

    @staticmethod
    def settings(baudrate: object, bytesize: object, parity: object, stopbits: object) -> LineSettings:
        return LineSettings.from_pyserial(baudrate, bytesize, parity, stopbits)

    def reset_input_buffer(self) -> None:
        """Nothing is buffered on the emulated line."""

    def reset_output_buffer(self) -> None:
        """Nothing is buffered on the emulated line."""


class _Connection:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)


class SerialServer(Transport):
    """A listening TCP port carrying one device's serial line (raw, or RFC 2217 when ``rfc2217``)."""

    def __init__(
        self,
        name: str,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        rfc2217: bool = True,
        line: LineSettings | None = None,
    ) -> None:
        self.name = name
        self.rfc2217 = rfc2217
        self.initial_line = line or LineSettings()  # what a client finds before it sets anything
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.listener.bind((host, port))
        except OSError as exc:
            self.listener.close()
            raise TransportClosed(f"{name}: cannot listen on {host}:{port}: {exc}") from exc
        self.listener.listen(1)
        self.listener.setblocking(False)
        self.host, self.port = self.listener.getsockname()[:2]
        self.client: socket.socket | None = None
        self.manager: PortManager | None = None
        self.line = _LineSettings(self.initial_line)
        self.refused = 0

    @property
    def address(self) -> str:
        scheme = "rfc2217" if self.rfc2217 else "socket"
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def connected(self) -> bool:
        return self.client is not None

    def fds(self) -> list[int]:
        fds = [self.listener.fileno()]
        if self.client is not None:
            fds.append(self.client.fileno())
        return fds

    def tick(self, now: float) -> float | None:
        """Accept a waiting client (so :attr:`connected` turns True before any byte is read)."""
        if self.listener.fileno() >= 0:
            self._accept()
        return None

    def _accept(self) -> None:
        try:
            sock, _addr = self.listener.accept()
        except BlockingIOError:
            return
        if self.client is not None:
            self.refused += 1
            sock.close()
            return
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client = sock
        sock.settimeout(1.0)  # a client that stops reading cannot stall the bench for long
        # PortManager only reads/sets line attributes and calls write(): duck-typed stand-ins suffice
        line, conn = cast(Any, self.line), cast(Any, _Connection(sock))
        self.manager = PortManager(line, conn) if self.rfc2217 else None

    def negotiated_line(self, base: LineSettings) -> LineSettings:
        """The settings the connected RFC 2217 client set, with ``base``'s inter-byte gap; ``base`` itself when no
        client set any (raw TCP never does)."""
        line = self.line
        if not line.negotiated:
            return base
        got = line.settings(line.baudrate, line.bytesize, line.parity, line.stopbits)
        return LineSettings(got.baud, got.bytesize, got.parity, got.stopbits, base.inter_byte_gap_s)

    def _drop_client(self) -> None:
        if self.client is not None:
            with contextlib.suppress(OSError):
                self.client.close()
        self.client = None
        self.manager = None
        self.line = _LineSettings(self.initial_line)  # what a client set ends with its connection

    def read(self, timeout_s: float = 0.0) -> bytes:
        """Accept a waiting client and return the serial bytes it sent (telnet/RFC 2217 stripped)."""
        if self.listener.fileno() < 0:
            raise TransportClosed(f"{self.name}: closed")
        ready, _, _ = select.select(self.fds(), [], [], max(timeout_s, 0.0))
        if self.listener.fileno() in ready:
            self._accept()
        client = self.client
        if client is None or client.fileno() not in ready:
            return b""
        try:
            data = client.recv(65536)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            self._drop_client()
            return b""
        if self.manager is not None:
            return b"".join(self.manager.filter(data))
        return data

    def write(self, data: bytes) -> None:
        if self.client is None:
            self.dropped += len(data)
            return
        out = b"".join(self.manager.escape(data)) if self.manager is not None else data
        try:
            self.client.sendall(out)
        except OSError:
            self.dropped += len(data)
            self._drop_client()

    def close(self) -> None:
        self._drop_client()
        self.listener.close()
