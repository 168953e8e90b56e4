"""Any pyserial URL as a transport: a real UART (``/dev/ttyUSB0``), ``socket://host:port``,
``rfc2217://host:port``, ``loop://``. Used to put the bench in front of real hardware or a lab's ser2net.
"""

from __future__ import annotations

import contextlib

import serial

from harness.wire.transports.base import Transport, TransportClosed
from harness.wire.transports.line import LineSettings


class SerialUrl(Transport):
    """A pyserial port opened from a URL at 115200 8N1 (docs/protocol.md §1).

    Raises:
        TransportClosed: the URL cannot be opened (the message names it and pyserial's reason).
    """

    def __init__(self, name: str, url: str, baudrate: int = 115200) -> None:
        self.name = name
        self.url = url
        try:
            self.port = serial.serial_for_url(url, baudrate=baudrate, timeout=0, write_timeout=1.0)
        except (serial.SerialException, ValueError) as exc:
            raise TransportClosed(f"{name}: cannot open {url}: {exc}") from exc
        # A line opened afresh starts empty, as a UART's driver drops what arrives while its port is closed: frames
        # the far end sent before (for a server that keeps running, earlier rounds') are not this run's.
        with contextlib.suppress(serial.SerialException, OSError, NotImplementedError):
            self.port.reset_input_buffer()
        self._open = True

    @property
    def address(self) -> str:
        return self.url

    @property
    def connected(self) -> bool:
        return self._open

    def fds(self) -> list[int]:
        """The port's file descriptor, when it has one (a device file; not every URL handler's port does)."""
        try:
            return [int(self.port.fileno())]
        except (OSError, AttributeError, ValueError, TypeError, serial.SerialException):
            return []

    def read(self, timeout_s: float = 0.0) -> bytes:
        if not self._open:
            raise TransportClosed(f"{self.name}: closed")
        try:
            self.port.timeout = max(timeout_s, 0.0)
            first = self.port.read(1)
            if not first:
                return b""
            waiting = self.port.in_waiting
            return first + (self.port.read(waiting) if waiting else b"")
        except (serial.SerialException, OSError) as exc:
            self._open = False
            raise TransportClosed(f"{self.name}: {exc}") from exc

    def write(self, data: bytes) -> None:
        if not self._open:
            raise TransportClosed(f"{self.name}: closed")
        try:
            self.port.write(data)
        except serial.SerialTimeoutException:
            self.dropped += len(data)
        except (serial.SerialException, OSError) as exc:
            self._open = False
            raise TransportClosed(f"{self.name}: {exc}") from exc

    def apply_line(self, line: LineSettings) -> None:
        """Set the port to ``line``'s baud, data bits, parity and stop bits (a real UART then runs at that speed;
        an ``rfc2217://`` port asks its server to). Raises TransportClosed when the port refuses them."""
        try:
            self.port.apply_settings(dict(line.pyserial()))
        except (serial.SerialException, ValueError, OSError) as exc:
            raise TransportClosed(f"{self.name}: cannot set {self.url} to {line.describe()}: {exc}") from exc

    def close(self) -> None:
        self._open = False
        self.port.close()
