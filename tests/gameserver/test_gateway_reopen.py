"""A device on TCP that drops its connection: the gateway reports the I/O error once, opens the URL again, and the
device's frames reach the engine on the new connection."""

from __future__ import annotations

import time

from gameserver.events import ReportKind, TableReport
from gameserver.gateway import DeviceGateway, open_serial
from harness.wire.messages import BowlOn, Frame, Hello, Source
from harness.wire.text import encode
from harness.wire.transports.netserver import SerialServer


def _wait(cond: object, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_a_dropped_tcp_device_is_reopened_and_its_frames_arrive() -> None:
    device = SerialServer("bowl", rfc2217=False)
    url = device.address
    reports: list[TableReport] = []
    gateway = DeviceGateway(
        {"bowl": open_serial("bowl", url)}, reports.append, reopen=lambda name: open_serial(name, url)
    )
    gateway.start()
    try:
        assert _wait(lambda: (device.tick(0.0), device.connected)[1])
        device._drop_client()  # the device end closes the connection, as a camera restarting would
        assert _wait(lambda: any("gateway error" in r.detail for r in reports)), reports
        assert _wait(lambda: (device.tick(0.0), device.connected)[1]), "the gateway did not connect again"
        device.write(encode(Frame(1, Source.BOWL, Hello("BOWL-0001", 1, "fw"))))
        device.write(encode(Frame(2, Source.BOWL, BowlOn(), round="1")))
        assert _wait(lambda: any(r.kind is ReportKind.BOWL_ON for r in reports)), reports
        assert sum("gateway error" in r.detail for r in reports) == 1  # one report per episode
    finally:
        gateway.stop()
        device.close()
