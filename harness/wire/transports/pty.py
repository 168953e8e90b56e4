"""A pty pair standing in for a USB serial adapter: the device writes the master, a game server opens the slave
path with pyserial exactly as it would open ``/dev/ttyUSB0``.

Both ends are put in raw mode (no echo, no CRLF translation). The device keeps its own slave descriptor open so the
master never sees EIO when a reader closes and reopens. Given ``link_dir``, a stable symlink ``link_dir/<name>``
points at the current slave (like udev's ``/dev/serial/by-id``), so a server can reopen the same path after
:meth:`PtyPort.replug`, which creates a new pty (the old one is gone, as a USB device is).
"""

from __future__ import annotations

import contextlib
import os
import select
import tty
from pathlib import Path

from harness.wire.transports.base import Transport, TransportClosed


class PtyPort(Transport):
    """The device side of a pty pair."""

    def __init__(self, name: str, link_dir: Path | None = None, write_timeout_s: float = 0.05) -> None:
        self.name = name
        self.write_timeout_s = write_timeout_s
        self.link = None if link_dir is None else Path(link_dir) / name
        self._master = -1
        self._slave = -1
        self.slave_path = ""
        self._plug()

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.slave_path = os.ttyname(slave)
        if self.link is not None:
            tmp = self.link.with_name(self.link.name + ".new")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            tmp.symlink_to(self.slave_path)
            tmp.replace(self.link)

    @property
    def address(self) -> str:
        return str(self.link) if self.link is not None else self.slave_path

    @property
    def connected(self) -> bool:
        return self._master >= 0

    def fds(self) -> list[int]:
        return [self._master] if self._master >= 0 else []

    def read(self, timeout_s: float = 0.0) -> bytes:
        if self._master < 0:
            raise TransportClosed(f"{self.name}: unplugged")
        ready, _, _ = select.select([self._master], [], [], max(timeout_s, 0.0))
        if not ready:
            return b""
        try:
            return os.read(self._master, 65536)
        except BlockingIOError:
            return b""
        except OSError as exc:  # EIO: the slave side is gone
            raise TransportClosed(f"{self.name}: {exc}") from exc

    def write(self, data: bytes) -> None:
        """Write all of ``data``; while the line buffer is full, wait up to :attr:`write_timeout_s` s for the
        reader (back-pressure, like a UART's pace), then drop the rest (nobody is reading) into ``dropped``."""
        master = self._master
        if master < 0:
            raise TransportClosed(f"{self.name}: unplugged")
        try:
            n = os.write(master, data)  # the common case: the line takes it all at once
        except BlockingIOError:
            n = 0
        if n == len(data):
            return
        view = memoryview(data)[n:]
        while view:
            try:
                n = os.write(self._master, view)
            except BlockingIOError:
                _, writable, _ = select.select([], [self._master], [], self.write_timeout_s)
                if not writable:
                    self.dropped += len(view)
                    return
                continue
            view = view[n:]

    def unplug(self) -> None:
        """Pull the adapter out: the reader's next read fails; the symlink goes away."""
        for fd in (self._master, self._slave):
            if fd >= 0:
                os.close(fd)
        self._master = self._slave = -1
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()

    def replug(self) -> None:
        """Plug a (new) adapter in: a new pty; the symlink, if any, points at it."""
        if self._master < 0:
            self._plug()

    def close(self) -> None:
        self.unplug()
