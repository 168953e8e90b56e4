"""A SimPy timer whose firings fall on a fixed-step grid, fired only when armed.

A loop that does ``yield env.timeout(step)`` forever visits the times ``t0, t0 + step, (t0 + step) + step, ...``
(each one the float sum of the one before and ``step``). :class:`GridTimer` fires its callback at exactly those
times, but only at the ones something asked for (:meth:`GridTimer.arm_at`), so a service that has nothing to do
costs nothing between two wake-ups while still acting at the very times, to the last bit, that the polling loop
would have. A caller that is unsure may arm early: a firing with nothing to do must be harmless (the loop it
replaces ran one at every step anyway).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Generator
from itertools import accumulate, repeat
from typing import Any

import simpy
from simpy.events import NORMAL

_BLOCK = 4096  # grid points generated at a time


class _Grid:
    """The grid's points, generated in order by repeated float addition (the same sums as the loop). Points below
    the lowest index still wanted are dropped."""

    def __init__(self, origin: float, step: float) -> None:
        self.step = step
        self.base = 0  # index of self.points[0]
        self.points: list[float] = [origin]
        self._extend()

    def _extend(self) -> None:
        sums = accumulate(repeat(self.step, _BLOCK), initial=self.points[-1])  # t, t + step, (t + step) + step, ...
        next(sums)  # the last point, already kept
        self.points.extend(sums)

    def first_at_or_after(self, t: float, lowest: int) -> int:
        """The smallest index ``i >= lowest`` whose point is ``>= t`` (``t`` finite)."""
        cut = min(lowest - self.base, len(self.points) - 1)
        if cut > _BLOCK:
            del self.points[:cut]
            self.base += cut
        while self.points[-1] < t or lowest - self.base >= len(self.points):
            self._extend()
        low = lowest - self.base
        return self.base + bisect_left(self.points, t, low if low > 0 else 0)

    def point(self, index: int) -> float:
        return self.points[index - self.base]


#: A priority between SimPy's URGENT (stop events, process starts) and NORMAL (timeouts): a timer with it fires at a
#: grid point after the bench's stop events there and before every timeout due at the same instant, as a polling
#: loop with a longer step than the services it watches does (its timeout was made a step earlier than theirs).
AHEAD_OF_TIMEOUTS = 0.5


class At(simpy.Event):
    """A timeout with a chosen priority (SimPy's own :class:`simpy.Timeout` is always NORMAL), already triggered,
    whose processing calls ``callback``: scheduled as ``env.schedule(event, priority, delay)`` schedules it."""

    def __init__(
        self, env: simpy.Environment, delay: float, priority: float, callback: Callable[[simpy.Event], None]
    ) -> None:
        # hot path: Event.__init__ inlined, as SimPy's own Timeout does
        self.env = env
        self.callbacks = [callback]
        self._ok = True
        self._value = None
        env.schedule(self, priority, delay)  # type: ignore[arg-type]


class GridTimer:
    """Fires ``callback(now)`` on grid points ``origin + k * step`` (accumulated as a polling loop would), at most
    once per point and only on the points armed since the last firing. Starts with a firing at ``origin``
    (``env.now`` at :meth:`start`), from a SimPy process, as the polling loop's first step would.

    With ``keep_place`` (the default) a firing also keeps the polling loop's place among events due at the same
    instant: its timeout is made at the grid point before, as the loop makes it (two events a firing). Without it,
    the timeout is made when the point is armed (one event): the same times, an order among same-instant events
    that depends on when it was armed.

    Not thread-safe: arm it from the environment's own callbacks and processes.
    """

    def __init__(
        self,
        env: simpy.Environment,
        step: float,
        callback: Callable[[float], None],
        priority: float = NORMAL,
        *,
        keep_place: bool = True,
    ) -> None:
        self.env = env
        self.step = step
        self.callback = callback
        self.priority = priority
        self.keep_place = keep_place
        self._grid: _Grid | None = None
        self._fired = -1  # index of the last point fired
        self._armed = -1  # index of the point the pending timeout is for (-1: none)
        self._pending: simpy.Event | None = None
        self._running = False

    def start(self) -> None:
        """Begin at ``env.now``: the first firing happens there, from a new process."""
        self._running = True
        self.env.process(self._first())

    def stop(self) -> None:
        """Fire no more (a pending timeout is left to expire unheard). Idempotent."""
        self._running = False
        self._pending = None
        self._armed = -1

    def _first(self) -> Generator[simpy.Event, Any, None]:
        now = float(self.env.now)
        self._grid = _Grid(now, self.step)
        if self._running:
            self._fire_at(0, now)
        return
        yield  # a generator: started as a process so that it runs where the polling loop's first step ran

    def arm_at(self, t: float) -> None:
        """Fire at the first grid point at or after ``t`` that has not fired yet (``t <= now``: the next one)."""
        grid = self._grid
        if grid is None or not self._running or t == math.inf:
            return
        armed = self._armed
        if armed != -1:
            now = self.env._now  # hot path: SimPy's clock without its property
            target = t if t > now else now
            points, base = grid.points, grid.base
            if points[armed - base] <= target:
                return  # a point at or before the one asked for is armed already: it fires first
            if armed - 1 <= self._fired or points[armed - 1 - base] < target:
                return  # the armed point is the first at or after the one asked for
        self._arm(t, after=False)

    def arm_after(self, t: float) -> None:
        """Fire at the first grid point strictly after ``t`` that has not fired yet: for a change made at ``t`` by
        an event that the polling loop's own step at ``t`` would have preceded (one scheduled after that step's
        timeout was, e.g. by another grid service with a shorter step)."""
        armed, grid = self._armed, self._grid
        if armed != -1 and grid is not None and self._running and t != math.inf:
            now = self.env._now  # hot path: as in arm_at, for the point strictly after ``t``
            target = t if t > now else now
            points, base = grid.points, grid.base
            if points[armed - base] <= target:
                return  # a point at or before the one asked for is armed already: it fires first
            if armed - 1 <= self._fired or points[armed - 1 - base] < target or points[armed - 1 - base] == t:
                return  # the armed point is the first strictly after the one asked for
        self._arm(t, after=True)

    def _arm(self, t: float, after: bool) -> None:
        grid = self._grid
        if not self._running or grid is None or t == math.inf:
            return
        now = float(self.env.now)
        armed = self._armed
        if armed != -1 and grid.points[armed - grid.base] <= (t if t > now else now):
            return  # a point at or before the one asked for is armed already: it fires first
        index = grid.first_at_or_after(t if t > now else now, self._fired + 1)
        if after and grid.point(index) == t:
            index = grid.first_at_or_after(t, index + 1)
        if armed != -1 and armed <= index:
            return
        self._armed = index
        before = grid.point(index - 1) if self.keep_place and index - 1 > self._fired else now
        if before > now:
            # The polling loop creates a point's timeout at the point before it: so does this timer, so that the
            # firing keeps its place among other events due at the very same time (SimPy runs those in the order
            # they were scheduled).
            self._pending = self._timeout_at(before, now, self._on_point_before)
        else:
            self._pending = self._timeout_at(grid.point(index), now, self._on_timeout)

    def _timeout_at(self, target: float, now: float, callback: Callable[[simpy.Event], None]) -> simpy.Event:
        """A timeout whose time is ``target`` exactly (SimPy dates it ``now + delay``; ``now`` is ``env.now``)."""
        delay = target - now
        while now + delay < target:
            delay = math.nextafter(delay, math.inf)
        while now + delay > target:
            delay = math.nextafter(delay, -math.inf)
        return At(self.env, delay, self.priority, callback)

    def _on_point_before(self, event: simpy.Event) -> None:
        if event is not self._pending or not self._running or self._grid is None:
            return
        self._pending = self._timeout_at(self._grid.point(self._armed), float(self.env.now), self._on_timeout)

    def _on_timeout(self, event: simpy.Event) -> None:
        if event is not self._pending or not self._running:
            return  # superseded by an earlier arming, or stopped
        index, self._armed, self._pending = self._armed, -1, None
        self._fire_at(index, float(self.env.now))

    def _fire_at(self, index: int, now: float) -> None:
        self._fired = index
        self.callback(now)
