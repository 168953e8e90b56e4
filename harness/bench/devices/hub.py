"""The device ends of the table's serial lines: one :class:`~harness.wire.protocol.link.Link` per device, each on
its own transport, serviced together.

The hub owns no clock and no thread: the caller passes ``now`` (sim or wall seconds) to :meth:`DeviceHub.send` and
:meth:`DeviceHub.service`, and calls ``service`` again by :meth:`DeviceHub.service`'s returned deadline or when a
transport fd is readable. A port that is unplugged keeps its queued frames; when it is back (a pty replugged, a
client connected to a serial server) the device sends HELLO and then the queued frames, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from harness.bench.devices.lamp import LAMP_COMMANDS
from harness.wire.protocol.link import HEARTBEAT_S, Link, LinkEvent, Received
from harness.wire.protocol.messages import DEVICES, Hello, Message, Source
from harness.wire.transports.base import Transport, TransportClosed

FIRMWARE = "xocdia-hil-0.1"
CommandHandler = Callable[[Source, Message, float], None]
EventHandler = Callable[[Source, LinkEvent, float], None]


@dataclass(slots=True)
class DevicePort:
    """One device: its transport, its link, and whether the transport was connected at the last service."""

    source: Source
    transport: Transport
    link: Link
    connected: bool = False
    sent: int = field(default=0)


class DeviceHub:
    """The device ends of up to five serial lines.

    Args:
        transports: one transport per device; devices not given are absent from the table.
        on_command: called with each new data frame a device receives from the server (lamp commands).
        on_event: called with every link event (for logs, traces and tests).
        require_ack: False to fire and forget (a person watching with a terminal acknowledges nothing).
        unit: identity suffix in HELLO (``BOWL-<unit>``).
        heartbeat_s: seconds of quiet before a device sends HB (``math.inf``: never, e.g. for long virtual-time
            campaigns where heartbeats would only cost time).
    """

    def __init__(
        self,
        transports: Mapping[Source, Transport],
        *,
        on_command: CommandHandler | None = None,
        on_event: EventHandler | None = None,
        require_ack: bool = True,
        unit: str = "0001",
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        unknown = [s for s in transports if s not in DEVICES]
        if unknown:
            raise ValueError(f"not a device: {unknown}; devices are {[d.value for d in DEVICES]}")
        self.on_command = on_command
        self.on_event = on_event
        self.ports: dict[Source, DevicePort] = {}
        for src, transport in transports.items():
            accepts = LAMP_COMMANDS if src is Source.LAMP else frozenset()
            hello = Hello(f"{src.value}-{unit}", 1, FIRMWARE)
            link = Link(src, hello, accepts, require_ack=require_ack, heartbeat_s=heartbeat_s)
            self.ports[src] = DevicePort(src, transport, link)

    def start(self, now: float) -> None:
        """Open every connected port: each device sends its HELLO."""
        for port in self.ports.values():
            self._check_connection(port, now)

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        """Queue a device report, tagged with ``round`` and stamped with the event time ``at`` (the device's
        clock, ms) when given (docs/protocol.md §6, "Round tag", "Event time"); both stay fixed on every
        retransmission. Written at once when the line is free. A missing device is an error.

        Raises:
            KeyError: the hub has no such device.
        """
        port = self.ports[src]
        port.link.send(message, now, round, at)
        port.sent += 1
        self._flush(port, now)

    def service(self, now: float) -> float | None:
        """Read, run timers and write on every port; returns the next time service is needed (None: only on
        input)."""
        deadlines: list[float] = []
        for port in self.ports.values():
            tick = port.transport.tick(now)  # first: it may accept a client or release delayed bytes
            self._check_connection(port, now)
            if port.connected:
                self._read(port, now)
                self._dispatch(port, port.link.poll(now), now)
                self._flush(port, now)
            nxt = port.link.next_deadline() if port.connected else None
            deadlines += [t for t in (nxt, tick) if t is not None]
        return min(deadlines) if deadlines else None

    def fds(self) -> list[int]:
        """Descriptors to wait on for input (all ports)."""
        return [fd for port in self.ports.values() for fd in port.transport.fds()]

    def pending(self) -> int:
        """Messages queued or in flight on all ports (0 when everything was acknowledged)."""
        total = 0
        for port in self.ports.values():
            total += len(port.link.queue) + (port.link.inflight is not None)
        return total

    def close(self) -> None:
        for port in self.ports.values():
            port.transport.close()

    # --- internals --------------------------------------------------------------------------------------
    def _check_connection(self, port: DevicePort, now: float) -> None:
        connected = port.transport.connected
        if connected and not port.connected:
            port.connected = True
            port.link.open(now)
            self._flush(port, now)
        elif not connected and port.connected:
            self._lost(port, now)

    def _lost(self, port: DevicePort, now: float) -> None:
        port.connected = False
        port.link.close()
        self._dispatch(port, port.link.take_events(), now)

    def _read(self, port: DevicePort, now: float) -> None:
        for _ in range(64):  # bounded: a flooding peer cannot starve the other ports
            try:
                data = port.transport.read(0.0)
            except TransportClosed:
                self._lost(port, now)
                return
            if not data:
                return
            self._dispatch(port, port.link.receive(data, now), now)

    def _flush(self, port: DevicePort, now: float) -> None:
        out = port.link.take_output()
        if not out or not port.connected:
            return
        try:
            port.transport.write(out)
        except TransportClosed:
            self._lost(port, now)

    def _dispatch(self, port: DevicePort, events: list[LinkEvent], now: float) -> None:
        for event in events:
            if self.on_event is not None:
                self.on_event(port.source, event, now)
            if isinstance(event, Received) and self.on_command is not None:
                self.on_command(port.source, event.frame.message, now)
