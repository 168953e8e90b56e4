"""The random crowd's bets, carried from the table model to the game server: every :class:`BetSent` the model logs
is delivered through ``send`` at the bet's arrival time.

In virtual time the model's log is read on the grid of ``step`` seconds from the start, as a polling loop would, but
only at the grid points after a bet was planned (:class:`~harness.bench.gridtimer.GridTimer`); on a real-time bench
it is polled every ``step`` wall seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import simpy

from harness.bench.gridtimer import GridTimer
from simulator.eventlog import EventLog
from simulator.events import BetSent, Event


class CrowdForwarder:
    """Delivers the crowd's bets from ``log`` (the model's event log) by calling ``send(event)`` in a SimPy process
    that starts at the bet's arrival time."""

    def __init__(self, env: simpy.Environment, log: EventLog, send: Callable[[BetSent], None], step: float) -> None:
        self.env = env
        self.log = log
        self.send = send
        self.step = step
        self._seen = 0

    def start_on_grid(self, watchers: list[Callable[[Event], None]]) -> None:
        """Virtual time: read the log at the grid points after each planned bet; ``watchers`` is the model's list
        of event observers, to which this forwarder adds its own."""
        timer = GridTimer(self.env, self.step, self._forward_new)

        def watch(event: Event) -> None:
            if isinstance(event, BetSent):
                timer.arm_at(float(self.env.now))

        watchers.append(watch)
        timer.start()

    def start_polling(self) -> None:
        """Real time: read the log every ``step`` seconds."""
        self.env.process(self._poll())

    def _poll(self) -> Generator[simpy.Event, Any, None]:
        while True:
            self._forward_new(float(self.env.now))
            yield self.env.timeout(self.step)

    def _forward_new(self, _now: float) -> None:
        events = self.log.events
        new = events[self._seen :]
        self._seen = len(events)
        for event in new:
            if isinstance(event, BetSent):
                self.env.process(self._deliver(event))

    def _deliver(self, event: BetSent) -> Generator[simpy.Event, Any, None]:
        yield self.env.timeout(max(event.arrives - self.env.now, 0.0))
        self.send(event)
