"""The round events an adapter has read from its server, held by absolute position.

Readers of :meth:`~harness.bench.adapters.base.GameServerAdapter.round_events_since` keep a position (how many
events they have read). :class:`RoundEventWindow` keeps those positions valid when the events before a position
are forgotten (:meth:`RoundEventWindow.forget`, an adapter's
:class:`~harness.bench.adapters.capabilities.ForgetsRoundEvents`): a long run judged round by round holds only the
events not judged yet.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.records import RoundEvent

__all__ = ["RoundEventWindow"]


class RoundEventWindow:
    """The events from absolute position :attr:`start` to :attr:`end`, in the order read."""

    __slots__ = ("_base", "_events")

    def __init__(self) -> None:
        self._events: list[RoundEvent] = []
        self._base = 0  # events forgotten before _events[0]

    @property
    def start(self) -> int:
        """The position of the first event held: how many were forgotten."""
        return self._base

    @property
    def end(self) -> int:
        """Every event ever read, the forgotten ones included."""
        return self._base + len(self._events)

    def append(self, event: RoundEvent) -> None:
        self._events.append(event)

    def held(self) -> list[RoundEvent]:
        """A copy of the events held (every event read, unless some were forgotten)."""
        return list(self._events)

    def since(self, position: int) -> list[RoundEvent]:
        """The events from absolute ``position`` on (none past :attr:`end`).

        Raises:
            ValueError: ``position`` was forgotten.
        """
        if position < self._base:
            raise ValueError(f"round event {position} was forgotten: the events held start at {self._base}")
        return self._events[position - self._base :]

    def forget(self, position: int) -> None:
        """Forget the events before absolute ``position`` (clamped to :attr:`end`); one already forgotten does
        nothing."""
        drop = min(position, self.end) - self._base
        if drop > 0:
            del self._events[:drop]
            self._base += drop

    def reread(self, events: Iterable[RoundEvent]) -> None:
        """Replace the events held by a read of the server's whole log from its start (a restarted server's): the
        first :attr:`start` of them stay forgotten."""
        self._events = list(events)[self._base :]
