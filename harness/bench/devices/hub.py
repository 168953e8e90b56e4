"""The device ends of the table's lines: one :class:`~harness.wire.dialects.base.DeviceEnd` per line (in the line's
dialect; a line of an addressed bus carries several devices), each on its own transport, serviced together.

The hub owns no clock and no thread: the caller passes ``now`` (sim or wall seconds) to :meth:`DeviceHub.send` and
:meth:`DeviceHub.service`, and calls ``service`` again by :meth:`DeviceHub.service`'s returned deadline or when a
transport fd is readable. A port that is unplugged keeps its queued frames; when it is back (a pty replugged, a
client connected to a serial server) the device sends HELLO and then the queued frames, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.wire.dialects.ascii.dialect import AsciiDialect
from harness.wire.dialects.base import DeviceEnd, EndSettings, LineSpec, RoleEvent
from harness.wire.line_events import LinkEvent, Received
from harness.wire.link import HEARTBEAT_S
from harness.wire.messages import DEVICES, Message, Source
from harness.wire.transports.base import Transport, TransportClosed

FIRMWARE = "xocdia-hil-0.1"
EARLY_S = 1e-6  # a deadline this close counts as due: float sums may land a hair before the deadline's own sum
CommandHandler = Callable[[Source, Message, float], None]
EventHandler = Callable[[Source, LinkEvent, float], None]


@dataclass(slots=True)
class DevicePort:
    """One line: its name, the devices it carries, its transport, its dialect's device end, and whether the transport
    was connected at the last service."""

    name: str
    roles: tuple[Source, ...]
    transport: Transport
    end: DeviceEnd
    connected: bool = False
    sent: int = field(default=0)
    dirty: bool = True  # input may have arrived, or a write changed the line's timers, since the last service
    due: float | None = None  # the port's next deadline as of its last service (None: only input)
    watched: bool = False  # its transport marks it dirty on input (watch_input): it may be skipped while idle


class DeviceHub:
    """The device ends of the table's lines.

    Args:
        transports: one transport per line: by device (one ASCII line each, the default) or, with ``lines``, by line
            name. Devices not given are absent from the table.
        lines: the lines and their dialects (:func:`harness.wire.dialects.plan_lines`); default one ``xocdia-ascii``
            line per device in ``transports``.
        on_command: called with each new data frame a device receives from the server (lamp commands).
        on_event: called with every link event (for logs, traces and tests).
        require_ack: False to fire and forget (a person watching with a terminal acknowledges nothing).
        unit: identity suffix in HELLO (``BOWL-<unit>``).
        heartbeat_s: seconds of quiet before a device sends HB (``math.inf``: never, e.g. for long virtual-time
            campaigns where heartbeats would only cost time).
    """

    def __init__(
        self,
        transports: Mapping[Source, Transport] | Mapping[str, Transport],
        *,
        lines: Sequence[LineSpec] | None = None,
        on_command: CommandHandler | None = None,
        on_event: EventHandler | None = None,
        require_ack: bool = True,
        unit: str = "0001",
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        if lines is None:
            unknown = [s for s in transports if s not in DEVICES]
            if unknown:
                raise ValueError(f"not a device: {unknown}; devices are {[d.value for d in DEVICES]}")
            ascii_ = AsciiDialect()
            lines = [LineSpec(Source(s).value.lower(), (Source(s),), "serial", ascii_) for s in transports]
            by_name: Mapping[str, Transport] = {Source(s).value.lower(): t for s, t in transports.items()}
        else:
            by_name = {str(k): t for k, t in transports.items()}
        missing = [line.name for line in lines if line.name not in by_name]
        if missing:
            raise ValueError(f"no transport for line(s) {missing}")
        self.on_command = on_command
        self.on_event = on_event
        settings = EndSettings(unit=unit, firmware=FIRMWARE, require_ack=require_ack, heartbeat_s=heartbeat_s)
        self.ports: dict[str, DevicePort] = {}
        self.roles: dict[Source, DevicePort] = {}
        for line in lines:
            port = DevicePort(line.name, line.roles, by_name[line.name], line.dialect.device_end(line, settings))
            self.ports[line.name] = port
            for role in line.roles:
                self.roles[role] = port

    def start(self, now: float) -> None:
        """Open every connected port: each device sends its HELLO."""
        for port in self.ports.values():
            self._check_connection(port, now)

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> bool:
        """Queue a device report, tagged with ``round`` and stamped with the event time ``at`` (the device's
        clock, ms) when given (docs/protocol.md §6, "Round tag", "Event time"); both stay fixed on every
        retransmission. Written at once when the line is free. A missing device is an error.

        Returns True when the port needs a :meth:`service` now; False when a service now would do nothing but
        compute the port's next deadline, which this call then has done (:meth:`next_due` includes it): a watched
        port (:meth:`watch_input`) with no input or write pending from before, its connection unchanged, a
        transport with no timed work (:attr:`~harness.wire.transports.base.Transport.untimed`), and nothing of its
        line end due now.

        Raises:
            KeyError: the hub has no such device.
        """
        port = self.roles[src]
        end = port.end
        was_dirty = port.dirty
        end.send(src, message, now, round, at)
        port.sent += 1
        self._flush(port, now)
        transport = port.transport
        if was_dirty or not port.watched or not port.connected or not transport.connected or not transport.untimed:
            return True
        due = end.next_deadline()
        if due is not None and due <= now + EARLY_S:
            return True
        port.dirty = False  # the write moved no release time: this transport holds none back
        port.due = due
        return False

    def next_due(self) -> float | None:
        """The earliest deadline of any port as of its last service or :meth:`send` (None: only on input)."""
        due: float | None = None
        for port in self.ports.values():
            nxt = port.due
            if nxt is not None and (due is None or nxt < due):
                due = nxt
        return due

    def watch_input(self, wake: Callable[[], None]) -> None:
        """Have each transport without descriptors (in-memory lines) mark its port when bytes arrive and then call
        ``wake``. From then on :meth:`service` skips such a port while it is idle: no input since its last service,
        no write since, its connection unchanged, and neither its line end's nor its transport's deadline due (by
        :data:`EARLY_S`), so servicing it would change nothing. Ports with descriptors are serviced every time."""
        for port in self.ports.values():
            if not port.transport.fds():
                port.transport.notify(self._marker(port, wake))
                port.watched = True

    @staticmethod
    def _marker(port: DevicePort, wake: Callable[[], None]) -> Callable[[], None]:
        """What a watched transport calls on input: mark ``port`` and wake the service (one call, not two)."""

        def mark() -> None:
            port.dirty = True
            wake()

        return mark

    def service(self, now: float) -> float | None:
        """Read, run timers and write on every port (but idle ones, see :meth:`watch_input`); returns the next time
        service is needed (None: only on input)."""
        due: float | None = None
        soon = now + EARLY_S
        for port in self.ports.values():
            nxt = port.due
            if (
                port.dirty
                or not port.watched
                or (nxt is not None and nxt <= soon)
                or port.connected != port.transport.connected
            ):
                # hot path: the steps of _dispatch and _flush inlined where they are no-ops
                transport = port.transport
                port.dirty = False
                tick = transport.tick(now)  # first: it may accept a client or release delayed bytes
                self._check_connection(port, now)
                if port.connected:
                    end = port.end
                    self._read(port, now)
                    events = end.poll(now)
                    if events:
                        self._dispatch(events, now)
                    out = end.take_output()
                    if out and port.connected:
                        self._write(port, out, now)  # leaves the port dirty: a write may move the transport's release
                    # bytes the read took in but holds back (a paced line: its last byte has not arrived yet) are
                    # due then; the tick above, taken before the read, does not know them, and a pty's descriptor
                    # will not wake the service again for bytes already read
                    held = transport.next_release()
                    if held is not None and (tick is None or held < tick):
                        tick = held
                end_due = port.end.next_deadline() if port.connected else None
                nxt = end_due if tick is None or (end_due is not None and end_due < tick) else tick
                port.due = nxt
            if nxt is not None and (due is None or nxt < due):
                due = nxt
        return due

    def fds(self) -> list[int]:
        """Descriptors to wait on for input (all ports)."""
        return [fd for port in self.ports.values() for fd in port.transport.fds()]

    def pending(self) -> int:
        """Messages queued or in flight on all ports (0 when everything was acknowledged)."""
        return sum(port.end.pending() for port in self.ports.values())

    def close(self) -> None:
        for port in self.ports.values():
            port.transport.close()

    # --- internals --------------------------------------------------------------------------------------
    def _check_connection(self, port: DevicePort, now: float) -> None:
        connected = port.transport.connected
        if connected and not port.connected:
            self._opened(port, now)
        elif not connected and port.connected:
            self._lost(port, now)

    def _opened(self, port: DevicePort, now: float) -> None:
        port.connected = True
        port.end.open(now)
        self._flush(port, now)

    def _lost(self, port: DevicePort, now: float) -> None:
        port.connected = False
        port.end.close()
        self._dispatch(port.end.take_events(), now)

    def _read(self, port: DevicePort, now: float) -> None:
        read = port.transport.read
        receive = port.end.receive
        for _ in range(64):  # bounded: a flooding peer cannot starve the other ports
            try:
                data = read(0.0)
            except TransportClosed:
                self._lost(port, now)
                return
            if not data:
                return
            events = receive(data, now)
            if events:
                self._dispatch(events, now)

    def _flush(self, port: DevicePort, now: float) -> None:
        out = port.end.take_output()
        if out and port.connected:
            self._write(port, out, now)

    def _write(self, port: DevicePort, out: bytes, now: float) -> None:
        """Write ``out`` (not empty) to the connected ``port``."""
        port.dirty = True  # a write may move the transport's release times: service the port once more
        try:
            port.transport.write(out)
        except TransportClosed:
            self._lost(port, now)

    def _dispatch(self, events: list[RoleEvent], now: float) -> None:
        on_event, on_command = self.on_event, self.on_command
        for src, event in events:
            if on_event is not None:
                on_event(src, event, now)
            if on_command is not None and isinstance(event, Received):
                on_command(src, event.frame.message, now)
