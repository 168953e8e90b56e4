"""Dialects for the tests of a bench that follows what a dialect declares it carries: device ends that keep every
report the table hands them (role, message, round tag, event time) before passing it to the dialect's own end."""

from __future__ import annotations

from harness.wire.dialects.ascii import AsciiDialect
from harness.wire.dialects.base import DelegatingDeviceEnd, DeviceEnd, EndSettings, LineSpec, ProtocolCapabilities
from harness.wire.messages import Message, Source
from tests.wire.dialects.vendor_poll import VendorPollDialect

#: One report as a device end was handed it: (device, message, round tag, event time).
Sent = tuple[Source, Message, str | None, int | None]


class RecordingEnd(DelegatingDeviceEnd):
    """A device end that keeps each report it is handed in :attr:`sent`, then passes everything to ``inner``."""

    def __init__(self, inner: DeviceEnd) -> None:
        super().__init__(inner)
        self.sent: list[Sent] = []

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        self.sent.append((src, message, round, at))
        self.inner.send(src, message, now, round, at)


class BareVendor(VendorPollDialect):
    """The vendor's polled protocol declaring the least it can: no round tags, event times, identities, token
    sensor, token positions, problem reasons or betting time (its codec carries positions and reasons: only the
    declaration keeps them off the wire)."""

    name = "test-bare-vendor"
    capabilities = ProtocolCapabilities(
        round_tags=False,
        event_times=False,
        identities=False,
        token_sensor=False,
        positions=False,
        problem_reasons=False,
        betting_time_on_open=False,
        round_ids="numeric",
    )

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return RecordingEnd(super().device_end(line, settings))


class RecordingAscii(AsciiDialect):
    """The shipped ASCII dialect (it declares everything), its reports recorded."""

    name = "test-recording-ascii"

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return RecordingEnd(super().device_end(line, settings))


class UntaggedAscii(AsciiDialect):
    """The ASCII protocol of revision 1.0 as the server process speaks it (the name is the shipped dialect's):
    device reports carry no round tag."""

    capabilities = ProtocolCapabilities(round_tags=False)
