"""What a transport may optionally do, beyond :class:`~harness.wire.transports.base.Transport`.

Each capability is a small :func:`~typing.runtime_checkable` protocol; code that needs one asks
``isinstance(transport, X)`` and does without it otherwise (docs/devices.md, "Optional transport capabilities"). A
transport offers a capability by having its members; it need not inherit from the protocol.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from harness.wire.transports.base import Transport
from harness.wire.transports.line import LineSettings

__all__ = ["LineConfigurable", "LineNegotiating", "Pluggable", "Replugging", "Wrapping", "layers"]

#: How deep :func:`layers` follows :attr:`Wrapping.inner` (a bench nests a handful of wrappers at most).
MAX_LAYERS = 16


@runtime_checkable
class Replugging(Protocol):
    """The transport has something to do when its line's cable goes back in (:class:`Pluggable` ports, and a bench
    end that drops what the far end sent while the cable was out)."""

    def replug(self) -> None:
        """Put the cable back; idempotent."""


@runtime_checkable
class Pluggable(Replugging, Protocol):
    """The transport's cable can be pulled for real: after :meth:`unplug` the port is gone (reads raise
    :class:`~harness.wire.transports.base.TransportClosed`, bytes in flight are lost) until :meth:`replug`."""

    def unplug(self) -> None:
        """Pull the cable; idempotent."""


@runtime_checkable
class LineNegotiating(Protocol):
    """The far end may change the line's settings (an RFC 2217 client of a serial server)."""

    def negotiated_line(self, base: LineSettings) -> LineSettings:
        """The settings in force now: what the far end set, else ``base``."""
        ...


@runtime_checkable
class LineConfigurable(Protocol):
    """The port under the transport can be set to the line's settings (a real UART, an ``rfc2217://`` client)."""

    def apply_line(self, line: LineSettings) -> None:
        """Set the port to ``line``. Raises TransportClosed when the port refuses it."""


@runtime_checkable
class Wrapping(Protocol):
    """The transport passes its bytes through another one (a relay, a pacer, a fault wrapper, a trace)."""

    inner: Transport


def layers(transport: Transport) -> Iterator[Transport]:
    """``transport``, then the one it wraps, and so on down (through :attr:`Wrapping.inner`), outermost first; at
    most :data:`MAX_LAYERS` of them."""
    current: Transport = transport
    for _ in range(MAX_LAYERS):
        yield current
        if not isinstance(current, Wrapping):
            return
        current = current.inner
