"""The lamp: its signal, the ``changed`` event on every change and ``opened`` only for a new round."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
import simpy

from simulator import Lamp, LampSignal, LampState


def test_a_new_lamp_is_off_for_round_zero() -> None:
    lamp = Lamp(simpy.Environment())
    assert lamp.signal == LampSignal(LampState.OFF, 0, None)
    assert lamp.state is LampState.OFF


def test_betting_open_needs_a_deadline() -> None:
    lamp = Lamp(simpy.Environment())
    with pytest.raises(ValueError, match="betting open needs a deadline"):
        lamp.set(LampState.BETTING_OPEN, 1)
    assert lamp.state is LampState.OFF  # the refused change left the lamp as it was


def test_waiters_see_every_change_and_each_new_round_once() -> None:
    env = simpy.Environment()
    lamp = Lamp(env)
    changes: list[tuple[float, LampSignal]] = []
    openings: list[tuple[float, int]] = []

    def watch_changes() -> Generator[Any, Any, None]:
        while True:
            signal = yield lamp.changed
            changes.append((env.now, signal))

    def watch_openings() -> Generator[Any, Any, None]:
        while True:
            signal = yield lamp.opened
            openings.append((env.now, signal.round))

    def drive() -> Generator[Any, Any, None]:
        lamp.set(LampState.BETTING_OPEN, 1, deadline=15.0)
        yield env.timeout(2)
        lamp.set(LampState.PAUSED)  # round defaults to the current one
        yield env.timeout(3)
        lamp.set(LampState.BETTING_OPEN, 1, deadline=18.0)  # a resume, not a new round
        yield env.timeout(13)
        lamp.set(LampState.BETTING_CLOSED)
        yield env.timeout(5)
        lamp.set(LampState.BETTING_OPEN, 2, deadline=38.0)

    env.process(watch_changes())
    env.process(watch_openings())
    env.process(drive())
    env.run(until=100)
    assert changes == [
        (0, LampSignal(LampState.BETTING_OPEN, 1, 15.0)),
        (2, LampSignal(LampState.PAUSED, 1, None)),
        (5, LampSignal(LampState.BETTING_OPEN, 1, 18.0)),
        (18, LampSignal(LampState.BETTING_CLOSED, 1, None)),
        (23, LampSignal(LampState.BETTING_OPEN, 2, 38.0)),
    ]
    assert openings == [(0, 1), (23, 2)]
