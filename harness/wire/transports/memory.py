"""An in-memory byte pipe: two connected ends, for the in-process bench and for tests.

Thread-safe (a consumer may read from another thread). ``on_data`` is called (in the writer's thread) whenever
bytes arrive, so an event loop can wake the reader without polling.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from harness.wire.transports.base import Transport, TransportClosed


class MemoryEnd(Transport):
    """One end of a :func:`memory_pipe`."""

    def __init__(self, name: str, lock: threading.Condition) -> None:
        self.name = name
        self._cond = lock
        self._buf = bytearray()
        self.peer: MemoryEnd | None = None
        self.on_data: Callable[[], None] | None = None
        self._plugged = True
        self._closed = False
        self._readers = 0  # threads waiting in :meth:`read` (guarded by the lock)

    @property
    def address(self) -> str:
        return f"memory:{self.name}"

    @property
    def connected(self) -> bool:
        return self._plugged and not self._closed

    def read(self, timeout_s: float = 0.0) -> bytes:
        if not self._buf and timeout_s <= 0 and self._plugged and not self._closed:
            return b""  # hot path: nothing waiting, no wait asked for (a racing writer notifies its reader anyway)
        with self._cond:
            if not self.connected:
                raise TransportClosed(f"{self.address}: unplugged")
            if not self._buf and timeout_s > 0:
                self._readers += 1
                try:
                    self._cond.wait_for(lambda: bool(self._buf) or not self.connected, timeout_s)
                finally:
                    self._readers -= 1
            if not self.connected:
                raise TransportClosed(f"{self.address}: unplugged")
            out = bytes(self._buf)
            self._buf.clear()
            return out

    def write(self, data: bytes) -> None:
        peer = self.peer
        with self._cond:
            if not self.connected:
                raise TransportClosed(f"{self.address}: unplugged")
            if peer is None or peer._closed:
                self.dropped += len(data)
                return
            peer._buf += data
            if peer._readers:  # hot path: wake only a reader that waits
                self._cond.notify_all()
        if peer.on_data is not None and data:
            peer.on_data()

    def notify(self, callback: Callable[[], None]) -> None:
        self.on_data = callback

    def unplug(self) -> None:
        """Pull the cable: both ends see the port gone; bytes in flight are lost."""
        self._set_plugged(False)

    def replug(self) -> None:
        self._set_plugged(True)

    def _set_plugged(self, plugged: bool) -> None:
        with self._cond:
            for end in (self, self.peer):
                if end is not None:
                    end._plugged = plugged
                    end._buf.clear()
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


def memory_pipe(name: str) -> tuple[MemoryEnd, MemoryEnd]:
    """Two connected ends: what one writes, the other reads. Conventionally (device end, server end)."""
    cond = threading.Condition()
    a, b = MemoryEnd(f"{name}/device", cond), MemoryEnd(f"{name}/server", cond)
    a.peer, b.peer = b, a
    return a, b
