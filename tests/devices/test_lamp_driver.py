"""The lamp device: server lamp commands become states of the simulator's lamp, which the dealer follows."""

from __future__ import annotations

import simpy

from harness.bench.devices.lamp import LampDriver
from harness.wire.messages import LampClose, LampOpen, LampReshake, ReshakeReason
from simulator.lamp import Lamp, LampState


def driver() -> LampDriver:
    return LampDriver(Lamp(simpy.Environment()))


def test_a_reshake_after_the_close_keeps_betting_closed() -> None:
    # a drop after the close: the dealer waits for "betting closed" before lifting, and no second CLOSE comes
    d = driver()
    d.apply(LampOpen("7", 1000), 0.0)
    d.apply(LampClose("7"), 1.0)
    d.apply(LampReshake("7", ReshakeReason.DROP), 2.0)
    assert d.lamp.state is LampState.BETTING_CLOSED
    assert d.lamp.signal.round == 7


def test_a_reshake_during_betting_shows_reshake() -> None:
    d = driver()
    d.apply(LampOpen("7", 1000), 0.0)
    d.apply(LampReshake("7", ReshakeReason.DROP), 0.5)
    assert d.lamp.state is LampState.RESHAKE


def test_wire_ids_map_back_to_the_round_numbers_they_opened() -> None:
    d = driver()
    d.apply(LampOpen("R000017", 1000), 0.0)
    d.apply(LampOpen("R000018", 1000), 2.0)
    assert [d.wire_id(1), d.wire_id(2), d.wire_id(3)] == ["R000017", "R000018", None]
