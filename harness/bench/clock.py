"""Bench time: advancing a rig's SimPy environment (virtual time on the in-process bench, the real-time bridge
otherwise) until something holds, on a fixed grid of slices, and the error a wait that does not finish raises."""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush

import simpy
from simpy.core import StopSimulation
from simpy.events import URGENT, EventPriority

from harness.bench.config import Bench
from harness.errors import XocdiaError

SLICE_VIRTUAL_S = 0.01  # sim seconds between two checks of a wait condition (in-process)
SLICE_REAL_S = 0.02  # wall seconds between two checks (real-time benches)


class BenchTimeout(XocdiaError, AssertionError):
    """A wait for the server or the table did not finish in the bench's step timeout."""


class BenchClock:
    """The time half of a rig: its ``env`` advanced for ``bench``'s kind of time (a base of
    :class:`~harness.bench.rig.Rig`, which provides both attributes)."""

    env: simpy.Environment
    bench: Bench

    @property
    def now(self) -> float:
        return float(self.env.now)

    def run_for(self, seconds: float) -> None:
        """Let ``seconds`` of bench time pass (sim seconds; wall seconds on a real-time bench)."""
        self.env.run(until=self.env.now + seconds)

    def run_until(self, done: Callable[[], bool], what: str, timeout_s: float | None = None) -> None:
        """Run until ``done()`` holds. Raises BenchTimeout naming ``what`` after ``timeout_s`` (default: the bench's
        step timeout). ``done`` must read the bench's state, not its clock: in virtual time it is checked only
        after slices in which something happened (see :meth:`run_slices`)."""
        limit = self.bench.timing.step_timeout_s if timeout_s is None else timeout_s
        self.run_slices(lambda: not done(), self.env.now + limit)
        if not done():
            raise BenchTimeout(f"timed out after {limit:g} s waiting for {what}")

    def run_slices(self, keep_going: Callable[[], bool], deadline: float) -> None:
        """``while keep_going() and now < deadline: run one slice`` (:data:`SLICE_VIRTUAL_S`, or
        :data:`SLICE_REAL_S` on a real-time bench). Ends on the slice grid from now, at the first slice boundary
        where ``keep_going()`` is false or the deadline is reached.

        In virtual time a slice in which no event runs is skipped without running the environment: the bench's
        state cannot change in it, so ``keep_going`` must depend on that state, not on the clock."""
        env = self.env
        if self.bench.realtime:
            while keep_going() and env.now < deadline:
                env.run(until=env.now + SLICE_REAL_S)
            return
        boundary = float(env.now)
        while keep_going():
            while True:
                if boundary >= deadline:
                    if env.now < boundary:
                        run_to(env, boundary)
                    return
                nxt = boundary + SLICE_VIRTUAL_S
                if env.peek() < nxt:
                    break
                boundary = nxt  # hot path: an empty slice is skipped without running the environment
            run_to(env, nxt)
            boundary = nxt


def run_to(env: simpy.Environment, until: float) -> None:
    """Exactly what ``env.run(until=until)`` followed by ``env.step()`` (dropping the spent stop event SimPy leaves
    queued) does on a virtual-time environment, without the stop event: the same events run in the same order,
    ``env.now`` ends at the same float (``now + (until - now)``, as SimPy dates its stop event), and the same event
    ids are used up. ``until`` must be later than ``env.now``. An exception from an event leaves a stop event
    queued, as ``env.run`` does, so a later run ends where the interrupted one would have."""
    now = env._now  # SimPy's own clock, read as ``env.run`` reads it
    at = now + (float(until) - now)
    eid = next(env._eid)  # the id SimPy's stop event would take
    queue = env._queue
    try:
        while queue:
            t, priority, order, event = queue[0]
            if t < at or (t == at and (priority < URGENT or (priority == URGENT and order < eid))):
                # hot path: ``env.step()`` inlined (pop, run the callbacks, crash on an undefused failure)
                heappop(queue)
                env._now = t
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                try:
                    for callback in callbacks:
                        callback(event)
                except StopSimulation:  # a stop event of an interrupted ``env.run``: as ``env.step`` leaves it
                    event.callbacks = callbacks[callbacks.index(callback) + 1 :]
                    env.schedule(event, EventPriority(-1))
                    raise
                if not event._ok and not hasattr(event, "_defused"):
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
            else:
                break
    except BaseException:
        stop = simpy.Event(env)
        stop._ok = True  # a stop event as ``env.run`` builds it
        stop._value = None
        stop.callbacks.append(StopSimulation.callback)
        heappush(queue, (at, URGENT, eid, stop))
        raise
    env._now = at  # the stop event's time, as SimPy sets it when it pops that event
    next(env._eid)  # the id SimPy uses when it requeues its spent stop event
