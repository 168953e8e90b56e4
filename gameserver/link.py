"""The server end of one device port (docs/protocol.md §4-§5), sans I/O: feed it decoded items and the time,
take the bytes it wants written. Stop-and-wait for data frames, 200 ms retransmission (5 fast, then every
second, never dropping), duplicate suppression, 1 s heartbeats, link down after ``silence_s`` of silence.

Deliberate leniency: a data frame that arrives before the peer's HELLO is accepted (not NAKed ``state``), so
a server restarted under running devices is not locked out until each device re-opens its port.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from gameserver.protocol import BadFrame, Frame, encode, encode_ack

RETRY_S = 0.2
FAST_RETRIES = 5
SLOW_RETRY_S = 1.0
HEARTBEAT_S = 1.0
_HB = encode(0, "SRV", "HB")  # the heartbeat frame: always the same bytes


@dataclass
class _Flight:
    seq: int
    raw: bytes
    due: float
    tries: int = 0


class ServerLink:
    """Protocol state of one port. ``up`` is True while frames keep arriving; ``has_output`` while bytes wait to be
    taken (:meth:`take_output`). ``deadline`` is :meth:`next_deadline`'s value, kept up to date by every method that
    moves a timer. Read ``has_output`` and ``deadline``, never set them."""

    def __init__(self, name: str, now: float, silence_s: float = 3.0, server_id: str = "SRV-ref") -> None:
        self.name = name
        self.silence_s = silence_s
        self.peer: str | None = None  # src of the peer's frames (BOWL, LAMP, ...)
        self.up = True  # expected up from the start: a device silent since we opened the port is reported
        self._hello = (("id", server_id), ("proto", "1"), ("fw", "0.1.0"))
        self._seq = 0
        self._queue: deque[tuple[str, tuple[tuple[str, str], ...]]] = deque()
        self._flight: _Flight | None = None
        self._last_rx_seq: int | None = None
        self._last_was_hello = False
        self._last_rx = now
        self._last_tx = now
        self._out = bytearray()
        self.has_output = False  # hot path: an attribute kept with ``_out``, asked on every service step
        self.refused: list[tuple[int, str]] = []  # (seq, reason) of our frames the peer NAKed
        self.deadline = now + HEARTBEAT_S
        self.send("HELLO", self._hello, now)

    def send(self, type_: str, fields: tuple[tuple[str, str], ...], now: float) -> None:
        """Queue a data frame from SRV (HELLO or a lamp command); sent when nothing else is in flight."""
        self._queue.append((type_, fields))
        self._pump(now)
        self._rearm()

    def take_output(self) -> bytes:
        """Bytes to write to the port now."""
        if not self._out:  # hot path: asked on every service step, mostly with nothing to write
            return b""
        out, self._out = bytes(self._out), bytearray()
        self.has_output = False
        return out

    def _write(self, raw: bytes, now: float) -> None:
        self._out += raw
        self.has_output = True
        self._last_tx = now

    def _pump(self, now: float) -> None:
        if self._flight is not None or not self._queue:
            return
        type_, fields = self._queue.popleft()
        self._seq = self._seq % 65535 + 1
        raw = encode(self._seq, "SRV", type_, fields)
        self._flight = _Flight(self._seq, raw, now + RETRY_S)
        self._write(raw, now)

    def receive(self, item: Frame | BadFrame, now: float) -> Frame | None:
        """Handle one decoded item; returns the frame to act on (new device data), else None."""
        if isinstance(item, BadFrame):
            if item.nak is not None and item.seq is not None:
                self._write(encode(0, "SRV", "NAK", (("of", str(item.seq)), ("reason", item.nak))), now)
                self._rearm()
            return None
        self._last_rx = now
        self.up = True
        src, type_ = item.src, item.type
        if src != "SRV":
            self.peer = src
        act: Frame | None = None  # hot path: one exit, so the deadline is recomputed in one place
        if type_ == "ACK" or type_ == "NAK":
            flight = self._flight
            if flight is not None and int(item.get("of")) == flight.seq:
                if type_ == "NAK":
                    self.refused.append((flight.seq, item.get("reason")))
                self._flight = None
                self._pump(now)
        elif type_ == "HB":
            pass
        elif src == "SRV":  # a server never receives SRV messages
            self._write(encode(0, "SRV", "NAK", (("of", str(item.seq)), ("reason", "type"))), now)
        elif type_ == "HELLO" and item.get("proto") != "1":
            self._write(encode(0, "SRV", "NAK", (("of", str(item.seq)), ("reason", "version"))), now)
        else:
            if type_ == "HELLO" and not (self._last_was_hello and item.seq == self._last_rx_seq):
                self._last_rx_seq = None  # a new HELLO resets the memory; a repeat of the last one is a duplicate
            self._write(encode_ack(item.seq), now)
            if item.seq != self._last_rx_seq:  # else a duplicate: acknowledged again, not acted on
                self._last_rx_seq = item.seq
                self._last_was_hello = type_ == "HELLO"
                act = item
        self._rearm()
        return act

    def next_deadline(self) -> float:
        """The earliest time at which :meth:`tick` may act (a retransmission, a heartbeat, the silence limit).
        Before it, :meth:`tick` changes nothing; at or after it, it may (ticks are compared as :meth:`tick`
        does, so a caller waking at exactly this time may still find nothing to do)."""
        return self.deadline

    def _rearm(self) -> None:
        """Recompute :attr:`deadline` (after anything that may have moved a timer)."""
        # hot path: the bench asks every line's deadline on every service step; it changes only here
        due = self._last_tx + HEARTBEAT_S
        flight = self._flight
        if flight is not None and flight.due < due:
            due = flight.due
        if self.up and self._last_rx + self.silence_s < due:
            due = self._last_rx + self.silence_s
        self.deadline = due

    def tick(self, now: float) -> bool:
        """Run the timers; returns True exactly when the link has just gone down (silence)."""
        flight = self._flight
        moved = False
        if flight is not None and now >= flight.due:
            flight.tries += 1
            flight.due = now + (RETRY_S if flight.tries < FAST_RETRIES else SLOW_RETRY_S)
            self._write(flight.raw, now)
            moved = True
        if now - self._last_tx >= HEARTBEAT_S:
            self._write(_HB, now)
            moved = True
        if self.up and now - self._last_rx >= self.silence_s:
            self.up = False
            self._rearm()
            return True
        if moved:
            self._rearm()
        return False
