"""A bus master (the reference server's ``gameserver.dialects.bus.BusLine`` and the kit's own
``harness.wire.dialects.bus.master.BusServerEnd``) holds a report back for ordering at most ``HOLD_CYCLES`` poll
intervals, also when no byte arrives after it: a report that came in just before the bus went
quiet (the cable cut) is handed on by ``tick``/``released`` within that bound and before any device is reported
silent, not kept until some unrelated byte arrives (after the outage, behind the link-down problem it preceded)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from gameserver.dialects.bus import BusLine
from gameserver.dialects.bus.line import HOLD_CYCLES, POLL_INTERVAL_S, RESPONSE_TIMEOUT_S
from gameserver.protocol import Frame as ServerFrame
from harness.wire.dialects import EndSettings, load_dialect, plan_lines
from harness.wire.dialects.bus.master import BusServerEnd
from harness.wire.messages import DEVICES, BowlOff, BowlOn, Frame, Source

SILENCE_S = 3.0


class Bus:
    """The harness's device end for all five devices and the reference server's BusLine on an instant line that can
    be cut, in virtual time; the master's frames are collected with the time each was handed on."""

    def __init__(self, master: str) -> None:
        dialect = load_dialect("xocdia-bus")
        plan = plan_lines(dialect, DEVICES)[0]
        self.device = dialect.device_end(plan, EndSettings(unit="T"))
        self.line: Any = BusLine("bus", tuple(r.value for r in DEVICES), 0.0, SILENCE_S)
        if master == "harness":
            self.line = dialect.server_end(plan, EndSettings(silence_s=SILENCE_S), 0.0)
            assert isinstance(self.line, BusServerEnd)
        self.now = 0.0
        self.device.open(0.0)
        self.connected = True
        self.handed: list[tuple[float, str]] = []  # (when, report type)
        self.silent: list[tuple[float, str]] = []
        self.cut_when_held = False

    def _take(self, frames: Sequence[object]) -> None:
        for f in frames:
            if isinstance(f, ServerFrame):
                self.handed.append((self.now, f.type))
            elif isinstance(f, Frame):
                self.handed.append((self.now, f.message.TYPE))

    def _feed(self, data: bytes) -> list[Any]:
        if isinstance(self.line, BusLine):
            return self.line.feed(data, self.now)
        return list(self.line.receive(data, self.now))

    def _holding(self) -> bool:
        stations = self.line.devices if isinstance(self.line, BusLine) else self.line.stations
        return any(st.held for st in stations.values())

    def settle(self) -> None:
        for _ in range(50):
            down = self.line.take_output()
            if down and self.connected:
                self.device.receive(down, self.now)
            up = self.device.take_output()
            if up and self.connected:
                self._take(self._feed(up))
                if self.cut_when_held and self._holding():
                    self.connected = False  # the cable is cut right after the report arrived and was held
            if not (down and self.connected) and not (up and self.connected):
                return
        raise AssertionError("the line never went quiet")

    def run(self, seconds: float) -> None:
        until = self.now + seconds
        self.settle()
        while True:
            dev = self.device.next_deadline()
            due = min(self.line.next_deadline(), math.inf if dev is None else dev)
            assert due > self.now - 1e-9, "a deadline in the past: the service would spin"
            if due > until:
                break
            self.now = due
            self.silent += [(self.now, str(r)) for r in self.line.tick(self.now)]
            self._take(self.line.released(self.now))
            self.device.poll(self.now)
            self.settle()
        self.now = until


@pytest.mark.parametrize("master", ["gameserver", "harness"])
def test_a_report_held_when_the_bus_goes_quiet_is_handed_on_within_the_hold_bound(master: str) -> None:
    bus = Bus(master)
    bus.run(0.2)  # every device's HELLO
    bus.device.send(Source.BOWL, BowlOn(), bus.now, round="17", at=round(bus.now * 1000))
    bus.run(0.2)
    bus.cut_when_held = True
    bus.device.send(Source.BOWL, BowlOff(False, None), bus.now, round="17", at=round(bus.now * 1000))
    bus.run(0.0)
    bus.run(POLL_INTERVAL_S * 1.01)  # the next poll takes the lift, which waits for the others' word
    arrived = bus.now
    assert not bus.connected, "the lift was never held (nothing to test)"
    bus.run(SILENCE_S + 1.0)
    lifts = [t for t, kind in bus.handed if kind in ("OFF", "BOWL_OFF")]
    assert len(lifts) == 1, bus.handed
    assert lifts[0] <= arrived + HOLD_CYCLES * POLL_INTERVAL_S + RESPONSE_TIMEOUT_S, (lifts[0], arrived)
    assert bus.silent and lifts[0] < min(t for t, _ in bus.silent), (lifts, bus.silent)
