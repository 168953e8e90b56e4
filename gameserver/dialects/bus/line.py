"""``xocdia-bus``: the server is the master of an addressed multi-drop bus and polls each device
(docs/dialects/xocdia-bus.md §5), written for the server from the document alone.

One request is on the bus at a time. A poll cycle starts every :data:`POLL_INTERVAL_S`; in it each device of the
line gets a POLL carrying the seq of the last report the server accepted from it (its acknowledgement). A device
that answers with a report is polled again at once (up to :data:`BURST` times a cycle, and only while the cycle is
within its interval), so its queue drains and its report is acknowledged without waiting for the next cycle. A
request unanswered after :data:`RESPONSE_TIMEOUT_S` is repeated, :data:`RETRIES` times (once for a device already
reported silent), then the cycle moves on. Lamp commands are WRITE requests to the lamp, sent before the next poll
and repeated until the lamp acknowledges them (after the retries of one cycle, again in the next: never dropped). A
report whose seq equals the last one accepted from its address is a duplicate: acknowledged again, not acted on. A
device that has not answered for ``silence_s`` is reported silent by :meth:`BusLine.tick` (once, until it answers
again). Reports are handed on in the order they happened, each held back at most :data:`HOLD_CYCLES` poll
intervals, also when no byte arrives after it (the bus gone quiet): :meth:`BusLine.tick` lets it go and
:meth:`BusLine.released` hands it on. A report from a device address this line does not poll is handed on as it
is, never taken as one of the line's own devices: the gateway's line guard refuses it and counts it as from another
line (``wrong_line``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from gameserver.dialects.base import ROLES, LineOption, ServerLine
from gameserver.dialects.bus.wire import ADDRESSES, BusFrame, Decoder, encode
from gameserver.protocol import BadFrame, Frame

POLL_INTERVAL_S = 0.05
RESPONSE_TIMEOUT_S = 0.02
RETRIES = 2
BURST = 4
#: A report is never held back for ordering longer than this many poll intervals (a device that stops answering is
#: left out of the ordering as soon as one poll to it goes unanswered; on a slow line the order is then best effort).
HOLD_CYCLES = 2
EPS = 1e-6  # a caller woken a float rounding error before a deadline still finds the work due
#: The line name that means "all five devices" when no roles are configured.
BUS_NAME = "bus"
#: Replies that are the dialogue's own, not reports: NOTHING, and the lamp's acknowledgements of writes.
_CONTROL = frozenset({"HB", "ACK", "NAK"})


@dataclass
class _Device:
    role: str
    last_rx: float
    expected: bool  # configured on this line (else found by scanning: reported silent only once heard)
    up: bool = True
    heard: bool = False
    last_seq: int | None = None
    ack: int = 0
    burst: int = 0
    offset: float | None = None  # server time minus device time, the smallest seen since its HELLO (s)
    mark: float = float("-inf")  # no report of this device happened before this (server time), but those held
    missed: bool = False  # its last poll went unanswered: it does not hold the others' reports back
    held: deque[tuple[float, Frame]] = field(default_factory=deque)  # (arrival, frame), not handed on yet


@dataclass
class _Pending:
    role: str
    raw: bytes
    due: float
    write: bool
    tries: int = 0


class BusLine(ServerLine):
    """The bus master of one line. ``roles``: the devices polled; none configured: all five (on a line named
    ``bus`` they are all expected from the start; on any other line each is expected once it has answered)."""

    dialect = "xocdia-bus"
    OPTIONS: ClassVar[Mapping[str, LineOption]] = {  # docs/dialects/xocdia-bus.md §1
        "poll_interval_s": LineOption(POLL_INTERVAL_S, 0.001, 10, unit="seconds"),
        "response_timeout_s": LineOption(RESPONSE_TIMEOUT_S, 0.001, 10, unit="seconds"),
        "retries": LineOption(RETRIES, 0, 10, whole=True),
    }

    def __init__(
        self,
        name: str,
        roles: tuple[str, ...],
        now: float,
        silence_s: float,
        poll_interval_s: float = POLL_INTERVAL_S,
        response_timeout_s: float = RESPONSE_TIMEOUT_S,
        retries: int = RETRIES,
    ) -> None:
        scanning = not roles and name != BUS_NAME
        if not roles and name == BUS_NAME:
            roles = ROLES
        super().__init__(name, roles, now, silence_s)
        polled = sorted(roles or ROLES, key=ADDRESSES.__getitem__)
        self.devices = {r: _Device(r, now, expected=not scanning) for r in polled}
        self.interval = poll_interval_s
        self.timeout = response_timeout_s
        self.retries = retries
        self.decoder = Decoder()
        self.writes: deque[tuple[str, tuple[tuple[str, str], ...]]] = deque()
        self.write_seq = 0  # the seq the head write went out with (0: not yet sent)
        self._seq = 0
        self.write_hold = float("-inf")
        self.refused: list[tuple[str, str]] = []  # (lamp command, NAK reason)
        self.pending: _Pending | None = None
        self.cycle: deque[str] = deque()
        self.cycle_due = now
        self._out = bytearray()
        self._peer: str | None = None
        self._ready: list[Frame | BadFrame] = []  # held reports tick let go, for released() or the next feed()
        self._next_request(now)

    # --- the bus ------------------------------------------------------------------------------------------------
    def _next_request(self, now: float) -> None:
        if self.pending is not None:
            return
        if self.writes and "LAMP" in self.devices and now >= self.write_hold - EPS:
            if not self.write_seq:
                self._seq = self.write_seq = self._seq % 255 + 1
            type_, fields = self.writes[0]
            self._request(_Pending("LAMP", encode(4, "SRV", type_, self.write_seq, fields), now + self.timeout, True))
            return
        if not self.cycle and now >= self.cycle_due - EPS:
            self.cycle.extend(self.devices)
            self.cycle_due = now + self.interval
            for device in self.devices.values():
                device.burst = 0
        if self.cycle:
            device = self.devices[self.cycle[0]]
            raw = encode(ADDRESSES[device.role], "SRV", "POLL", 0, (("ack", str(device.ack)),))
            self._request(_Pending(device.role, raw, now + self.timeout, False))

    def _request(self, pending: _Pending) -> None:
        self.pending = pending
        self._out += pending.raw

    def feed(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out, self._ready = self._ready, []  # let go by tick, not yet taken (:meth:`released`): they came first
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                continue
            device = self.devices.get(item.src)
            if device is None and item.src in ROLES and item.type not in _CONTROL:
                # a report from a device address not polled on this line: handed on, for the line guard to refuse
                # and count as from another line (``wrong_line``), as a push line's frame from another device is
                out.append(item.to_frame())
                continue
            if device is None:  # a request (the master's own echo?) or a control reply from an address not polled
                out.append(BadFrame("type", encode(item.addr, item.src, item.type, item.seq, item.fields)))
                continue
            device.last_rx = now
            device.up = device.heard = True
            device.missed = False
            self._peer = device.role
            self._reply(device, item, now)
        out += self._release(now)
        self._next_request(now)
        return out

    # --- ordering across devices ------------------------------------------------------------------------------------
    def _estimate(self, device: _Device, arrival: float, frame: Frame) -> float:
        """When the report happened, in server time: its device time moved by the device's offset, else its
        arrival."""
        at = frame.device_time_ms
        return arrival if at is None or device.offset is None else at / 1000 + device.offset

    def _release(self, now: float) -> list[Frame | BadFrame]:
        """Hand on the held reports in the order they happened: the earliest of the devices' oldest held reports
        goes once every other device has been heard from after it happened (its mark), is silent, or missed its
        last poll. Each device's own reports keep their order."""
        out: list[Frame | BadFrame] = []
        devices = list(self.devices.values())
        while True:
            heads = [(self._estimate(d, *d.held[0]), d) for d in devices if d.held]
            if not heads:
                return out
            when, first = min(heads, key=lambda h: h[0])
            arrival, frame = first.held[0]
            if now - arrival < HOLD_CYCLES * self.interval - EPS:
                for d in devices:
                    if d is first or d.held or not d.up or d.missed or not (d.expected or d.heard):
                        continue
                    if d.mark < when - EPS:
                        return out
            first.held.popleft()
            out.append(frame)

    def _reply(self, device: _Device, item: BusFrame, now: float) -> None:
        pending = self.pending
        answered = pending is not None and not pending.write and pending.role == device.role
        if item.type in ("ACK", "NAK"):
            if self.writes and self.write_seq and item.fields[0][1] == str(self.write_seq):
                type_, _fields = self.writes.popleft()
                if item.type == "NAK":
                    self.refused.append((type_, item.fields[1][1]))
                self.write_seq = 0
                self.write_hold = float("-inf")
                if pending is not None and pending.write:
                    self.pending = None
            return
        if item.type == "HB":  # NOTHING: this device has nothing more
            device.mark = now
            if answered:
                self.pending = None
                self._done_with_device()
            return
        fresh = item.seq != device.last_seq
        device.last_seq = device.ack = item.seq
        if fresh:
            frame = item.to_frame()
            at = frame.device_time_ms
            if item.type == "HELLO":
                device.offset = None
            elif at is not None:
                offset = now - at / 1000
                device.offset = offset if device.offset is None else min(device.offset, offset)
            device.held.append((now, frame))
            device.mark = max(device.mark, self._estimate(device, now, frame))
        if answered:
            self.pending = None
            device.burst += 1
            if device.burst > BURST or now >= self.cycle_due - EPS:  # the cycle overran: the others first
                self._done_with_device()

    def _done_with_device(self) -> None:
        if self.cycle:
            self.cycle.popleft()

    def send(self, type_: str, fields: tuple[tuple[str, str], ...], now: float) -> None:
        encode(4, "SRV", type_, 1, fields)  # refuse a command the bus cannot carry (ValueError)
        self.writes.append((type_, fields))
        self._next_request(now)

    @property
    def carries_lamp(self) -> bool:
        lamp = self.devices.get("LAMP")
        return lamp is not None and (lamp.expected or lamp.heard)

    # --- timers -------------------------------------------------------------------------------------------------
    def tick(self, now: float) -> list[str]:
        pending = self.pending
        if pending is not None and now >= pending.due - EPS:
            pending.tries += 1
            device = self.devices[pending.role]
            if pending.tries <= (self.retries if device.up and (device.expected or device.heard) else 0):
                pending.due = now + self.timeout
                self._out += pending.raw
            else:
                self.pending = None
                if pending.write:
                    self.write_hold = max(self.cycle_due, now + self.interval)
                else:
                    device.missed = True
                    self._done_with_device()
        silent = []
        for device in self.devices.values():
            if device.up and (device.expected or device.heard) and now >= device.last_rx + self.silence_s - EPS:
                device.up = False
                silent.append(device.role)
        self._ready += self._release(now)  # a wait that ended by time or by a device gone quiet: no byte needed
        self._next_request(now)
        return silent

    def released(self, now: float) -> list[Frame | BadFrame]:
        """The held reports :meth:`tick` let go (their wait ended by time, at most :data:`HOLD_CYCLES` poll intervals
        after their arrival, or because the devices they waited for missed a poll or went silent), whether or not
        another byte arrived; the next :meth:`feed` hands on those not taken here first."""
        out, self._ready = self._ready, []
        return out

    def next_deadline(self) -> float:
        if self.pending is not None:
            due = self.pending.due
        else:
            due = self.cycle_due
            if self.writes:
                due = min(due, self.write_hold)
        for device in self.devices.values():
            if device.up and (device.expected or device.heard):
                due = min(due, device.last_rx + self.silence_s)
        heads = [(self._estimate(d, *d.held[0]), d.held[0][0]) for d in self.devices.values() if d.held]
        if heads:  # the report handed on next goes by this time at the latest
            due = min(due, min(heads)[1] + HOLD_CYCLES * self.interval)
        return due

    @property
    def has_output(self) -> bool:
        return bool(self._out)

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    @property
    def up(self) -> bool:
        return all(d.up for d in self.devices.values() if d.expected or d.heard)

    @property
    def peer(self) -> str | None:
        return self._peer
