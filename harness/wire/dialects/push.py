"""The push dialogue: each device owns a point-to-point line and pushes its reports; every data frame is acknowledged
(ACK/NAK), retransmitted until it is, and duplicates are suppressed; both ends say HELLO first and send heartbeats
when quiet (docs/protocol.md §4-§5). A dialect that only changes the frames (framing, integrity, message map)
subclasses :class:`PushDialect` and implements :meth:`~harness.wire.dialects.base.Dialect.codec`: both line ends come
from :class:`~harness.wire.link.Link` driven by that codec.

:class:`PushDeviceEnd` can forge (:class:`~harness.wire.dialects.capabilities.Forging`): a forged frame is written
unasked, outside the link's stop and wait, numbered :data:`FORGED_GAP` ahead of the link's own next number. Noise
frames come from the codec (:func:`noise_maker`: a codec that makes them, or a composed codec whose message map makes
noise bodies, as the ASCII protocol's :class:`~harness.wire.dialects.ascii.dialect.AsciiBodyMap` does); a push
dialect whose codec makes none forges reports but no noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from harness.wire.dialects.base import (
    ComposedCodec,
    DeviceEnd,
    Dialect,
    EndSettings,
    FrameCodec,
    LineSpec,
    RoleEvent,
    ServerEnd,
)
from harness.wire.dialects.capabilities import CheckFlip, LostAck, NoiseBodies, NoiseFrames, NoiseKind
from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.line_events import LinkChanged, LinkEvent, Received, Rejected
from harness.wire.link import SEQ_SPACE, Link
from harness.wire.messages import CATALOGUE, DEVICES, LAMP_COMMANDS, Frame, Heartbeat, Hello, Message, Source

#: Every data message a device may send (what a server end accepts).
DEVICE_REPORTS: frozenset[type[Message]] = frozenset(
    cls for (src, _t), cls in CATALOGUE.items() if src in DEVICES and not cls.CONTROL and cls is not Hello
)
#: The link's sequence numbers: 1..LINK_SEQS, then 1 again (and 1 after every reopen).
LINK_SEQS = SEQ_SPACE
#: Forged frames are numbered this far ahead of the link's next number (half its space): the line's own device
#: reaches them only after that many frames on one connection.
FORGED_GAP = 32_768


def check_flipper(codec: FrameCodec) -> Callable[[bytes], bytes] | None:
    """How to flip one bit of the integrity check of ``codec``'s frames, the body unchanged: for a composed codec
    the last byte of the sealed frame (a check appended by its :class:`~harness.wire.dialects.base.Integrity`), framed
    again; for the text envelope of docs/protocol.md §2 (``...*CRC\\r\\n``) the low bit of the CRC, written again in
    hex. None when the codec's frames carry no check this knows how to reach (an integrity of none included)."""
    if isinstance(codec, ComposedCodec):
        if codec.integrity.seal(b"x") == b"x":
            return None
        framer_factory = codec.framer_factory

        def flip_sealed(raw: bytes) -> bytes:
            pieces = framer_factory().feed(raw)
            sealed = pieces[0] if pieces and isinstance(pieces[0], bytes) else None
            if sealed is None:
                return raw
            return bytes(framer_factory().wrap(sealed[:-1] + bytes((sealed[-1] ^ 1,))))

        return flip_sealed
    try:
        probe = codec.encode(Frame(0, Source.SERVER, Heartbeat()))  # a codec of its own: the text envelope?
    except EncodeError:
        return None
    return _flip_text_crc if _flip_text_crc(probe) != probe else None


def _flip_text_crc(raw: bytes) -> bytes:
    """``raw`` (``$body*XXXX\\r\\n``) with the low bit of its CRC flipped; other bytes are returned as they are."""
    if len(raw) < 8 or raw[-7:-6] != b"*" or not raw.endswith(b"\r\n"):
        return raw
    try:
        crc = int(raw[-6:-2], 16)
    except ValueError:
        return raw
    return raw[:-6] + b"%04X\r\n" % (crc ^ 1)


def noise_maker(codec: FrameCodec) -> Callable[[NoiseKind, Source, int], bytes] | None:
    """How ``codec`` makes noise frames: its own (:class:`~harness.wire.dialects.capabilities.NoiseFrames`), or
    a composed codec's message map's bodies (:class:`~harness.wire.dialects.capabilities.NoiseBodies`) wrapped by
    its integrity check and framer; None when it makes none."""
    if isinstance(codec, NoiseFrames):
        return codec.noise_frame
    if isinstance(codec, ComposedCodec) and isinstance(codec.mapping, NoiseBodies):
        framer, integrity, bodies = codec.framer_factory(), codec.integrity, codec.mapping
        return lambda kind, src, seq: framer.wrap(integrity.seal(bodies.noise_body(kind, src, seq)))
    return None


class PushDeviceEnd(DeviceEnd):
    """One device on its own line, over a :class:`Link` with the dialect's codec. Forges
    (:class:`~harness.wire.dialects.capabilities.Forging`): see the module doc."""

    def __init__(self, dialect: Dialect, line: LineSpec, settings: EndSettings) -> None:
        if len(line.roles) != 1:
            raise ValueError(f"line {line.name}: a push line carries exactly one device, got {len(line.roles)}")
        self.roles = line.roles
        self.src = src = line.roles[0]
        self.dialect_name = dialect.name
        self.codec = codec = dialect.codec()
        self._noise = noise_maker(codec)
        self._forged = bytearray()  # forged frames not yet taken, written after the link's own output
        self._forged_count = 0
        self._last_forged = 0
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
        self._forged.clear()  # like the link's own output: bytes for the old connection are gone with it
        self.link.open(now)

    def close(self) -> None:
        self.link.close()

    # --- forging (harness.wire.dialects.capabilities.Forging) ---------------------------------------------------
    def forged_seq(self) -> int:
        """The next forged number: :data:`FORGED_GAP` (plus one per forged frame so far) ahead of the link's next
        number, in the link's space 1..:data:`LINK_SEQS`, never the previous forged number."""
        seq = (self.link.next_seq - 1 + FORGED_GAP + self._forged_count) % LINK_SEQS + 1
        if seq == self._last_forged:
            seq = seq % LINK_SEQS + 1
        self._forged_count += 1
        self._last_forged = seq
        return seq

    def forge(self, frame: Frame, now: float) -> int:
        """Write ``frame`` unasked, numbered :meth:`forged_seq` (see
        :meth:`~harness.wire.dialects.capabilities.Forging.forge`). Raises EncodeError (the codec refuses it) or
        ValueError (a control message)."""
        if frame.message.CONTROL:
            raise ValueError(f"{frame.message.TYPE} is a control message; a forged frame is a data frame")
        seq = self.forged_seq()
        self._forged += self.codec.encode(replace(frame, seq=seq))
        return seq

    def noise_kinds(self) -> frozenset[NoiseKind]:
        """Every kind, when the codec makes noise frames (:func:`noise_maker`); else none."""
        return frozenset(NoiseKind) if self._noise is not None else frozenset()

    def forge_noise(self, kind: NoiseKind, src: Source, now: float) -> int:
        """Write one noise frame of ``kind`` from ``src`` unasked, numbered :meth:`forged_seq` (see
        :meth:`~harness.wire.dialects.capabilities.Forging.forge_noise`). Raises EncodeError."""
        if kind not in self.noise_kinds():
            raise EncodeError(f"{self.dialect_name}: no {kind} noise frames")
        seq = self.forged_seq()
        assert self._noise is not None  # noise_kinds() is empty without it
        self._forged += self._noise(kind, src, seq)
        return seq

    # --- link faults (capabilities CheckFlipping, AckLosing, Renumbering) ---------------------------------------
    def _own(self, src: Source) -> None:
        if src is not self.src:
            raise ValueError(f"this line carries {self.src.value}, not {src.value}")

    def flip_check(self, src: Source) -> None:
        """The device's next data frame goes out once with one bit of its check flipped (:func:`check_flipper`);
        the link retransmits it intact when no ACK comes. Raises ValueError (another device, or no check)."""
        self._own(src)
        flipper = check_flipper(self.codec)
        if flipper is None:
            raise ValueError(f"{self.dialect_name}: its frames carry no integrity check the bench can damage")
        self.link.damage_next(flipper)

    def check_flips(self) -> tuple[CheckFlip, ...]:
        """The frames sent damaged so far; one still unacknowledged counts its transmissions so far."""
        flight = self.link.inflight
        out = []
        for seq, sends, delivered in self.link.damaged:
            if not delivered and flight is not None and flight.damaged and flight.seq == seq:
                sends = flight.tries + 1
            out.append(CheckFlip(self.src, seq, sends, bool(delivered)))
        return tuple(out)

    def lose_ack(self, src: Source, kind: type[Message]) -> None:
        """The first ACK of the device's next ``kind`` report is lost: the link retransmits it after its retry time
        (same seq, same bytes). Raises ValueError (another device, or a fire-and-forget line)."""
        self._own(src)
        self.link.lose_ack(kind)

    def acks_lost(self) -> tuple[LostAck, ...]:
        return tuple(LostAck(self.src, seq, m.TYPE, d[0]) for seq, m, d in self.link.lost_acks)

    def number_last(self, src: Source) -> tuple[int, int]:
        """The link's next data frame is numbered :data:`LINK_SEQS`, the one after it 1. Raises ValueError (another
        device)."""
        self._own(src)
        self.link.number_from(LINK_SEQS)
        return LINK_SEQS, 1

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
        if not self._forged:
            return self.link.take_output()  # hot path: nothing forged
        out = self.link.take_output() + bytes(self._forged)
        self._forged.clear()
        return out

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
