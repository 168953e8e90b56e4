"""Line pacing: :class:`PacedTransport` makes a transport take the time a real UART takes to move bytes.

Each direction of the line is a queue of *bursts* (the bytes of one write, or of one arrival), sent back to back at
the speed of the line settings (:class:`~harness.wire.transports.line.LineSettings`) in force when the burst goes
on the line. With ``b = byte_time_s`` and ``s = b + inter_byte_gap_s`` (the step from one start bit to the next):

- a burst of ``n`` bytes handed over at ``t`` starts when the line is free: ``start = max(t, free)``;
- byte ``k`` (0-based) starts at ``start + k*s`` and has fully arrived at ``start + k*s + b`` (after its stop bits),
  which is when the peer may read it;
- the burst's span is ``first = start`` (the first start bit) to ``last = start + (n-1)*s + b`` (the last stop
  bit's end): ``last - first = n*b + (n-1)*gap``, the time the line needs;
- the line is free again at ``last + gap``.

Both directions are paced:

- ``tx`` (what the owner writes): with ``hold_tx`` (the default: the peer is another process reading a pty or a
  socket), the bytes are held and handed to the wrapped transport when they have arrived, by :meth:`tick` (in
  groups at most :data:`RELEASE_QUANTUM_S` apart, so a fast line does not wake the loop for every byte). Without
  ``hold_tx`` (both ends in this process, each end wrapped: the peer's own wrapper paces what it reads), the bytes
  pass at once and only the span is computed (for the trace).
- ``rx`` (what the owner reads): bytes read from the wrapped transport are timestamped when they arrive and handed
  out by :meth:`read` when their time has come; :meth:`next_release` and :meth:`tick` say when the earliest
  held burst has fully arrived (one wake-up per burst, not one per byte: a read before then gets the bytes of it
  already due). On a transport without fds (in-memory pipes, virtual time) the bytes are taken in at the moment
  they are written, through :meth:`~harness.wire.transports.base.Transport.notify`.

An RFC 2217 client may change the line's speed: when the wrapped transport (or one it wraps) has a
``negotiated_line(base)`` method (:class:`~harness.wire.transports.capabilities.LineNegotiating`:
:class:`~harness.wire.transports.netserver.SerialServer`), the settings it returns apply to every burst scheduled
from then on; bursts already scheduled keep their times.

:meth:`write_spanned` and :meth:`read_spanned` also return the :class:`LineSpan` of the bytes (the serial trace
records it). The clock is injected: ``env.now`` in virtual time, the wall clock in real time.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, NamedTuple

from harness.wire.transports.base import Relay, Transport, TransportClosed
from harness.wire.transports.capabilities import LineConfigurable, LineNegotiating, layers
from harness.wire.transports.line import LineSettings

RELEASE_QUANTUM_S = 0.001  # real time: bytes due within this many seconds of each other are released together
_EPS = 1e-9  # float slack when comparing a byte's arrival time with now


class LineSpan(NamedTuple):
    """When some bytes were on the line: the first byte's start bit and the end of the last byte's stop bits."""

    first: float
    last: float


class _Burst:
    """The bytes of one write (or one arrival), back to back from ``start``."""

    __slots__ = ("byte_s", "data", "start", "step", "taken")

    def __init__(self, data: bytes, start: float, line: LineSettings) -> None:
        self.data = data
        self.start = start
        self.byte_s = line.byte_time_s
        self.step = line.step_s
        self.taken = 0  # bytes already handed on

    def arrival(self, k: int) -> float:
        """When byte ``k`` has fully arrived: ``start + k*step + byte_time``."""
        return self.start + k * self.step + self.byte_s

    @property
    def end(self) -> float:
        return self.arrival(len(self.data) - 1)

    @property
    def done(self) -> bool:
        return self.taken >= len(self.data)

    def take(self, now: float) -> tuple[bytes, LineSpan | None]:
        """The bytes not handed on yet that have arrived by ``now``, and their span."""
        late = now + _EPS - self.start - self.byte_s
        due = 0 if late < 0 else min(len(self.data), int(late // self.step) + 1)
        if due <= self.taken:
            return b"", None
        chunk = self.data[self.taken : due]
        span = LineSpan(self.start + self.taken * self.step, self.arrival(due - 1))
        self.taken = due
        return chunk, span


class _Lane:
    """One direction of the line: bursts back to back, and when the line is free again."""

    def __init__(self) -> None:
        self.bursts: deque[_Burst] = deque()
        self.free = -math.inf

    def reserve(self, data: bytes, now: float, line: LineSettings, keep: bool) -> LineSpan:
        """Put ``data`` on the line at ``now`` (after what is already on it); ``keep`` queues it to be handed on."""
        burst = _Burst(data, max(now, self.free), line)
        self.free = burst.end + line.inter_byte_gap_s
        if keep:
            self.bursts.append(burst)
        return LineSpan(burst.start, burst.end)

    def take(self, now: float) -> tuple[bytes, LineSpan | None]:
        """Every byte that has arrived by ``now``, oldest first, and the span of them."""
        chunks: list[bytes] = []
        first: float | None = None
        last = 0.0
        while self.bursts:
            burst = self.bursts[0]
            chunk, span = burst.take(now)
            if span is not None:
                chunks.append(chunk)
                first = span.first if first is None else first
                last = span.last
            if not burst.done:
                break
            self.bursts.popleft()
        return b"".join(chunks), (None if first is None else LineSpan(first, last))

    def next_byte(self) -> float | None:
        """When the next byte not handed on yet arrives."""
        return self.bursts[0].arrival(self.bursts[0].taken) if self.bursts else None

    def next_burst_end(self) -> float | None:
        """When the oldest burst not fully handed on has fully arrived."""
        return self.bursts[0].end if self.bursts else None

    def clear(self) -> int:
        """Forget every held byte (the line is gone); returns how many."""
        lost = sum(len(b.data) - b.taken for b in self.bursts)
        self.bursts.clear()
        self.free = -math.inf
        return lost


def _negotiator(transport: Transport) -> Callable[[LineSettings], LineSettings] | None:
    """The ``negotiated_line`` method of ``transport`` or of the first one it wraps that has one
    (:class:`~harness.wire.transports.capabilities.LineNegotiating`), if any."""
    for layer in layers(transport):
        if isinstance(layer, LineNegotiating):
            return layer.negotiated_line
    return None


class PacedTransport(Relay):
    """``inner`` at the speed of ``line`` in both directions (see the module's docstring for the timing).

    Args:
        inner: the transport to pace (a pty, a serial server, a URL, an in-memory end, a fault wrapper).
        line: the line settings (an RFC 2217 client's changes override them, see ``negotiated_line``).
        clock: seconds, the same clock the owner ticks with (``env.now`` or the wall clock).
        hold_tx: hold written bytes until they have arrived (the peer is outside this process); False when the
            peer's own end is paced too.
        sleep: how :meth:`read` waits when given a timeout (real time only).
        quantum_s: the least spacing of the releases :meth:`tick` asks for.
    """

    def __init__(
        self,
        inner: Transport,
        line: LineSettings,
        clock: Callable[[], float] = time.monotonic,
        *,
        hold_tx: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        quantum_s: float = RELEASE_QUANTUM_S,
    ) -> None:
        super().__init__(inner)
        self.line = line
        self.clock = clock
        self.hold_tx = hold_tx
        self.sleep = sleep
        self.quantum_s = quantum_s
        self.tx = _Lane()
        self.rx = _Lane()
        self._negotiated = _negotiator(inner)
        self._wake: Callable[[], None] | None = None
        inner.notify(self._on_input)  # without fds, arrivals are timed when written, whoever reads and when

    def settings(self) -> LineSettings:
        """The settings in force now: the ones given, or what an RFC 2217 client set."""
        return self.line if self._negotiated is None else self._negotiated(self.line)

    # --- tx ---------------------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        self.write_spanned(data)

    def write_spanned(self, data: bytes) -> LineSpan | None:
        """Write ``data``; returns when it is on the line (None when nothing went on the line: no bytes, or a port
        that is not connected, which then raises or drops them as it always does)."""
        if not data:
            return None
        if not self.inner.connected:
            self.inner.write(data)
            return None
        now = self.clock()
        span = self.tx.reserve(bytes(data), now, self.settings(), keep=self.hold_tx)
        if self.hold_tx:
            self._release(now)
        else:
            self.inner.write(data)
        return span

    def _release(self, now: float) -> None:
        data, _span = self.tx.take(now)
        if not data:
            return
        try:
            self.inner.write(data)
        except TransportClosed:  # the port went away under the held bytes: they are lost, as on a cut cable
            self.dropped += len(data) + self.tx.clear()

    # --- rx ---------------------------------------------------------------------------------------------
    def notify(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when bytes arrive (after taking them in) or new bytes are held for later."""
        self._wake = callback

    def _on_input(self) -> None:
        """Bytes were written to the wrapped end (no fds): take them in now, so they are timed from now."""
        try:
            data = self.inner.read(0.0)
        except TransportClosed:
            data = b""  # the owner's next read says so
        if data:
            self.rx.reserve(data, self.clock(), self.settings(), keep=True)
        if self._wake is not None:
            self._wake()

    def read(self, timeout_s: float = 0.0) -> bytes:
        return self.read_spanned(timeout_s)[0]

    def read_spanned(self, timeout_s: float = 0.0) -> tuple[bytes, LineSpan | None]:
        """The bytes that have arrived (within ``timeout_s``), and their span. Raises TransportClosed when the
        port is gone (the held bytes are lost)."""
        held = bool(self.rx.bursts)
        try:
            data = self.inner.read(0.0 if held else timeout_s)
        except TransportClosed:
            self.rx.clear()
            raise
        now = self.clock()
        if data:
            self.rx.reserve(data, now, self.settings(), keep=True)
        out, span = self.rx.take(now)
        if not out and self.rx.bursts:
            due = self.rx.next_byte()
            assert due is not None
            if timeout_s > 0 and due - now <= timeout_s:
                self.sleep(max(due - now, 0.0))
                out, span = self.rx.take(self.clock())
            elif data and self._wake is not None:
                self._wake()  # new bytes are held: let the owner tick again to learn when they are due
        return out, span

    # --- time -------------------------------------------------------------------------------------------
    def tick(self, now: float) -> float | None:
        """Release the written bytes that have arrived; returns when the next written byte arrives (at least
        :attr:`quantum_s` from now), the held read bytes have arrived, or the wrapped transport needs a tick."""
        self._release(now)
        times = [self.inner.tick(now), self.rx.next_burst_end()]
        nxt = self.tx.next_byte()
        if nxt is not None:
            times.append(max(nxt, now + self.quantum_s))
        due = [t for t in times if t is not None]
        return min(due) if due else None

    def next_release(self) -> float | None:
        """When the oldest held read burst has fully arrived, or the wrapped transport's release (a read before then
        gets the bytes of the burst already due, not none)."""
        due = [t for t in (self.rx.next_burst_end(), self.inner.next_release()) if t is not None]
        return min(due) if due else None

    def close(self) -> None:
        self.tx.clear()
        self.rx.clear()
        self.inner.close()


def pace_lines(
    device: MutableMapping[Any, Transport],
    server: Mapping[str, Any],
    line: LineSettings | None,
    clock: Callable[[], float],
) -> None:
    """Pace every line of a bench at ``line`` (nothing when None), in place: ``device`` maps each line (a line name,
    or a device whose ``value`` lowered is the line name) to its device end, ``server`` the line name to the server's
    end (a Transport when it is in this process) or what the server opens (a path, a URL).

    - a server end in this process (in-memory pipes): both ends are wrapped, each pacing what it reads, so that
      in virtual time a write costs O(1) events, not one a byte;
    - otherwise the device end is wrapped and holds what it writes until the line has carried it; a pyserial port
      under it (``apply_line``: a real UART, ``rfc2217://``) is set to the same settings.

    Raises:
        TransportClosed: a port refused the settings.
        TypeError: an in-process server end in a mapping that cannot be changed.
    """
    if line is None:
        return
    for key, end in list(device.items()):
        name = key if isinstance(key, str) else str(getattr(key, "value", key)).lower()
        peer = server.get(name)
        if isinstance(peer, Transport):
            if not isinstance(server, MutableMapping):
                raise TypeError(f"the server end of line {name} is in this process: its mapping must be mutable")
            server[name] = PacedTransport(peer, line, clock, hold_tx=False)
            device[key] = PacedTransport(end, line, clock, hold_tx=False)
            continue
        for layer in layers(end):  # a real port under relays and fault wrappers runs at the line's speed too
            if isinstance(layer, LineConfigurable):
                layer.apply_line(line)
                break
        device[key] = PacedTransport(end, line, clock)
