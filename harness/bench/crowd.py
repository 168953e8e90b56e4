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
from simpy.events import NORMAL

from harness.bench.gridtimer import At, GridTimer
from simulator.eventlog import EventLog
from simulator.events import BetSent, Event


class CrowdForwarder:
    """Delivers the crowd's bets from ``log`` (the model's event log) by calling ``send(event)`` from a SimPy
    timeout at the bet's arrival time, made when the log is read (in virtual time its place among events due at the
    same instant is the one a process started at the reading and waiting for that time would take)."""

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
        """Schedule the delivery of each bet logged since the last call: a timeout dated as a process started now
        would date its own (``now + max(arrives - now, 0)``), made in log order, whose callback sends the bet."""
        env = self.env
        events = self.log.events
        new = events[self._seen :]
        self._seen = len(events)
        now = env.now
        for event in new:
            if isinstance(event, BetSent):
                _Arrival(env, max(event.arrives - now, 0.0), event, self._deliver)

    def _deliver(self, arrival: simpy.Event) -> None:
        assert isinstance(arrival, _Arrival)
        self.send(arrival.bet)


class _Arrival(At):
    """A bet's arrival: scheduled as ``env.timeout(delay)`` schedules its event (NORMAL priority, ``now + delay``),
    calling ``deliver`` with itself when processed."""

    def __init__(
        self, env: simpy.Environment, delay: float, bet: BetSent, deliver: Callable[[simpy.Event], None]
    ) -> None:
        self.bet = bet
        super().__init__(env, delay, NORMAL, deliver)
