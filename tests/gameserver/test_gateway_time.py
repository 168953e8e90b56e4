"""The device gateway on a real pty (opened with pyserial) dates frames by their ``at=<ms>`` in the engine's
clock, learning each line's offset in its own monotonic clock: a step of the engine's wall clock between two
frames moves the second estimate with it instead of dating it seconds early; a HELLO forgets the offset."""

from __future__ import annotations

import os
import time
import tty
from collections.abc import Iterator

import pytest

from gameserver.events import ReportKind, TableReport
from gameserver.gateway import DeviceGateway, open_serial
from gameserver.protocol import encode


class SteppedClock:
    """A wall clock 1000 s ahead of the monotonic clock that the test can step."""

    def __init__(self) -> None:
        self.step = 1000.0

    def __call__(self) -> float:
        return time.monotonic() + self.step


@pytest.fixture
def bowl_line() -> Iterator[tuple[int, str]]:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


def wait_reports(got: list[TableReport], n: int) -> list[TableReport]:
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        bowl = [r for r in got if r.kind is not ReportKind.PROBLEM]
        if len(bowl) >= n:
            return bowl
        time.sleep(0.01)
    raise AssertionError(f"expected {n} bowl reports, got {got}")


def test_a_wall_clock_step_does_not_date_frames_early_and_hello_resets(bowl_line: tuple[int, str]) -> None:
    master, path = bowl_line
    got: list[TableReport] = []
    wall = SteppedClock()
    gateway = DeviceGateway({"bowl": open_serial("bowl", path)}, got.append, event_clock=wall, accept_untagged=True)
    gateway.start()
    try:
        os.write(master, encode(1, "BOWL", "ON", (("at", "5000"),)))
        (on,) = wait_reports(got, 1)
        assert on.happened_at is not None and on.happened_at <= wall()
        wall.step += 5.0  # NTP steps the wall clock 5 s forward
        os.write(master, encode(2, "BOWL", "OFF", (("touch", "0"), ("token", "-"), ("at", "5100"))))
        off = wait_reports(got, 2)[1]
        now = wall()
        # dated by the line's (monotonic) offset, then moved into the stepped wall clock at its arrival:
        # within the 5 s wait of the test, not 5 s before it
        assert off.happened_at is not None and now - 1.0 < off.happened_at <= now
        os.write(master, encode(3, "BOWL", "HELLO", (("id", "B1"), ("proto", "1"), ("fw", "t"))))
        # after the HELLO the device clock restarted near 0: without the reset, at=40 would be dated
        # 4.96 s before the BOWL ON above
        os.write(master, encode(4, "BOWL", "ON", (("at", "40"),)))
        again = wait_reports(got, 3)[2]
        now = wall()
        assert again.happened_at is not None and now - 1.0 < again.happened_at <= now
    finally:
        gateway.stop()
