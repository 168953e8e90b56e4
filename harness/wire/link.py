"""The link layer of docs/protocol.md §4-§5, sans I/O: sequence numbers, ACK/NAK, stop-and-wait
retransmission, duplicate suppression, HELLO on open, heartbeats and link-down detection.

A :class:`Link` never touches a port or a clock. The owner feeds it received bytes and the current time
(seconds, any monotonic origin: sim time or wall time), sends messages through it, and writes
:meth:`Link.take_output` to the port. :meth:`Link.next_deadline` says when to call :meth:`Link.poll`.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from harness.wire.frame_errors import BadFrame
from harness.wire.line_events import Delivered, LinkChanged, LinkEvent, Received, Refused, Rejected
from harness.wire.messages import PROTOCOL_VERSION, Ack, Frame, Heartbeat, Hello, Message, Nak, NakReason, Source
from harness.wire.text import FrameDecoder, encode
from harness.wire.text.known_frames import new_frame

RETRY_AFTER_S = 0.2
RETRIES = 5
SLOW_RETRY_S = 1.0
HEARTBEAT_S = 1.0
SILENCE_S = 3.0
_isinf = math.isinf


class _Decoder(Protocol):
    def feed(self, data: bytes) -> list[Frame | BadFrame]: ...


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A data message waiting to be sent, with the optional trailing fields fixed when it was queued: the round
    tag and the event time (docs/protocol.md §6, "Round tag", "Event time"). A reopened port re-sends it with a
    new ``seq`` and these fields unchanged."""

    message: Message
    round: str | None = None
    at: int | None = None


#: The data sequence numbers of a link: 1..SEQ_SPACE, then 1 again (and 1 after every reopen).
SEQ_SPACE = 65_535


@dataclass(slots=True)
class _InFlight:
    seq: int
    item: Outgoing
    raw: bytes
    due: float
    tries: int = 0
    damaged: bool = False  # its first transmission went out damaged (Link.damage_next)
    lose_ack: bool = False  # the first ACK of it is lost (Link.lose_ack)

    @property
    def message(self) -> Message:
        return self.item.message


class Link:
    """One end of one port.

    Args:
        src: this end's ``src`` name.
        hello: the HELLO this end sends on :meth:`open`.
        accepts: the data messages this end acts on; any other data frame is NAKed ``type`` (HELLO is always
            accepted).
        require_ack: False for a fire-and-forget end (a terminal watching the port answers nothing):
            frames are sent once, in order, and never retransmitted.
        encoder, decoder: the frame codec (default: the ASCII protocol's :func:`encode` and :class:`FrameDecoder`);
            a push dialect passes its own (:mod:`harness.wire.dialects.push`).
    """

    def __init__(
        self,
        src: Source,
        hello: Hello,
        accepts: frozenset[type[Message]] = frozenset(),
        *,
        require_ack: bool = True,
        retry_after_s: float = RETRY_AFTER_S,
        retries: int = RETRIES,
        slow_retry_s: float = SLOW_RETRY_S,
        heartbeat_s: float = HEARTBEAT_S,
        silence_s: float = SILENCE_S,
        encoder: Callable[[Frame], bytes] = encode,
        decoder: Callable[[], _Decoder] = FrameDecoder,
    ) -> None:
        self.src = src
        self._encode = encoder
        self._new_decoder = decoder
        self.hello = hello
        self.accepts = accepts | {Hello}
        self.require_ack = require_ack
        self.retry_after_s = retry_after_s
        self.retries = retries
        self.slow_retry_s = slow_retry_s
        self.heartbeat_s = heartbeat_s
        self.silence_s = silence_s
        self.decoder: _Decoder = decoder()
        self.queue: deque[Outgoing] = deque()
        self.inflight: _InFlight | None = None
        self.up = False
        self.opened = False
        self._next_seq = 1
        self._last_accepted: int | None = None
        self._last_was_hello = False
        self._last_rx = 0.0
        self._last_tx = 0.0
        self._out = bytearray()
        self._events: list[LinkEvent] = []
        self._damage: Callable[[bytes], bytes] | None = None
        self._lose_ack_of: type[Message] | None = None
        #: Data frames sent damaged once (:meth:`damage_next`): [seq, transmissions so far, acknowledged].
        self.damaged: list[list[int]] = []
        #: Data frames whose first ACK was lost (:meth:`lose_ack`): (seq, message, [acknowledged since]).
        self.lost_acks: list[tuple[int, Message, list[bool]]] = []

    # --- faults a bench asks of its own device end ----------------------------------------------------------------
    def damage_next(self, damage: Callable[[bytes], bytes]) -> None:
        """The next data frame queued or sent from now on goes out first as ``damage(raw)``; its retransmissions are
        the frame's own bytes (it keeps its seq). Recorded in :attr:`damaged`."""
        self._damage = damage

    def lose_ack(self, kind: type[Message]) -> None:
        """The first ACK of the next ``kind`` data frame sent from now on is lost: this end ignores it and
        retransmits the frame (same seq, same bytes) when its timer runs out. Recorded in :attr:`lost_acks`.

        Raises:
            ValueError: a fire-and-forget link (``require_ack`` False) expects no ACK to lose.
        """
        if not self.require_ack:
            raise ValueError(f"link {self.src.value}: fire and forget, no ACK to lose")
        self._lose_ack_of = kind

    def number_from(self, seq: int) -> None:
        """The next data frame gets ``seq`` (then the numbering goes on from it, 1 after :data:`SEQ_SPACE`).

        Raises:
            ValueError: ``seq`` is not 1..:data:`SEQ_SPACE`.
        """
        if not 1 <= seq <= SEQ_SPACE:
            raise ValueError(f"seq: must be 1..{SEQ_SPACE}, got {seq}")
        self._next_seq = seq

    # --- sending ----------------------------------------------------------------------------------
    def open(self, now: float) -> None:
        """(Re)open the port: HELLO first, seq 1; an unacknowledged frame is kept and re-sent after it."""
        if self.inflight is not None and not isinstance(self.inflight.message, Hello):
            self.queue.appendleft(self.inflight.item)
        while self.queue and isinstance(self.queue[0].message, Hello):
            self.queue.popleft()
        self.inflight = None
        self.queue.appendleft(Outgoing(self.hello))
        self._next_seq = 1
        self.decoder = self._new_decoder()
        self._out.clear()  # bytes for the old connection are gone with it
        self.opened = True
        self._last_rx = now
        self._pump(now)

    def send(self, message: Message, now: float, round: str | None = None, at: int | None = None) -> None:
        """Queue a data message, tagged with ``round`` and stamped with the event time ``at`` (device clock,
        ms) when given (docs/protocol.md §6, "Round tag", "Event time"). Both are fixed now: every
        retransmission, and the re-send after a reopened port, carries them byte for byte. The message goes
        out at once when nothing is in flight. Never drops it.

        Raises:
            ValueError: a control message.
            EncodeError: (when it goes out) a message, tag or time the protocol refuses.
        """
        if message.CONTROL:
            raise ValueError(f"{message.TYPE} is a control message; the link sends those itself")
        self.queue.append(Outgoing(message, round, at))
        self._pump(now)

    @property
    def next_seq(self) -> int:
        """The sequence number the next data frame gets (1..65535; 1 again after :meth:`open`)."""
        return self._next_seq

    def _seq(self) -> int:
        seq = self._next_seq
        self._next_seq = 1 if seq >= SEQ_SPACE else seq + 1
        return seq

    def _emit(self, raw: bytes, now: float) -> None:
        self._out += raw
        self._last_tx = now

    def _control(self, message: Message, now: float) -> None:
        self._emit(self._encode(new_frame(0, self.src, message, None, None)), now)

    def _pump(self, now: float) -> None:
        if not self.opened:
            return
        while self.queue and self.inflight is None:
            item = self.queue.popleft()
            seq = self._seq()
            raw = self._encode(new_frame(seq, self.src, item.message, item.round, item.at))
            damage, lose = self._damage, self._lose_ack_of
            if damage is None and lose is None:  # hot path: no fault asked for
                self._emit(raw, now)
                if self.require_ack:
                    self.inflight = _InFlight(seq, item, raw, now + self.retry_after_s)
                continue
            damaged = damage is not None and not isinstance(item.message, Hello)
            losing = lose is not None and isinstance(item.message, lose)
            if damaged:
                assert damage is not None
                self._damage = None
                self.damaged.append([seq, 1, 0])
            if losing:
                self._lose_ack_of = None
            self._emit(damage(raw) if damaged and damage is not None else raw, now)
            if self.require_ack:
                self.inflight = _InFlight(seq, item, raw, now + self.retry_after_s, damaged=damaged, lose_ack=losing)

    def take_output(self) -> bytes:
        """Bytes to write to the port, in order; each call returns only new bytes."""
        if not self._out:
            return b""  # hot path: most calls find nothing to write
        out = bytes(self._out)
        self._out.clear()
        return out

    # --- receiving --------------------------------------------------------------------------------
    def receive(self, data: bytes, now: float) -> list[LinkEvent]:
        """Consume bytes read from the port; returns what happened, in order (and queues ACK/NAK output)."""
        for item in self.decoder.feed(data):
            if isinstance(item, BadFrame):
                self._events.append(Rejected(item))
                nak = item.nak
                if nak is not None and item.seq is not None:
                    self._control(Nak(item.seq, nak), now)
                continue
            self._last_rx = now
            if not self.up:
                self.up = True
                self._events.append(LinkChanged(True, f"frame from {item.src}"))
            self._on_frame(item, now)
        return self.take_events()

    def _on_frame(self, frame: Frame, now: float) -> None:
        msg = frame.message
        if isinstance(msg, Ack | Nak):
            flight = self.inflight
            if flight is not None and msg.of == flight.seq and flight.lose_ack:
                flight.lose_ack = False  # lost on the way: the timer retransmits the frame
                self.lost_acks.append((flight.seq, flight.message, [False]))
                return
            if flight is not None and msg.of == flight.seq:
                self._faulted_delivered(flight)
                self.inflight = None
                if isinstance(msg, Ack):
                    self._events.append(Delivered(flight.seq, flight.message))
                else:
                    self._events.append(Refused(flight.seq, flight.message, msg.reason))
                self._pump(now)
            return
        if isinstance(msg, Heartbeat):
            return
        if type(msg) not in self.accepts:
            self._control(Nak(frame.seq, NakReason.TYPE), now)
            return
        if isinstance(msg, Hello):
            if msg.proto != PROTOCOL_VERSION:
                self._control(Nak(frame.seq, NakReason.VERSION), now)
                return
            if not (self._last_was_hello and frame.seq == self._last_accepted):
                self._last_accepted = None  # a (re)opened peer: forget its old numbering
        self._control(Ack(frame.seq), now)
        if frame.seq == self._last_accepted:
            return  # a retransmission we already acted on
        self._last_accepted = frame.seq
        self._last_was_hello = isinstance(msg, Hello)
        self._events.append(Received(frame))

    def _faulted_delivered(self, flight: _InFlight) -> None:
        """Record the acknowledgement of a frame sent damaged or whose first ACK was lost."""
        if flight.damaged:
            for entry in self.damaged:
                if entry[0] == flight.seq and not entry[2]:
                    entry[1], entry[2] = flight.tries + 1, 1
        for seq, _message, delivered in self.lost_acks:
            if seq == flight.seq:
                delivered[0] = True

    def take_events(self) -> list[LinkEvent]:
        events = self._events
        if events:  # hot path: most calls find none, and the empty list may stay
            self._events = []
            return events
        return []

    # --- timers -----------------------------------------------------------------------------------
    def poll(self, now: float) -> list[LinkEvent]:
        """Run the timers due at ``now``: retransmission, heartbeat, silence. Returns what happened."""
        flight = self.inflight
        if flight is not None and now >= flight.due:
            flight.tries += 1
            slow = flight.tries > self.retries
            if flight.tries == self.retries + 1 and self.up:
                self.up = False
                self._events.append(LinkChanged(False, f"no ACK for seq {flight.seq} after {self.retries} retries"))
            flight.due = now + (self.slow_retry_s if slow else self.retry_after_s)
            self._emit(flight.raw, now)
        # compare with the same sums next_deadline() returns, so a poll at that deadline always acts
        if self.up and now >= self._last_rx + self.silence_s:
            self.up = False
            self._events.append(LinkChanged(False, f"nothing received for {self.silence_s:g} s"))
        if self.opened and now >= self._last_tx + self.heartbeat_s:
            self._control(Heartbeat(), now)
        return self.take_events()

    def next_deadline(self) -> float | None:
        """The earliest time :meth:`poll` has work to do, or None when closed."""
        if not self.opened:
            return None
        # hot path: the least of the three times by comparisons, not min() of a list
        soonest = self._last_tx + self.heartbeat_s
        flight = self.inflight
        if flight is not None and flight.due < soonest:
            soonest = flight.due
        if self.up:
            quiet = self._last_rx + self.silence_s
            if quiet < soonest:
                soonest = quiet
        return None if _isinf(soonest) else soonest

    def close(self) -> None:
        """Stop sending (port gone); queued and in-flight messages are kept for the next :meth:`open`."""
        self.opened = False
        if self.up:
            self.up = False
            self._events.append(LinkChanged(False, "port closed"))
