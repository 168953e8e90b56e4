"""The transport interface every device port goes through (:class:`Transport`), the error a port that is gone
raises (:class:`TransportClosed`), and :class:`Relay`, a transport that passes everything to another."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable


class TransportClosed(OSError):
    """The port is gone: unplugged, closed, or the device file disappeared."""


class Transport(ABC):
    """One side of one serial line, opened when constructed.

    - :meth:`read` returns the bytes available within the given timeout in seconds (``b""`` if none), never blocks
      longer, and raises :class:`TransportClosed` when the port is gone (unplugged, peer closed for good);
    - :meth:`write` sends bytes without blocking; bytes a port cannot take (nobody reading a pty, no client on a
      serial server) are lost as on a real wire and counted in ``dropped``;
    - :attr:`connected` is False while unplugged or while nobody is on the other side of a server;
    - :meth:`fds` lists file descriptors a selector can wait on (empty: poll it);
    - :meth:`notify` registers a wake-up for transports without fds;
    - :meth:`tick` does time-driven work (latency faults) and says when it needs the next tick;
    - :attr:`untimed` says that it never has any (neither ``tick`` nor ``next_release`` ever names a time).
    """

    name: str
    dropped: int = 0

    @property
    @abstractmethod
    def address(self) -> str:
        """What the other side opens: a device path, a pyserial URL, or a description."""

    @property
    def connected(self) -> bool:
        return True

    @abstractmethod
    def read(self, timeout_s: float = 0.0) -> bytes:
        """Bytes available within ``timeout_s`` seconds (b"" if none). Raises TransportClosed when gone."""

    @abstractmethod
    def write(self, data: bytes) -> None:
        """Send ``data`` without blocking. Raises TransportClosed when gone."""

    @abstractmethod
    def close(self) -> None:
        """Release the port; idempotent."""

    def fds(self) -> list[int]:
        """File descriptors that become readable when :meth:`read` has work; [] means poll."""
        return []

    def notify(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when bytes arrive, for transports without fds (in-memory); default: never."""
        del callback  # ports with fds are woken by a selector instead

    def tick(self, now: float) -> float | None:
        """Do time-driven work due at ``now``; returns when the next tick is needed (None: never)."""
        return None

    def next_release(self) -> float | None:
        """The earliest time bytes this transport holds back (latency, slicing) become readable with no new input;
        None when it holds none. Reading before then yields none of them."""
        return None

    @property
    def untimed(self) -> bool:
        """True when :meth:`tick` and :meth:`next_release` are this base class's (they never name a time), so that
        neither time nor a write can make this transport's bytes readable later."""
        kind = type(self)
        return kind.tick is Transport.tick and kind.next_release is Transport.next_release

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Relay(Transport):
    """A transport that passes everything through to ``inner`` (its name, address, state, bytes, fds, wake-ups and
    ticks); a subclass overrides only what it changes (the trace records the bytes, a cable drops them)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.name = inner.name

    @property
    def address(self) -> str:
        return self.inner.address

    @property
    def connected(self) -> bool:
        return self.inner.connected

    def read(self, timeout_s: float = 0.0) -> bytes:
        return self.inner.read(timeout_s)

    def write(self, data: bytes) -> None:
        self.inner.write(data)

    def close(self) -> None:
        self.inner.close()

    def fds(self) -> list[int]:
        return self.inner.fds()

    def notify(self, callback: Callable[[], None]) -> None:
        self.inner.notify(callback)

    def tick(self, now: float) -> float | None:
        return self.inner.tick(now)

    def next_release(self) -> float | None:
        return self.inner.next_release()

    @property
    def untimed(self) -> bool:
        """True when this relay passes ``tick`` and ``next_release`` through unchanged to an untimed ``inner``."""
        kind = type(self)
        return kind.tick is Relay.tick and kind.next_release is Relay.next_release and self.inner.untimed
