"""A dialect for the forge's per-line tests: the shipped ASCII dialect, except that each line's format carries only its
own device's reports, as on a table whose devices speak different formats (a controller's lines and a camera's).
Its :meth:`~harness.wire.dialects.base.Dialect.codec` is the whole ASCII codec (what the conformance kit checks), so a
one-codec answer says every report can go on every line; its device ends forge only their own device's reports and
tell so (:class:`~harness.wire.dialects.capabilities.ForgeEncoding`)."""

from __future__ import annotations

from dataclasses import replace

from harness.lab import DeviceEnd, EncodeError, EndSettings, Frame, LineSpec
from harness.wire.dialects.ascii import AsciiDialect
from harness.wire.dialects.push import PushDeviceEnd


class OwnLineEnd(PushDeviceEnd):
    """A push end whose line's format carries its own device's reports only: anything else is an EncodeError, when
    forged as when asked (:meth:`forged_bytes`)."""

    def forged_bytes(self, frame: Frame) -> bytes:
        """The bytes :meth:`forge` writes for ``frame``. Raises EncodeError for another device's report."""
        if frame.src is not self.src:
            raise EncodeError(f"src: the {self.src.value.lower()} line's format carries no {frame.src.value} report")
        return self.codec.encode(frame)

    def forge(self, frame: Frame, now: float) -> int:
        self.forged_bytes(replace(frame, seq=1))  # refused before a number is taken
        return super().forge(frame, now)


class OwnLineDialect(AsciiDialect):
    name = "test-own-line"
    summary = "the ASCII dialect, each line's format carrying its own device's reports only"

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return OwnLineEnd(self, line, settings)
