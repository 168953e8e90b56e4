"""A dialect for the forge's tests: the shipped ASCII dialect, except that its device end cannot forge (it has the
members of :class:`~harness.wire.dialects.base.DeviceEnd` only), as a lab's own device end may be."""

from __future__ import annotations

from harness.wire.dialects.ascii import AsciiDialect
from harness.wire.dialects.base import DeviceEnd, EndSettings, LineSpec, RoleEvent
from harness.wire.messages import Message, Source


class PlainEnd(DeviceEnd):
    """A device end that passes everything to the ASCII dialect's own, and forges nothing."""

    def __init__(self, inner: DeviceEnd) -> None:
        self.inner = inner
        self.roles = inner.roles

    def open(self, now: float) -> None:
        self.inner.open(now)

    def close(self) -> None:
        self.inner.close()

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        self.inner.send(src, message, now, round, at)

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        return self.inner.receive(data, now)

    def poll(self, now: float) -> list[RoleEvent]:
        return self.inner.poll(now)

    def next_deadline(self) -> float | None:
        return self.inner.next_deadline()

    def take_output(self) -> bytes:
        return self.inner.take_output()

    def take_events(self) -> list[RoleEvent]:
        return self.inner.take_events()

    def pending(self) -> int:
        return self.inner.pending()


class PlainDialect(AsciiDialect):
    name = "test-plain"
    summary = "the ASCII dialect with a device end that cannot forge"

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return PlainEnd(super().device_end(line, settings))
