"""The server's end of an ``xocdia-bus`` line, the bus master (docs/dialects/xocdia-bus.md §5).

Guarantees: :class:`BusServerEnd` keeps one request at a time on the bus, polls every device once per cycle,
acknowledges a report by the next POLL to its address, writes lamp commands (retried) until the lamp acknowledges
them, suppresses duplicates, hands reports on in event order (holding one back at most ``HOLD_CYCLES`` poll
intervals, also when no byte arrives after it: :meth:`BusServerEnd.tick` lets it go and
:meth:`BusServerEnd.released` hands it on) and reports silent devices. Sans I/O, like
:class:`harness.wire.link.Link`: fed bytes and the time, it says when it next needs to run.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from harness.wire.dialects.base import Dialect, EndSettings, LineSpec, ServerEnd
from harness.wire.dialects.bus.catalogue import EPS, Poll, next_seq
from harness.wire.dialects.bus.codec import CODEC
from harness.wire.frame_errors import BadFrame, ErrorReason
from harness.wire.messages import LAMP_COMMANDS, Ack, Frame, Heartbeat, Hello, Message, Nak, Source

#: The longest a report is held back to be handed on in event order, in poll intervals (a device that does not
#: answer its poll stops holding the others back at once; on a slow line the order is then best effort).
HOLD_CYCLES = 2
#: Follow-up polls per device and cycle: a device that answered with a report is polled again at once (the poll
#: acknowledges it and fetches the next one), at most this many times a cycle and only while the cycle is within its
#: poll interval (on a slow line every device first gets its turn).
BURST = 4


@dataclass(slots=True)
class _Station:
    """What the master knows of one address."""

    role: Source
    last_rx: float
    up: bool = True  # expected from the start: a device silent since the line opened is reported
    last_seq: int | None = None  # seq of the last report accepted (duplicates have it)
    ack: int = 0  # what the next POLL acknowledges
    burst: int = 0
    offset: float | None = None  # server time minus device time (s), the smallest since its HELLO
    mark: float = -math.inf  # none of its reports happened before this (server time), except those held
    missed: bool = False  # its last poll went unanswered: it holds no other device's report back
    held: deque[tuple[float, Frame]] = field(default_factory=deque)  # (arrival, frame) not handed on yet


@dataclass(slots=True)
class _Request:
    """The request on the bus, waiting for its reply."""

    role: Source
    raw: bytes
    due: float
    write: bool
    tries: int = 0


class BusServerEnd(ServerEnd):
    """The bus master of one line (see the module doc)."""

    def __init__(self, dialect: Dialect, line: LineSpec, settings: EndSettings, now: float) -> None:
        self.roles = line.roles
        self.interval = float(dialect.options["poll_interval_s"])
        self.timeout = float(dialect.options["response_timeout_s"])
        self.retries = int(dialect.options["retries"])
        self.silence_s = settings.silence_s
        self.stations = {r: _Station(r, now) for r in line.roles}
        self.decoder = CODEC.decoder()
        self.writes: deque[Message] = deque()
        self.write_seq = 0  # seq of the write at the head of ``writes`` once sent (0: not sent yet)
        self._last_write_seq = 0
        self.write_hold = -math.inf  # a write that exhausted its retries waits for the next cycle
        self.refused: list[tuple[Message, Nak]] = []
        self.request: _Request | None = None
        self.cycle: deque[Source] = deque()
        self.cycle_due = now
        self._out = bytearray()
        self._ready: list[Frame | BadFrame] = []  # held reports tick let go, for released() or the next receive()
        self._advance(now)

    # --- requests -----------------------------------------------------------------------------------------------
    def _advance(self, now: float) -> None:
        """Put the next request on the bus when it is free: a lamp write first, else the next poll of the cycle
        (a new cycle when the last one is over and the next is due)."""
        if self.request is not None:
            return
        if self.writes and now >= self.write_hold - EPS:
            if not self.write_seq:
                self._last_write_seq = self.write_seq = next_seq(self._last_write_seq)
            raw = CODEC.encode(Frame(self.write_seq, Source.SERVER, self.writes[0]))
            self._put(_Request(Source.LAMP, raw, now + self.timeout, True), now)
            return
        if not self.cycle and now >= self.cycle_due - EPS:
            self.cycle.extend(self.roles)
            self.cycle_due = now + self.interval
            for station in self.stations.values():
                station.burst = 0
        if self.cycle:
            station = self.stations[self.cycle[0]]
            raw = CODEC.encode(Frame(0, Source.SERVER, Poll(station.role, station.ack)))
            self._put(_Request(station.role, raw, now + self.timeout, False), now)

    def _put(self, request: _Request, now: float) -> None:
        self.request = request
        self._out += request.raw

    def send(self, message: Message, now: float) -> None:
        if Source.LAMP not in self.stations:
            raise ValueError("the lamp is not on this line")
        if type(message) not in LAMP_COMMANDS:
            raise ValueError(f"only lamp commands are written, not {type(message).__name__}")
        CODEC.encode(Frame(1, Source.SERVER, message))  # refuse a bad command now (EncodeError)
        self.writes.append(message)
        self._advance(now)

    # --- replies ------------------------------------------------------------------------------------------------
    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out, self._ready = self._ready, []  # let go by tick, not yet taken (:meth:`released`): they came first
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                continue
            station = self.stations.get(item.src)
            if station is None:
                why = "a request on the master's side" if item.src is Source.SERVER else "not on this line"
                out.append(BadFrame(ErrorReason.TYPE, CODEC.encode(item), f"{item.src.value}: {why}", None, None))
                continue
            station.last_rx = now
            station.up = True
            station.missed = False
            self._on_reply(station, item, now)
        out += self._release(now)
        self._advance(now)
        return out

    @staticmethod
    def _when(station: _Station, arrival: float, frame: Frame) -> float:
        """When a report happened, in server time: its event time moved by its device's offset, else its arrival."""
        return arrival if frame.at is None or station.offset is None else frame.at / 1000 + station.offset

    def _release(self, now: float) -> list[Frame | BadFrame]:
        """The held reports that can go, in the order they happened: the earliest of the devices' oldest held
        reports goes once every other device was heard from after it happened, is silent or missed its last poll
        (or after :data:`HOLD_CYCLES` poll intervals). A device's own reports keep their order."""
        out: list[Frame | BadFrame] = []
        stations = list(self.stations.values())
        while True:
            heads = [(self._when(st, *st.held[0]), n, st) for n, st in enumerate(stations) if st.held]
            if not heads:
                return out
            when, _n, first = min(heads, key=lambda h: (h[0], h[1]))
            arrival, frame = first.held[0]
            if now - arrival < HOLD_CYCLES * self.interval - EPS and any(
                st is not first and not st.held and st.up and not st.missed and st.mark < when - EPS for st in stations
            ):
                return out
            first.held.popleft()
            out.append(frame)

    def _on_reply(self, station: _Station, frame: Frame, now: float) -> None:
        msg, request = frame.message, self.request
        polled = request is not None and not request.write and request.role is station.role
        if isinstance(msg, Ack | Nak):
            if self.write_seq and msg.of == self.write_seq and self.writes:
                written = self.writes.popleft()
                self.write_seq = 0
                self.write_hold = -math.inf
                if isinstance(msg, Nak):
                    self.refused.append((written, msg))
                if request is not None and request.write:
                    self.request = None
            return
        if isinstance(msg, Heartbeat):
            station.mark = now
            if polled:
                self.request = None
                self._next_in_cycle()
            return
        # a report or HELLO (data)
        if frame.seq != station.last_seq:
            if isinstance(msg, Hello):
                station.offset = None
            elif frame.at is not None:
                offset = now - frame.at / 1000
                station.offset = offset if station.offset is None else min(station.offset, offset)
            station.held.append((now, frame))
            station.mark = max(station.mark, self._when(station, now, frame))
        station.last_seq = station.ack = frame.seq
        if polled:
            self.request = None
            station.burst += 1
            if station.burst > BURST or now >= self.cycle_due - EPS:  # no follow-up once the cycle overruns
                self._next_in_cycle()

    def _next_in_cycle(self) -> None:
        if self.cycle:
            self.cycle.popleft()

    # --- timers -------------------------------------------------------------------------------------------------
    def tick(self, now: float) -> list[Source]:
        request = self.request
        if request is not None and now >= request.due - EPS:
            request.tries += 1
            station = self.stations[request.role]
            if request.tries <= (self.retries if station.up else 0):
                request.due = now + self.timeout
                self._out += request.raw
            else:  # give up for this cycle (a write is kept, and tried again next cycle)
                self.request = None
                if request.write:
                    self.write_hold = max(self.cycle_due, now + self.interval)
                else:
                    station.missed = True
                    self._next_in_cycle()
        silent = []
        for station in self.stations.values():
            if station.up and now >= station.last_rx + self.silence_s - EPS:
                station.up = False
                silent.append(station.role)
        self._ready += self._release(now)  # a wait that ended by time or by a device gone quiet: no byte needed
        self._advance(now)
        return silent

    def released(self, now: float) -> list[Frame | BadFrame]:
        """The held reports :meth:`tick` let go (their wait ended by time, at most :data:`HOLD_CYCLES` poll intervals
        after their arrival, or because the devices they waited for missed a poll or went silent), whether or not
        another byte arrived (:class:`~harness.wire.dialects.capabilities.Releasing`); the next :meth:`receive`
        hands on those not taken here first."""
        out, self._ready = self._ready, []
        return out

    def next_deadline(self) -> float | None:
        if self.request is not None:
            due = self.request.due
        else:
            due = self.cycle_due
            if self.writes:
                due = min(due, self.write_hold)
        for station in self.stations.values():
            if station.up:
                due = min(due, station.last_rx + self.silence_s)
        heads = [(self._when(st, *st.held[0]), st.held[0][0]) for st in self.stations.values() if st.held]
        if heads:  # the report handed on next goes by this time at the latest
            due = min(due, min(heads)[1] + HOLD_CYCLES * self.interval)
        return due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out
