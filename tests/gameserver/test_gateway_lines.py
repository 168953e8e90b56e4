"""The gateway builds each line in its dialect, and a line's guard accepts the devices the dialect says it carries."""

from __future__ import annotations

import serial

from gameserver.gateway import DeviceGateway


def test_a_bus_line_without_configured_roles_accepts_all_five_devices() -> None:
    port = serial.serial_for_url("loop://", timeout=0.05)
    gateway = DeviceGateway({"bus": port}, lambda _report: None, dialects={"bus": "xocdia-bus"})
    gateway.start()
    try:
        assert gateway.guards["bus"].allowed == {"BOWL", "SHAKER", "READER", "LAMP", "CONSOLE"}
        assert gateway.status()["bus"]["dialect"] == "xocdia-bus"
    finally:
        gateway.stop()


def test_an_ascii_line_named_after_a_device_carries_only_that_device() -> None:
    port = serial.serial_for_url("loop://", timeout=0.05)
    gateway = DeviceGateway({"reader": port}, lambda _report: None)
    gateway.start()
    try:
        assert gateway.guards["reader"].allowed == {"READER"}
        assert gateway.status()["reader"]["dialect"] == "xocdia-ascii"
    finally:
        gateway.stop()
