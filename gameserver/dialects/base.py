"""The server's end of one device line, whatever the devices' dialect (docs/server.md, "Device dialects").

A :class:`ServerLine` turns the bytes of one line into the server's :class:`~gameserver.protocol.Frame`s (a device
name, a message type and its fields as text, whatever the wire looked like), each new one exactly once, and lamp
commands back into bytes. It runs the dialect's dialogue itself: acknowledgements and retransmission for devices that
push, requests, timeouts and retries for devices it polls. It owns no port, thread or clock: the gateway (or the
in-process bench) feeds it bytes and the time, writes :meth:`ServerLine.take_output` and calls :meth:`ServerLine.tick`
by :meth:`ServerLine.next_deadline`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from gameserver.protocol import BadFrame, Frame

#: Device names (a frame's ``src``).
ROLES = ("BOWL", "SHAKER", "READER", "LAMP", "CONSOLE")


class LineConfigError(ValueError):
    """A line that cannot be set up as configured (the message names the line, the field and the allowed values)."""


@dataclass(frozen=True)
class LineOption:
    """One option of a dialect's line end: a number from ``low`` to ``high`` (``whole``: an integer), ``default``
    when not given."""

    default: float
    low: float
    high: float
    whole: bool = False
    unit: str = ""  # what the number counts, for messages ("seconds")

    def accepts(self, value: object) -> bool:
        """True when ``value`` is allowed (a bool is not a number)."""
        if isinstance(value, bool) or not isinstance(value, int if self.whole else int | float):
            return False
        return self.low <= value <= self.high

    def allowed(self) -> str:
        """The allowed values, for an error message."""
        kind = "a whole number" if self.whole else "a number"
        return f"{kind}{' of ' + self.unit if self.unit else ''} {self.low:g}..{self.high:g}"


class ServerLine(ABC):
    """One device line. ``roles``: the devices it carries (empty: learnt from the first HELLO). A dialect whose line
    end takes options declares them in :attr:`OPTIONS` and takes each as a keyword argument of its constructor."""

    dialect: str = ""
    OPTIONS: ClassVar[Mapping[str, LineOption]] = {}

    def __init__(self, name: str, roles: tuple[str, ...], now: float, silence_s: float) -> None:
        self.name = name
        self.roles = roles
        self.silence_s = silence_s

    @abstractmethod
    def feed(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        """Consume bytes read from the line; return each new device data frame once (control frames and duplicates
        are handled here) and every error, in order. Never raises on input."""

    @abstractmethod
    def send(self, type_: str, fields: tuple[tuple[str, str], ...], now: float) -> None:
        """Queue a lamp command (``OPEN``, ``CLOSE``, ...) for the lamp on this line."""

    @property
    @abstractmethod
    def carries_lamp(self) -> bool:
        """True when the lamp is (configured or known to be) on this line."""

    @abstractmethod
    def tick(self, now: float) -> list[str]:
        """Run the timers; returns the devices that have just gone silent."""

    def released(self, now: float) -> list[Frame | BadFrame]:
        """After :meth:`tick`: the device frames the line hands on without new bytes, in order (a report it held
        back for ordering whose wait ended by time or by a device gone quiet). Each frame is handed on once, by
        :meth:`feed` or here. A line that holds nothing back returns none."""
        return []

    @abstractmethod
    def next_deadline(self) -> float:
        """The earliest time :meth:`tick` may act."""

    @property
    @abstractmethod
    def has_output(self) -> bool:
        """True when bytes wait to be written."""

    @abstractmethod
    def take_output(self) -> bytes:
        """Bytes to write to the line now."""

    @property
    @abstractmethod
    def up(self) -> bool:
        """True while the line's devices answer."""

    @property
    @abstractmethod
    def peer(self) -> str | None:
        """The device the line last heard from (its ``src``), or None."""
