"""Serial traces: every byte in both directions of every port, timestamped, and a replayer.

:class:`TracingTransport` wraps a device-side transport and records what the device writes (``dir: "tx"``,
device → server) and what it reads (``"rx"``, server → device) into a :class:`TraceRecorder`. A trace is saved as
JSON Lines, one chunk per line, bytes in hex so that any byte (garbage included) survives::

    {"t": 0.012345, "port": "BOWL", "dir": "tx", "hex": "2431203120424f574c..."}

and in a readable form, one chunk per line with non-printable bytes escaped::

    0.012345  BOWL     tx  $1 1 BOWL HELLO id=BOWL-0001 proto=1 fw=xocdia-hil-0.1*19BB\\r\\n

:func:`replay` plays the recorded chunks of one port and direction into any transport with the recorded spacing
(record on a real table, replay in CI). ``t`` is seconds from the recorder's start by its injected clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Literal

from harness.wire.transports.base import Relay, Transport

Direction = Literal["tx", "rx"]


@dataclass(frozen=True, slots=True)
class TraceRecord:
    t: float
    port: str
    dir: Direction
    data: bytes

    def to_json(self) -> str:
        return json.dumps(
            {"t": round(self.t, 6), "port": self.port, "dir": self.dir, "hex": self.data.hex()},
            separators=(",", ":"),
        )

    def readable(self) -> str:
        text = self.data.decode("latin-1").encode("unicode_escape").decode("ascii")
        return f"{self.t:12.6f}  {self.port:<8} {self.dir}  {text}"


class TraceRecorder:
    """Collects :class:`TraceRecord` s in arrival order. ``clock`` is injected (wall or sim seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._t0 = clock()
        self.records: list[TraceRecord] = []

    def record(self, port: str, direction: Direction, data: bytes) -> None:
        if data:
            self.records.append(TraceRecord(self.clock() - self._t0, port, direction, bytes(data)))

    def write_jsonl(self, out: IO[str]) -> None:
        for rec in self.records:
            out.write(rec.to_json() + "\n")

    def write_text(self, out: IO[str]) -> None:
        for rec in self.records:
            out.write(rec.readable() + "\n")


class TracingTransport(Relay):
    """Records every byte written (``tx``) and read (``rx``) through ``inner`` under the port name
    ``port``."""

    def __init__(self, inner: Transport, recorder: TraceRecorder, port: str | None = None) -> None:
        super().__init__(inner)
        self.recorder = recorder
        self.port = port or inner.name

    def read(self, timeout_s: float = 0.0) -> bytes:
        data = self.inner.read(timeout_s)
        self.recorder.record(self.port, "rx", data)
        return data

    def write(self, data: bytes) -> None:
        self.recorder.record(self.port, "tx", data)
        self.inner.write(data)


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
            obj = json.loads(line)
            t, port, direction, hexdata = obj["t"], obj["port"], obj["dir"], obj["hex"]
            if not isinstance(t, int | float) or not isinstance(port, str):
                raise ValueError("t must be a number and port a string")
            if direction not in ("tx", "rx"):
                raise ValueError(f"dir must be tx or rx, got {direction!r}")
            out.append(TraceRecord(float(t), port, direction, bytes.fromhex(hexdata)))
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
