"""Transport faults, for the fault-injection scheduler: bit flips, dropped / duplicated / reordered frames,
frames sliced across reads, line errors (a byte with a framing or parity error), latency, and unplug / replug
(:class:`FaultyTransport`, :class:`FaultRates`)."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from harness.wire.transports.base import Transport, TransportClosed
from harness.wire.transports.capabilities import Pluggable, Replugging

Direction = Literal["tx", "rx"]


class Fault(StrEnum):
    FLIP = "flip"  # one random bit of the frame inverted
    DROP = "drop"  # the frame is lost
    DUPLICATE = "duplicate"  # the frame is delivered twice
    REORDER = "reorder"  # the frame is held and delivered after the next one
    SLICE = "slice"  # the frame arrives in pieces, in separate reads/writes
    LINE_ERROR = "line_error"  # one byte of the frame had a framing or parity error: read as NUL, or dropped


@dataclass(frozen=True, slots=True)
class FaultRates:
    """Per-frame probabilities, and delays in seconds. Raises ValueError naming a bad field."""

    flip: float = 0.0
    drop: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    slice: float = 0.0
    line_error: float = 0.0
    latency: float = 0.0  # added to every frame
    slice_gap: float = 0.002  # between the pieces of a sliced frame

    def __post_init__(self) -> None:
        for name in ("flip", "drop", "duplicate", "reorder", "slice", "line_error"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"fault rate {name}: must be a probability in [0, 1], got {value}")
        for name in ("latency", "slice_gap"):
            if getattr(self, name) < 0:
                raise ValueError(f"fault {name}: must be >= 0 seconds, got {getattr(self, name)}")


def line_error(frame: bytes, rng: random.Random) -> bytes:
    """``frame`` as a UART delivers it when one of its bytes (drawn from ``rng``) had a framing or parity error: with
    even odds the byte is read as NUL (termios' default for a bad byte, without ``IGNPAR`` or ``PARMRK``) or dropped
    (``IGNPAR``). An empty frame is returned as it is."""
    if not frame:
        return frame
    at = rng.randrange(len(frame))
    garbled = rng.random() < 0.5
    return frame[:at] + (b"\x00" if garbled else b"") + frame[at + 1 :]


class _Lane:
    """One direction: frames in, faulted chunks out at their due times."""

    def __init__(self, rates: FaultRates, rng: random.Random) -> None:
        self.rates = rates
        self.rng = rng
        self.partial = bytearray()
        self.scheduled: deque[Fault] = deque()
        self.held: bytes | None = None  # a reordered frame waiting for the next one
        self.out: deque[tuple[float, bytes]] = deque()
        self.counts: dict[Fault, int] = dict.fromkeys(Fault, 0)

    def _faults_for_frame(self) -> set[Fault]:
        faults = set()
        if self.scheduled:
            faults.add(self.scheduled.popleft())
        r = self.rates
        for fault, p in (
            (Fault.FLIP, r.flip),
            (Fault.DROP, r.drop),
            (Fault.DUPLICATE, r.duplicate),
            (Fault.REORDER, r.reorder),
            (Fault.SLICE, r.slice),
            (Fault.LINE_ERROR, r.line_error),
        ):
            if p > 0.0 and self.rng.random() < p:
                faults.add(fault)
        return faults

    def push(self, data: bytes, now: float) -> None:
        self.partial += data
        while True:
            nl = self.partial.find(b"\n")
            if nl < 0:
                return
            frame = bytes(self.partial[: nl + 1])
            del self.partial[: nl + 1]
            self._frame(frame, now)

    def _frame(self, frame: bytes, now: float) -> None:
        faults = self._faults_for_frame()
        for fault in faults:
            self.counts[fault] += 1
        if Fault.DROP in faults:
            return
        if Fault.FLIP in faults:
            bit = self.rng.randrange(len(frame) * 8)
            flipped = bytearray(frame)
            flipped[bit // 8] ^= 1 << (bit % 8)
            frame = bytes(flipped)
        if Fault.LINE_ERROR in faults:
            frame = line_error(frame, self.rng)
        if Fault.REORDER in faults and self.held is None:
            self.held = frame
            return
        due = now + self.rates.latency
        copies = 2 if Fault.DUPLICATE in faults else 1
        for _ in range(copies):
            if Fault.SLICE in faults and len(frame) > 1:
                cuts = sorted(self.rng.sample(range(1, len(frame)), min(3, len(frame) - 1)))
                for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(frame)], strict=True)):
                    self.out.append((due + i * self.rates.slice_gap, frame[a:b]))
            else:
                self.out.append((due, frame))
        if self.held is not None:
            held, self.held = self.held, None
            self.out.append((due, held))

    def due(self, now: float, limit: int | None = None) -> list[bytes]:
        chunks: list[bytes] = []
        while self.out and self.out[0][0] <= now and (limit is None or len(chunks) < limit):
            chunks.append(self.out.popleft()[1])
        return chunks

    def next_due(self) -> float | None:
        return self.out[0][0] if self.out else None


class FaultyTransport(Transport):
    """Wraps ``inner`` and applies faults per frame (a frame is the bytes up to and including ``\\n``) in both
    directions: ``tx`` (what this side writes) and ``rx`` (what it reads).

    Faults are either scheduled one at a time (``inject("tx", Fault.DROP)``: applies to the next frame) or drawn
    per frame with the probabilities of a :class:`FaultRates` (``tx``, ``rx``), from the caller-seeded ``rng``
    (never the global one). Latency and slicing hold bytes until their due time; the owner calls :meth:`tick` with
    its clock. ``clock`` gives the time used for latency (sim or wall seconds, e.g. ``env.now``).
    """

    def __init__(
        self,
        inner: Transport,
        rng: random.Random,
        clock: Callable[[], float],
        tx: FaultRates | None = None,
        rx: FaultRates | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.clock = clock
        self.lanes: dict[Direction, _Lane] = {
            "tx": _Lane(tx or FaultRates(), rng),
            "rx": _Lane(rx or FaultRates(), rng),
        }
        self._unplugged = False

    @property
    def address(self) -> str:
        return self.inner.address

    @property
    def connected(self) -> bool:
        return self.inner.connected and not self._unplugged

    def inject(self, direction: Direction, fault: Fault) -> None:
        """Apply ``fault`` to the next frame going ``direction``."""
        self.lanes[direction].scheduled.append(fault)

    def counts(self, direction: Direction) -> dict[Fault, int]:
        """How many frames got each fault so far."""
        return dict(self.lanes[direction].counts)

    def unplug(self) -> None:
        """Pull the cable: if the inner port can be unplugged for real (:class:`Pluggable`: pty, memory) it is;
        bytes in flight are lost."""
        for lane in self.lanes.values():
            lane.out.clear()
            lane.partial.clear()
            lane.held = None
        if isinstance(self.inner, Pluggable):
            self.inner.unplug()
        self._unplugged = True

    def replug(self) -> None:
        """Put the cable back, and the inner port's too when it acts on that (:class:`Replugging`)."""
        if isinstance(self.inner, Replugging):
            self.inner.replug()
        self._unplugged = False

    def notify(self, callback: Callable[[], None]) -> None:
        self.inner.notify(callback)

    def fds(self) -> list[int]:
        return [] if self._unplugged else self.inner.fds()

    def read(self, timeout_s: float = 0.0) -> bytes:
        if self._unplugged:
            raise TransportClosed(f"{self.name}: unplugged")
        lane = self.lanes["rx"]
        data = self.inner.read(timeout_s if not lane.out else 0.0)
        now = self.clock()
        if data:
            lane.push(data, now)
        chunks = lane.due(now, limit=1 if self.lanes["rx"].rates.slice or lane.counts[Fault.SLICE] else None)
        return b"".join(chunks)

    def write(self, data: bytes) -> None:
        if self._unplugged:
            raise TransportClosed(f"{self.name}: unplugged")
        lane = self.lanes["tx"]
        lane.push(data, self.clock())
        self.tick(self.clock())

    def tick(self, now: float) -> float | None:
        if not self._unplugged:
            for chunk in self.lanes["tx"].due(now):
                self.inner.write(chunk)
        inner_due = self.inner.tick(now)  # a wrapped transport (e.g. another FaultyTransport) may hold bytes too
        due = (self.lanes["tx"].next_due(), self.lanes["rx"].next_due(), inner_due)
        times = [t for t in due if t is not None]
        return min(times) if times else None

    def next_release(self) -> float | None:
        """When the next held-back read chunk is due (``rx`` latency or slicing), or the wrapped transport's."""
        times = [t for t in (self.lanes["rx"].next_due(), self.inner.next_release()) if t is not None]
        return min(times) if times else None

    def close(self) -> None:
        self.inner.close()
