"""GridTimer fires on exactly the times a ``yield env.timeout(step)`` loop visits, keeps that loop's place among
other events due at the same instant, and costs nothing while nothing is armed."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import simpy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.bench.gridtimer import GridTimer

STEP = 0.005


def _polling_times(origin: float, until: float) -> list[float]:
    env = simpy.Environment(initial_time=origin)
    seen: list[float] = []

    def loop() -> Generator[simpy.Event, Any, None]:
        while True:
            seen.append(float(env.now))
            yield env.timeout(STEP)

    env.process(loop())
    env.run(until=until)
    return seen


@settings(max_examples=30, deadline=None)
@given(
    origin=st.floats(0.0, 1e5, allow_nan=False),
    gaps=st.lists(st.floats(0.02, 5.0, allow_nan=False), min_size=1, max_size=6),
)
def test_each_firing_is_the_first_loop_time_at_or_after_what_was_armed(origin: float, gaps: list[float]) -> None:
    loop = _polling_times(origin, origin + sum(gaps) + 1.0)
    env = simpy.Environment(initial_time=origin)
    fired: list[float] = []
    timer = GridTimer(env, STEP, fired.append)
    timer.start()
    expected = [origin]
    target = origin
    env.run(until=origin + STEP / 2)
    for gap in gaps:  # one arming at a time, each fired before the next is armed
        target += gap
        timer.arm_at(target)
        expected.append(next(t for t in loop if t >= target))
        env.run(until=expected[-1] + STEP / 2)
    assert fired == expected


def test_an_earlier_arming_wins_and_a_later_one_waits_for_the_next_arming() -> None:
    env = simpy.Environment()
    fired: list[float] = []
    timer = GridTimer(env, STEP, fired.append)
    timer.start()
    env.run(until=0.001)
    timer.arm_at(2.0)
    timer.arm_at(1.0)
    env.run(until=5.0)
    loop = _polling_times(0.0, 5.0)
    assert fired == [0.0, next(t for t in loop if t >= 1.0)]  # 2.0 was superseded; the callback re-arms if it wants


def test_firing_keeps_the_polling_loops_place_among_events_due_at_the_same_time() -> None:
    """A loop's timeout for a point is made at the point before; an event made earlier for that same instant runs
    first, one made later runs after. The timer, armed long before, must still come after the earlier one."""

    def order(use_timer: bool) -> list[str]:
        env = simpy.Environment()
        log: list[str] = []
        loop = _polling_times(0.0, 2.0)
        point = loop[100]  # about 0.5

        def other() -> Generator[simpy.Event, Any, None]:
            yield env.timeout(point - 0.25)
            yield env.timeout(point - float(env.now))  # made at 0.25: before the loop makes its timeout for `point`
            log.append("other")

        if use_timer:
            timer = GridTimer(env, STEP, lambda now: log.append("tick") if now == point else None)
            timer.start()
            env.run(until=0.001)
            timer.arm_at(point)  # armed at 0.001, long before the point
        else:

            def polling() -> Generator[simpy.Event, Any, None]:
                while True:
                    if env.now == point:
                        log.append("tick")
                    yield env.timeout(STEP)

            env.process(polling())
        env.process(other())
        env.run(until=1.0)
        return log

    assert order(use_timer=True) == order(use_timer=False) == ["other", "tick"]


def test_an_idle_timer_schedules_nothing() -> None:
    env = simpy.Environment()
    timer = GridTimer(env, STEP, lambda now: None)
    timer.start()
    env.run(until=0.001)
    env.step()  # SimPy leaves its spent stop event queued; drop it
    assert env.peek() == float("inf")  # a polling loop would have 200 events a second queued forever
    timer.arm_at(3600.0)
    env.run(until=3601.0)
    timer.stop()
    env.step()
    timer.arm_at(4000.0)
    assert env.peek() == float("inf")


def _reference(points: list[float], requests: list[tuple[float, float]]) -> list[float]:
    """What the timer must fire, read off the loop's points: each request (made at ``a``, for ``t``) asks for the
    first point not fired yet at or after ``max(t, a)``; only the earliest asked for is kept; firing forgets it."""
    out, fired, armed = [points[0]], 0, None  # the first firing is the loop's first step
    for a, t in sorted(requests):
        while armed is not None and points[armed] < a:
            out.append(points[armed])
            fired, armed = armed, None
        target = max(t, a)
        index = next(i for i in range(fired + 1, len(points)) if points[i] >= target)
        if armed is None or index < armed:
            armed = index
    if armed is not None:
        out.append(points[armed])
    return out


@settings(max_examples=60, deadline=None)
@given(
    origin=st.floats(0.0, 1e4, allow_nan=False),
    requests=st.lists(
        st.tuples(st.floats(0.0001, 1.0, allow_nan=False), st.floats(-0.5, 1.0, allow_nan=False)), max_size=12
    ),
)
def test_overlapping_requests_fire_the_earliest_first_point_asked_for(
    origin: float, requests: list[tuple[float, float]]
) -> None:
    made = [(origin + a, origin + a + dt) for a, dt in requests]
    points = _polling_times(origin, origin + 3.0)
    for keep_place in (True, False):  # the place among same-instant events changes no firing time
        env = simpy.Environment(initial_time=origin)
        fired: list[float] = []
        timer = GridTimer(env, STEP, fired.append, keep_place=keep_place)
        timer.start()
        for a, t in made:
            event = env.timeout(a - origin)
            event.callbacks.append(lambda _e, t=t, timer=timer: timer.arm_at(t))
        env.run(until=origin + 3.0)
        assert fired == _reference(points, made), keep_place


def test_without_keep_place_a_firing_armed_long_before_is_one_event() -> None:
    """Armed 100 points ahead, a place-keeping timer makes two timeouts (the one at the point before, then the
    point's); without ``keep_place`` it makes the point's alone, and fires at the same time."""

    def scheduled(keep_place: bool) -> tuple[int, list[float]]:
        env = simpy.Environment()
        fired: list[float] = []
        timer = GridTimer(env, STEP, fired.append, keep_place=keep_place)
        timer.start()
        env.run(until=0.001)
        before = next(env._eid)
        timer.arm_at(0.5)
        env.run(until=1.0)
        return next(env._eid) - before, fired

    kept, kept_fired = scheduled(True)
    lean, lean_fired = scheduled(False)
    assert lean_fired == kept_fired and len(lean_fired) == 2
    assert kept - lean == 1


def _firings(origin: float, made: list[tuple[float, float]], arm: str) -> list[float]:
    env = simpy.Environment(initial_time=origin)
    fired: list[float] = []
    timer = GridTimer(env, STEP, fired.append)
    timer.start()

    def request(t: float) -> None:
        if arm == "after":
            timer.arm_after(t)
        else:
            timer._arm(t, after=True)  # the full search, without the fast path's early returns

    for a, t in made:
        event = env.timeout(a - origin)
        event.callbacks.append(lambda _e, t=t: request(t))
    env.run(until=origin + 3.0)
    return fired


@settings(max_examples=80, deadline=None)
@example(origin=0.0, requests=[(3, 0.0, 7, 0.0), (10, 0.0, -1, 0.0)])  # a request, at a point not fired, for the past
@given(
    origin=st.sampled_from([0.0, 0.3, 1234.5678]),
    requests=st.lists(
        st.tuples(
            st.integers(1, 400),  # made at this grid point ...
            st.sampled_from([0.0, 1e-9, -1e-9, STEP / 2]),  # ... or a hair off it
            st.integers(-40, 200),  # for that many points later (or earlier) ...
            st.sampled_from([0.0, 0.0, 1e-9, -1e-9, STEP / 3]),  # ... exactly on a point, or off it
        ),
        max_size=14,
    ),
)
def test_arm_after_fires_what_the_full_search_fires(
    origin: float, requests: list[tuple[int, float, int, float]]
) -> None:
    """``arm_after``'s early returns (the armed point is already the first strictly after ``t``) must change nothing:
    the same firings as the full search, with requests made on and next to grid points, for points on and off the
    grid, in the past and the future (the case of a point equal to ``t`` is the one "strictly after" turns on)."""
    points = _polling_times(origin, origin + 3.0)
    made = [(points[i] + da, points[max(0, min(len(points) - 1, i + k))] + dt) for i, da, k, dt in requests]
    made = [(a, t) for a, t in made if a > origin]
    assert _firings(origin, made, "after") == _firings(origin, made, "full")
