"""A dialect for the forge's tests: the shipped ASCII dialect, except that its device end cannot forge (it has the
members of :class:`~harness.wire.dialects.base.DeviceEnd` only), as a lab's own device end may be."""

from __future__ import annotations

from harness.wire.dialects.ascii import AsciiDialect
from harness.wire.dialects.base import DelegatingDeviceEnd, DeviceEnd, EndSettings, LineSpec


class PlainEnd(DelegatingDeviceEnd):
    """A device end that passes everything to the ASCII dialect's own, and forges nothing."""


class PlainDialect(AsciiDialect):
    name = "test-plain"
    summary = "the ASCII dialect with a device end that cannot forge"

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return PlainEnd(super().device_end(line, settings))
