"""Each scenario starts from a clean table: on a server that keeps running between scenarios, lamp commands for
rounds this table never saw open (a void round's VOID sent again, a late CLOSE) change nothing, and the first round
the table sees open is its round 1."""

from __future__ import annotations

import simpy

from harness.bench.devices.lamp import OrdinalLampDriver
from harness.wire.messages import LampClose, LampOpen, LampVoid, VoidClause
from simulator.lamp import Lamp, LampState


def test_commands_for_rounds_never_opened_here_change_nothing() -> None:
    driver = OrdinalLampDriver(Lamp(simpy.Environment()))
    before = driver.lamp.state
    driver.apply(LampVoid("41", next(iter(VoidClause))), 0.0)  # left over from an earlier scenario
    driver.apply(LampClose("41"), 0.1)
    assert (driver.lamp.state, driver.rounds) == (before, {})
    driver.apply(LampOpen("42", 1000), 1.0)
    assert driver.lamp.state is LampState.BETTING_OPEN and driver.lamp.signal.round == 1
    driver.apply(LampVoid("41", next(iter(VoidClause))), 1.5)  # still not this table's round
    assert driver.lamp.state is LampState.BETTING_OPEN
    driver.apply(LampClose("42"), 2.0)
    assert driver.lamp.state is LampState.BETTING_CLOSED and driver.rounds == {"42": 1}
