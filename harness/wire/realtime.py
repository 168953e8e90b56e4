"""The real-time clock bridge: a SimPy environment whose clock follows the wall clock and which, while it waits
for the next event, waits on the device file descriptors instead of sleeping.

``simpy.rt.RealtimeEnvironment`` sleeps with ``time.sleep`` between events, so bytes a game server writes to a
device (an ACK, a lamp command) would sit unread until the next simulated event. :class:`SelectEnvironment` waits
with ``select`` on the fds that :attr:`SelectEnvironment.fds` returns, up to the wall time of the next event; when
one is readable it advances ``now`` to the current wall time (mapped to sim time) and calls
:attr:`SelectEnvironment.on_ready`, which typically triggers a SimPy event so that the device hub runs at once.
Single-threaded: nothing here needs a lock.

The wall clock is injected (``clock``, default ``time.monotonic``); the simulator itself never reads it.
"""

from __future__ import annotations

import math
import select
import time
from collections.abc import Callable

import simpy

IDLE_WAIT_S = 0.1  # s to wait on fds when no event is scheduled at all


class SelectEnvironment(simpy.Environment):
    """A SimPy environment in real time (``factor`` wall seconds per sim second) that waits on fds.

    Lateness is not an error (it is measured in :attr:`max_lag`): a busy machine delays events, never reorders
    them.
    """

    def __init__(
        self,
        initial_time: float = 0.0,
        factor: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        fds: Callable[[], list[int]] = list,
        on_ready: Callable[[list[int]], None] | None = None,
    ) -> None:
        if factor <= 0:
            raise ValueError(f"factor must be > 0 wall seconds per sim second, got {factor}")
        super().__init__(initial_time)
        self.factor = factor
        self.clock = clock
        self.fds = fds
        self.on_ready = on_ready
        self.max_lag = 0.0
        self.stopped = False
        self._wall0 = clock()
        self._sim0 = initial_time

    def sync(self) -> None:
        """Make the current sim time correspond to the current wall time (call after slow setup)."""
        self._wall0 = self.clock()
        self._sim0 = self.now

    def wall_to_sim(self, wall: float) -> float:
        return self._sim0 + (wall - self._wall0) / self.factor

    def sim_to_wall(self, sim: float) -> float:
        return self._wall0 + (sim - self._sim0) * self.factor

    def step(self) -> None:
        """Wait (on fds) until the next event is due in wall time, then process it."""
        while not self.stopped:
            target = self.peek()
            wait = IDLE_WAIT_S if math.isinf(target) else self.sim_to_wall(target) - self.clock()
            if wait <= 0:
                self.max_lag = max(self.max_lag, -wait)
                break
            fds = self.fds()
            if fds:
                ready, _, _ = select.select(fds, [], [], wait)
            else:
                time.sleep(wait)
                ready = []
            if ready and self.on_ready is not None:
                # bring the clock to "now" (never past the next event, never backwards), then react
                self._now = min(max(self.now, self.wall_to_sim(self.clock())), target)
                self.on_ready(ready)
        if self.stopped:
            raise simpy.core.StopSimulation(None)
        super().step()

    def stop(self) -> None:
        """Make :meth:`run` return at the next step."""
        self.stopped = True
