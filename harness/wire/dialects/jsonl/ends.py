"""``xocdia-jsonl``'s dialogue (docs/dialects/xocdia-jsonl.md §4-§5): the reader's end and a server's end of its line.

Guarantees: the reader numbers its data objects once per run (power-up to power-down), never per connection, sends a
hello on every connection and keeps one data object unacknowledged at a time, retransmitting on the timers below; the
server's end acknowledges every data object, delivers each read once per run (a copy re-sent after a reconnect is
acknowledged and dropped), sends heartbeats when quiet and reports silence.

The reader's end can forge (:class:`~harness.wire.dialects.capabilities.Forging`): a forged object is written unasked,
outside the stop and wait, numbered :data:`FORGED_GAP` ahead of the reader's next ``seq`` (a server remembers only the
last :data:`REMEMBER` numbers of a run, and the reader does not number that many reads in a scenario). It can leave
its connection right after a read went out and connect again when it next has one
(:class:`~harness.wire.dialects.capabilities.Redialing`): a hello, the unacknowledged read under its own ``seq``, then
the new read.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass, replace

from harness.wire.dialects.base import DeviceEnd, EndSettings, FrameCodec, RoleEvent, ServerEnd, StreamDecoder
from harness.wire.dialects.capabilities import NoiseKind, Redial
from harness.wire.dialects.jsonl.codec import MAX_SEQ, VERSION
from harness.wire.frame_errors import NAK_FOR, BadFrame, EncodeError, ErrorReason
from harness.wire.line_events import Delivered, LinkChanged, LinkEvent, Refused, Rejected
from harness.wire.messages import (
    Ack,
    Frame,
    Heartbeat,
    Hello,
    Message,
    Nak,
    NakReason,
    ReaderRearranged,
    Result,
    Source,
)

#: Stop and wait (docs/protocol.md §4): the first retries every RETRY_S, after FAST_RETRIES of them every SLOW_RETRY_S.
RETRY_S = 0.2
FAST_RETRIES = 5
SLOW_RETRY_S = 1.0
#: Data sequence numbers a server remembers (per line, per run) to suppress duplicates.
REMEMBER = 64
#: Forged objects are numbered this far ahead of the reader's next seq (then one more each), wrapping in 1..MAX_SEQ.
FORGED_GAP = 1_000_000


def noise_object(kind: NoiseKind, seq: int) -> bytes:
    """A line (``\\n`` included) of well-formed JSON from the reader numbered ``seq`` that xocdia-jsonl's schema
    refuses: an unknown ``type`` (:attr:`NoiseKind.UNKNOWN_TYPE`), a ``result`` whose faces are not R/W/S/U
    (:attr:`NoiseKind.BAD_FIELD`), a ``result`` without its ``confidence`` (:attr:`NoiseKind.MISSING_FIELD`)."""
    obj: dict[str, object] = {"v": VERSION, "src": "READER", "type": "result", "seq": seq, "faces": "RRRR"}
    if kind is NoiseKind.UNKNOWN_TYPE:
        obj = {"v": VERSION, "src": "READER", "type": "junk", "seq": seq}
    elif kind is NoiseKind.BAD_FIELD:
        obj.update(faces="RRRQ", overlap=False, confidence=[1.0, 1.0, 1.0, 1.0])
    else:
        obj.update(overlap=False)
    return json.dumps(obj, separators=(",", ":")).encode("utf-8") + b"\n"


@dataclass(slots=True)
class _Item:
    message: Message
    round: str | None
    at: int | None
    seq: int | None = None  # fixed when first sent, kept across reconnects


@dataclass(slots=True)
class _Redial:
    seq: int
    message: str
    resent: bool = False
    delivered: bool = False


@dataclass(slots=True)
class _Flight:
    item: _Item
    raw: bytes
    due: float
    tries: int = 0


class ReaderEnd(DeviceEnd):
    """The reader's end of its line: hello on every connection, then its reads, one unacknowledged at a time.

    Sequence numbers belong to the reader's run, not to a connection: a read that was not acknowledged when the
    connection dropped is re-sent after the next hello with its own ``seq``, so the server can tell it is a copy."""

    def __init__(self, codec: FrameCodec, settings: EndSettings) -> None:
        self.roles = (Source.READER,)
        self.codec = codec
        self.hello = Hello(f"READER-{settings.unit}", 1, settings.firmware)
        self.require_ack = settings.require_ack
        self.heartbeat_s = settings.heartbeat_s
        self.silence_s = settings.silence_s
        self.decoder: StreamDecoder = codec.decoder()
        self.queue: deque[_Item] = deque()
        self.inflight: _Flight | None = None
        self.opened = False
        self.up = False
        self._next_seq = 1
        self._last_rx = 0.0
        self._last_tx = 0.0
        self._out = bytearray()
        self._events: list[LinkEvent] = []
        self._forged_count = 0
        self._redial_kind: type[Message] | None = None  # armed: leave the connection after the next such read
        self._away = False  # left the connection; connect again at the next read
        self._redials: list[_Redial] = []

    def _tag(self, events: list[LinkEvent]) -> list[RoleEvent]:
        return [(Source.READER, e) for e in events]

    # --- forging (harness.wire.dialects.capabilities.Forging) ---------------------------------------------------
    def forged_seq(self) -> int:
        """The next forged seq: :data:`FORGED_GAP` plus one per forged object so far ahead of the reader's next seq,
        wrapping in 1..MAX_SEQ."""
        self._forged_count += 1
        return (self._next_seq - 1 + FORGED_GAP + self._forged_count - 1) % MAX_SEQ + 1

    def forge(self, frame: Frame, now: float) -> int:
        """Write ``frame`` unasked, numbered :meth:`forged_seq`; the server's ACK of it is ignored. Raises EncodeError
        (xocdia-jsonl carries the reader's hello, result and rearranged only) or ValueError (a control message)."""
        if frame.message.CONTROL:
            raise ValueError(f"{frame.message.TYPE} is a control message; a forged frame is a data frame")
        seq = self.forged_seq()
        raw = self.codec.encode(replace(frame, seq=seq))
        if self.opened:
            self._emit(raw, now)
        return seq

    # --- renumbering (harness.wire.dialects.capabilities.Renumbering) -------------------------------------------
    def number_last(self, src: Source) -> tuple[int, int]:
        """The reader's next data object is numbered :data:`MAX_SEQ`, the last of its run; the one after it opens a new
        run, introduced by a hello numbered 1 (docs/dialects/xocdia-jsonl.md). Raises ValueError for another device."""
        if src is not Source.READER:
            raise ValueError(f"this line carries READER, not {src.value}")
        self._next_seq = MAX_SEQ
        return MAX_SEQ, 1

    # --- redialing (harness.wire.dialects.capabilities.Redialing) ---------------------------------------------
    def redial_after(self, src: Source, kind: type[Message]) -> None:
        """The reader's next ``kind`` object is the last its connection carries: then the end writes and takes nothing
        (the server's ``ack`` of it is lost) until the reader has its next object to send, and then opens the
        connection again (:meth:`open`: a hello, the unacknowledged object under its own ``seq``, the new one).
        Raises ValueError for another device or when the line acknowledges nothing (``require_ack`` false)."""
        if src is not Source.READER:
            raise ValueError(f"this line carries READER, not {src.value}")
        if not self.require_ack:
            raise ValueError("the reader's line acknowledges nothing (require_ack: false): nothing is sent again")
        self._redial_kind = kind

    def redials(self) -> tuple[Redial, ...]:
        """Every connection left so far (:meth:`redial_after`), in order."""
        return tuple(Redial(Source.READER, r.seq, r.message, r.resent, r.delivered) for r in self._redials)

    def noise_kinds(self) -> frozenset[NoiseKind]:
        """Every kind (:func:`noise_object`)."""
        return frozenset(NoiseKind)

    def forge_noise(self, kind: NoiseKind, src: Source, now: float) -> int:
        """Write a noise object (:func:`noise_object`) unasked, numbered :meth:`forged_seq`. Raises EncodeError when
        ``src`` is not the reader (the only device the dialect carries)."""
        if src is not Source.READER:
            raise EncodeError(f"src: xocdia-jsonl carries only READER, not {src.value}")
        seq = self.forged_seq()
        if self.opened:
            self._emit(noise_object(kind, seq), now)
        return seq

    def open(self, now: float) -> None:
        self._away = False
        flight, self.inflight = self.inflight, None
        if flight is not None:
            self.queue.appendleft(flight.item)
        if not (self.queue and isinstance(self.queue[0].message, Hello)):
            self.queue.appendleft(_Item(self.hello, None, None))  # an unacknowledged hello keeps its seq
        self.decoder = self.codec.decoder()
        self._out.clear()
        self._out += b"\n"  # ends whatever the last connection left half-written at the other end
        self.opened = True
        self._last_rx = now
        self._pump(now)

    def close(self) -> None:
        self.opened = False
        if self.up:
            self.up = False
            self._events.append(LinkChanged(False, "connection closed"))

    def send(self, src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        if src is not Source.READER:
            raise ValueError(f"this line carries READER, not {src.value}")
        if not isinstance(message, Result | ReaderRearranged):
            raise ValueError(f"the reader sends RESULT and REARRANGED, not {message.TYPE}")
        self.codec.encode(Frame(1, Source.READER, message, round=round, at=at))  # refuse it now, not when it goes out
        self.queue.append(_Item(message, round, at))
        if self._away:  # the reader connects again to send it (Redialing)
            self.open(now)
            return
        self._pump(now)

    def _emit(self, raw: bytes, now: float) -> None:
        self._out += raw
        self._last_tx = now

    def _pump(self, now: float) -> None:
        if not self.opened:
            return
        while self.queue and self.inflight is None:
            item = self.queue.popleft()
            if item.seq is None:
                if self._next_seq > MAX_SEQ:  # the run's numbers are used up: a new run, introduced by its hello
                    self._next_seq = 1
                    self.queue.appendleft(item)
                    item = _Item(self.hello, None, None)
                item.seq = self._next_seq
                self._next_seq += 1
            raw = self.codec.encode(Frame(item.seq, Source.READER, item.message, round=item.round, at=item.at))
            self._emit(raw, now)
            if self.require_ack:
                self.inflight = _Flight(item, raw, now + RETRY_S)
            for redial in self._redials:
                if redial.seq == item.seq and not redial.delivered:
                    redial.resent = True
            if self._redial_kind is not None and isinstance(item.message, self._redial_kind):
                self._redial_kind = None
                self._redials.append(_Redial(item.seq, item.message.TYPE))
                self._away = True
                self.close()  # the object just written still goes out; nothing more on this connection
                return

    def receive(self, data: bytes, now: float) -> list[RoleEvent]:
        if self._away:  # the connection was left (Redialing): what still arrives on it is lost
            return self.take_events()
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self._events.append(Rejected(item))
                continue
            if item.src is not Source.SERVER:
                self._events.append(Rejected(BadFrame(ErrorReason.TYPE, b"", f"the reader does not take {item.src}")))
                continue
            self._last_rx = now
            if not self.up:
                self.up = True
                self._events.append(LinkChanged(True, "object from SRV"))
            msg = item.message
            flight = self.inflight
            if isinstance(msg, Ack | Nak) and flight is not None and msg.of == flight.item.seq:
                self.inflight = None
                if isinstance(msg, Ack):
                    for redial in self._redials:
                        redial.delivered = redial.delivered or (redial.seq == msg.of and redial.resent)
                    self._events.append(Delivered(msg.of, flight.item.message))
                else:
                    self._events.append(Refused(msg.of, flight.item.message, msg.reason))
                self._pump(now)
        return self.take_events()

    def poll(self, now: float) -> list[RoleEvent]:
        flight = self.inflight
        if self.opened and flight is not None and now >= flight.due:
            flight.tries += 1
            if flight.tries == FAST_RETRIES + 1 and self.up:
                self.up = False
                self._events.append(
                    LinkChanged(False, f"no ack for seq {flight.item.seq} after {FAST_RETRIES} retries")
                )
            flight.due = now + (SLOW_RETRY_S if flight.tries > FAST_RETRIES else RETRY_S)
            self._emit(flight.raw, now)
        if self.up and now >= self._last_rx + self.silence_s:
            self.up = False
            self._events.append(LinkChanged(False, f"nothing received for {self.silence_s:g} s"))
        if self.opened and now >= self._last_tx + self.heartbeat_s:
            self._emit(self.codec.encode(Frame(0, Source.READER, Heartbeat())), now)
        return self.take_events()

    def next_deadline(self) -> float | None:
        if not self.opened:
            return None
        times = [self._last_tx + self.heartbeat_s]
        if self.inflight is not None:
            times.append(self.inflight.due)
        if self.up:
            times.append(self._last_rx + self.silence_s)
        soonest = min(times)
        return None if math.isinf(soonest) else soonest

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[RoleEvent]:
        events, self._events = self._events, []
        return self._tag(events)

    def pending(self) -> int:
        return len(self.queue) + (self.inflight is not None)


# --- a server's end -----------------------------------------------------------------------------------------------


class ReaderServerEnd(ServerEnd):
    """A server's end of the reader's line: acknowledges every data object, suppresses copies by ``seq`` within the
    reader's run, sends ``hb`` when quiet and reports silence. Delivers a ``hello`` only when it starts a new run
    (``seq`` 1): a hello that continues a run (a reconnect) changes nothing the server knows."""

    def __init__(self, codec: FrameCodec, settings: EndSettings, now: float) -> None:
        self.roles = (Source.READER,)
        self.codec = codec
        self.decoder = codec.decoder()
        self.heartbeat_s = settings.heartbeat_s
        self.silence_s = settings.silence_s
        self.up = True  # expected up from the start: a reader silent since the line opened is reported
        self._seen: deque[int] = deque(maxlen=REMEMBER)
        self._last_hello: int | None = None  # seq of the hello accepted last, while nothing was accepted after it
        self._last_rx = now
        self._last_tx = now
        self._out = bytearray()

    def _control(self, message: Message, now: float) -> None:
        self._out += self.codec.encode(Frame(0, Source.SERVER, message))
        self._last_tx = now

    def receive(self, data: bytes, now: float) -> list[Frame | BadFrame]:
        out: list[Frame | BadFrame] = []
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                out.append(item)
                nak = NAK_FOR.get(item.reason) if item.seq else None
                if nak is not None and item.src is Source.READER and item.seq is not None:
                    self._control(Nak(item.seq, nak), now)
                continue
            if item.src is not Source.READER:
                out.append(BadFrame(ErrorReason.TYPE, b"", f"{item.src} {item.message.TYPE} on the reader's line"))
                continue
            self._last_rx = now
            self.up = True
            msg = item.message
            if isinstance(msg, Heartbeat):
                continue
            seq = item.seq
            if isinstance(msg, Hello):
                if msg.proto != VERSION:
                    self._control(Nak(seq, NakReason.VERSION), now)
                    continue
                self._control(Ack(seq), now)
                if seq == self._last_hello:
                    continue  # the hello just accepted, again
                self._last_hello = seq
                if seq == 1:  # a new run: its numbers start again
                    self._seen.clear()
                    self._seen.append(seq)
                    out.append(item)
                elif seq not in self._seen:
                    self._seen.append(seq)
                continue
            self._control(Ack(seq), now)
            if seq in self._seen:
                continue  # a copy of a read already delivered
            self._seen.append(seq)
            self._last_hello = None
            out.append(item)
        return out

    def send(self, message: Message, now: float) -> None:
        raise ValueError(f"the reader takes no commands ({message.TYPE}): xocdia-jsonl carries only the reader")

    def tick(self, now: float) -> list[Source]:
        silent: list[Source] = []
        if self.up and now >= self._last_rx + self.silence_s:
            self.up = False
            silent.append(Source.READER)
        if now >= self._last_tx + self.heartbeat_s:
            self._control(Heartbeat(), now)
        return silent

    def next_deadline(self) -> float | None:
        due = self._last_tx + self.heartbeat_s
        if self.up:
            due = min(due, self._last_rx + self.silence_s)
        return None if math.isinf(due) else due

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out
