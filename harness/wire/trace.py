"""Serial traces: every byte in both directions of every port, timestamped, and a replayer.

:class:`TracingTransport` wraps a device-side transport and records what the device writes (``dir: "tx"``,
device → server) and what it reads (``"rx"``, server → device) into a :class:`TraceRecorder`. A trace is saved as
JSON Lines, one chunk per line, bytes in hex so that any byte (garbage included) survives::

    {"t": 0.012345, "port": "BOWL", "dir": "tx", "hex": "2431203120424f574c..."}

and in a readable form, one chunk per line with non-printable bytes escaped::

    0.012345  BOWL     tx  $1 1 BOWL HELLO id=BOWL-0001 proto=1 fw=xocdia-hil-0.1*19BB\\r\\n

On a paced line (:class:`~harness.wire.transports.paced.PacedTransport` directly under the tracer) each chunk also
records when its bytes were on the line: ``first``, the first byte's start bit, and ``last``, the end of the last
byte's stop bits (same clock and origin as ``t``)::

    {"t": 0.012345, "port": "BOWL", "dir": "tx", "hex": "2431...0d0a", "first": 0.012345, "last": 0.016686}

and in the readable form after the bytes: ``  [line 0.012345..0.016686]``. Traces without them (unpaced lines,
traces written before) read as before, with ``first`` and ``last`` None.

:func:`replay` plays the recorded chunks of one port and direction into any transport with the recorded spacing
(record on a real table, replay in CI). ``t`` is seconds from the recorder's start by its injected clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Literal

from harness.feed import loads_shallow
from harness.wire.transports.base import Relay, Transport
from harness.wire.transports.paced import LineSpan, PacedTransport

Direction = Literal["tx", "rx"]


@dataclass(frozen=True, slots=True)
class TraceRecord:
    t: float
    port: str
    dir: Direction
    data: bytes
    first: float | None = None  # paced lines: the first byte's start bit
    last: float | None = None  # paced lines: the end of the last byte's stop bits

    def to_json(self) -> str:
        obj: dict[str, object] = {"t": round(self.t, 6), "port": self.port, "dir": self.dir, "hex": self.data.hex()}
        if self.first is not None and self.last is not None:
            obj["first"], obj["last"] = round(self.first, 6), round(self.last, 6)
        return json.dumps(obj, separators=(",", ":"))

    def readable(self) -> str:
        text = self.data.decode("latin-1").encode("unicode_escape").decode("ascii")
        line = "" if self.first is None or self.last is None else f"  [line {self.first:.6f}..{self.last:.6f}]"
        return f"{self.t:12.6f}  {self.port:<8} {self.dir}  {text}{line}"


class TraceRecorder:
    """Collects :class:`TraceRecord` s in arrival order. ``clock`` is injected (wall or sim seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._t0 = clock()
        self.records: list[TraceRecord] = []

    def record(self, port: str, direction: Direction, data: bytes, span: LineSpan | None = None) -> None:
        """Record ``data`` (nothing when empty) at the clock's now, with the line ``span`` it took (same clock)."""
        if data:
            first, last = (None, None) if span is None else (span.first - self._t0, span.last - self._t0)
            self.records.append(TraceRecord(self.clock() - self._t0, port, direction, bytes(data), first, last))

    def write_jsonl(self, out: IO[str]) -> None:
        for rec in self.records:
            out.write(rec.to_json() + "\n")

    def write_text(self, out: IO[str]) -> None:
        for rec in self.records:
            out.write(rec.readable() + "\n")


class TracingTransport(Relay):
    """Records every byte written (``tx``) and read (``rx``) through ``inner`` under the port name
    ``port``; with a :class:`PacedTransport` as ``inner``, each chunk with its line times."""

    def __init__(self, inner: Transport, recorder: TraceRecorder, port: str | None = None) -> None:
        super().__init__(inner)
        self.recorder = recorder
        self.port = port or inner.name
        self.paced = inner if isinstance(inner, PacedTransport) else None

    def read(self, timeout_s: float = 0.0) -> bytes:
        if self.paced is None:
            data = self.inner.read(timeout_s)
            if data:  # hot path: most reads of an in-memory line find nothing
                self.recorder.record(self.port, "rx", data)
            return data
        data, span = self.paced.read_spanned(timeout_s)
        self.recorder.record(self.port, "rx", data, span)
        return data

    def write(self, data: bytes) -> None:
        if self.paced is None:
            self.recorder.record(self.port, "tx", data)
            self.inner.write(data)
            return
        try:
            span = self.paced.write_spanned(data)
        except BaseException:
            self.recorder.record(self.port, "tx", data)  # as unpaced: recorded even when the port is gone
            raise
        self.recorder.record(self.port, "tx", data, span)


def read_trace(lines: Iterable[str]) -> list[TraceRecord]:
    """Parse a JSON Lines trace. Blank lines are skipped.

    Raises:
        ValueError: a line that is not a trace record, naming the line number and the field.
    """
    out: list[TraceRecord] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = loads_shallow(line)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            t, port, direction, hexdata = obj["t"], obj["port"], obj["dir"], obj["hex"]
            if not isinstance(t, int | float) or not isinstance(port, str):
                raise ValueError("t must be a number and port a string")
            if direction not in ("tx", "rx"):
                raise ValueError(f"dir must be tx or rx, got {direction!r}")
            first, last = obj.get("first"), obj.get("last")
            for key, value in (("first", first), ("last", last)):
                if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                    raise ValueError(f"{key} must be a number when present, got {value!r}")
            if (first is None) != (last is None):
                raise ValueError("first and last must be both present or both absent")
            span = (None, None) if first is None or last is None else (float(first), float(last))
            out.append(TraceRecord(float(t), port, direction, bytes.fromhex(hexdata), *span))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"trace line {number}: {exc!s}") from None
    return out


def replay(
    records: Iterable[TraceRecord],
    transport: Transport,
    port: str,
    direction: Direction = "tx",
    *,
    speed: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Write the chunks of ``port``/``direction`` into ``transport``, spaced as recorded (``speed`` 2 = twice as
    fast; 0 = as fast as possible). Returns the number of bytes written.

    Raises:
        ValueError: ``speed`` < 0.
    """
    if speed < 0:
        raise ValueError(f"speed must be >= 0, got {speed}")
    chosen = [r for r in records if r.port == port and r.dir == direction]
    if not chosen:
        return 0
    start_wall, start_t = clock(), chosen[0].t
    total = 0
    for rec in chosen:
        if speed > 0:
            wait = start_wall + (rec.t - start_t) / speed - clock()
            if wait > 0:
                sleep(wait)
        transport.write(rec.data)
        total += len(rec.data)
    return total
