"""The push dialogue: each device owns a point-to-point line and pushes its reports; every data frame is acknowledged
(ACK/NAK), retransmitted until it is, and duplicates are suppressed; both ends say HELLO first and send heartbeats
when quiet (docs/protocol.md §4-§5). A dialect that only changes the frames (framing, integrity, message map)
subclasses :class:`PushDialect` and implements :meth:`~harness.wire.dialects.base.Dialect.codec`: both line ends come
from :class:`~harness.wire.link.Link` driven by that codec.
"""

from __future__ import annotations

from harness.wire.dialects.base import (
    DeviceEnd,
    Dialect,
    EndSettings,
    LineSpec,
    RoleEvent,
    ServerEnd,
)
from harness.wire.frame_errors import BadFrame
from harness.wire.line_events import LinkChanged, LinkEvent, Received, Rejected
from harness.wire.link import Link
from harness.wire.messages import CATALOGUE, DEVICES, LAMP_COMMANDS, Frame, Hello, Message, Source

#: Every data message a device may send (what a server end accepts).
DEVICE_REPORTS: frozenset[type[Message]] = frozenset(
    cls for (src, _t), cls in CATALOGUE.items() if src in DEVICES and not cls.CONTROL and cls is not Hello
)


class PushDeviceEnd(DeviceEnd):
    """One device on its own line, over a :class:`Link` with the dialect's codec."""

    def __init__(self, dialect: Dialect, line: LineSpec, settings: EndSettings) -> None:
        if len(line.roles) != 1:
            raise ValueError(f"line {line.name}: a push line carries exactly one device, got {len(line.roles)}")
        self.roles = line.roles
        self.src = src = line.roles[0]
        codec = dialect.codec()
        accepts = LAMP_COMMANDS if src is Source.LAMP else frozenset()
        self.link = Link(
            src,
            Hello(f"{src.value}-{settings.unit}", 1, settings.firmware),
            accepts,
            require_ack=settings.require_ack,
            heartbeat_s=settings.heartbeat_s,
            silence_s=settings.silence_s,
            encoder=codec.encode,
            decoder=codec.decoder,
        )

    def _tag(self, events: list[LinkEvent]) -> list[RoleEvent]:
        if not events:
            return []  # hot path: most calls have none
        src = self.src
        return [(src, e) for e in events]

    def open(self, now: float) -> None:
        self.link.open(now)

    def close(self) -> None:
        self.link.close()

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        if src is not self.src:
            raise ValueError(f"this line carries {self.src.value}, not {src.value}")
        self.link.send(message, now, round, at)

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        src = self.src  # hot path: _tag inlined
        return [(src, e) for e in self.link.receive(data, now)]

    def poll(self, now: float) -> list[RoleEvent]:
        events = self.link.poll(now)
        if not events:
            return []  # hot path: most polls find nothing due
        src = self.src
        return [(src, e) for e in events]

    def next_deadline(self) -> float | None:
        return self.link.next_deadline()

    def take_output(self) -> bytes:
        return self.link.take_output()

    def take_events(self) -> list[RoleEvent]:
        return self._tag(self.link.take_events())

    def pending(self) -> int:
        return len(self.link.queue) + (self.link.inflight is not None)


class PushServerEnd(ServerEnd):
    """A server's end of a push line: HELLO on open, acknowledges each device frame, sends lamp commands."""

    def __init__(self, dialect: Dialect, line: LineSpec, settings: EndSettings, now: float) -> None:
        self.roles = line.roles
        codec = dialect.codec()
        self.link = Link(
            Source.SERVER,
            Hello(f"SRV-{settings.unit}", 1, settings.firmware),
            DEVICE_REPORTS,
            heartbeat_s=settings.heartbeat_s,
            silence_s=settings.silence_s,
            encoder=codec.encode,
            decoder=codec.decoder,
        )
        self.link.open(now)

    def _frames(self, events: list[LinkEvent]) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for event in events:
            if isinstance(event, Received):
                out.append(event.frame)
            elif isinstance(event, Rejected):
                out.append(event.error)
        return out

    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        return self._frames(self.link.receive(data, now))

    def send(self, message: Message, now: float) -> None:
        self.link.send(message, now)

    def tick(self, now: float) -> list[Source]:
        down = [e for e in self.link.poll(now) if isinstance(e, LinkChanged) and not e.up]
        return list(self.roles) if down else []

    def next_deadline(self) -> float | None:
        return self.link.next_deadline()

    def take_output(self) -> bytes:
        return self.link.take_output()


class PushDialect(Dialect):
    """Base of the push dialects: one device per line, both ends from :class:`Link` over :meth:`codec`."""

    dialogue = "push"

    def device_end(self, line: LineSpec, settings: EndSettings) -> DeviceEnd:
        return PushDeviceEnd(self, line, settings)

    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        return PushServerEnd(self, line, settings, now)
