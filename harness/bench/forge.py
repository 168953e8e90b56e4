"""Frames the table did not send: a report forged on another device's line, a replay of an earlier report, and noise
(frames whose check is valid but that are malformed or irrelevant), put on a rig's device lines the way a hostile or
broken device would: as bytes on the device end of the line, encoded by the line's own dialect.

Two ways in, both through the rig's traced device ends (every forged byte is in the serial trace):

- :func:`write_frames`: frames written as bytes on a line, from any device ``src`` (the line carries someone else),
  numbered from :data:`FORGED_SEQ` so that none can be taken for a retransmission of the line's own frames. Only on
  a *push* line whose device end is the protocol link (one device per line, it speaks when it wants): on an addressed
  bus a device answers only its own polls, so nothing can be pushed onto it unasked.
- :func:`queue_report`: a report queued on the device's *own* end, numbered, acknowledged and retransmitted like
  the table's reports (a device re-sending a buffered read): works on every dialect.

:class:`MissedReport` (:func:`miss`) makes a device miss one kind of fact for a round: the table did it, the server
never hears of it (a bowl sensor that did not see the bowl put on).

:func:`at_lift` runs an injection when the table lifts the bowl in the round the rig is playing (the moment a read
counts, so a server that trusts the frame settles the round on it), :func:`on_table` on any other table event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from harness.bench.devices.translate import Report
from harness.bench.rig import Rig
from harness.wire.dialects.push import PushDeviceEnd
from harness.wire.messages import Frame, Message, Source
from harness.wire.text.envelope import crc16
from simulator.events import BowlLifted, Event

#: The first sequence number of forged frames: far above what a line's own device reaches in a scenario.
FORGED_SEQ = 60_000


class CannotForge(Exception):
    """The bench cannot put this frame on this line; the message says why (for a not-applicable verdict)."""


def line_of(rig: Rig, device: str) -> str:
    """The name of the line that carries ``device`` (a device or line name, any case).

    Raises:
        CannotForge: the bench has no such line.
    """
    for line in rig.bench.lines:
        if device.lower() == line.name or device.upper() in (r.value for r in line.roles):
            return line.name
    raise CannotForge(f"bench {rig.bench.name} has no {device} line")


def pushable(rig: Rig, line: str) -> None:
    """Check that frames can be written onto ``line`` unasked.

    Raises:
        CannotForge: the line is an addressed bus or speaks a dialogue of its own (named in the message).
    """
    port = rig.emulated.hub.ports[line]
    if not isinstance(port.end, PushDeviceEnd):
        dialect = next(s.dialect for s in rig.bench.lines if s.name == line)
        why = (
            "whose devices answer only the server's polls: no frame can be pushed onto it unasked"
            if dialect.dialogue == "poll"
            else "whose device numbers its frames in a dialogue of its own: a frame pushed beside them would break it"
        )
        raise CannotForge(f"the {line} line speaks {dialect.name}, {why}")


def current_tag(rig: Rig) -> str | None:
    """The round tag the table's devices put on their reports now (the current round's id), or None when the
    bench's devices do not tag."""
    return rig.current_round() or None if rig.emulated.round_tags else None


def tag_of(rig: Rig, number: int) -> str | None:
    """The round tag the table's devices put on reports of simulator round ``number`` (the server's id of that
    round, even when the rig has opened a later one since), or None when the bench's devices do not tag."""
    return rig.driver.wire_id(number) if rig.emulated.round_tags else None


def device_time(rig: Rig, t: float | None = None) -> int | None:
    """The devices' clock (ms) at bench time ``t`` (default now), or None when the bench's devices send no times."""
    emulated = rig.emulated
    return emulated.device_time(rig.now if t is None else t) if emulated.event_times else None


def write_frames(rig: Rig, line: str, frames: list[Frame | bytes], first_seq: int = FORGED_SEQ) -> int:
    """Write ``frames`` on ``line`` as the device end would, in order: a :class:`Frame` is encoded by the line's
    dialect with sequence number ``first_seq + i`` (its own ``seq`` is ignored); ``bytes`` are written as they are.
    Returns the next free sequence number.

    Raises:
        CannotForge: the line cannot take pushed frames (:func:`pushable`).
        EncodeError: the dialect cannot express a frame.
        TransportClosed: the line is unplugged.
    """
    pushable(rig, line)
    spec = next(s for s in rig.bench.lines if s.name == line)
    codec = spec.dialect.codec()
    seq = first_seq
    data = bytearray()
    for item in frames:
        if isinstance(item, Frame):
            data += codec.encode(Frame(seq, item.src, item.message, round=item.round, at=item.at))
        else:
            data += item
        seq += 1
    rig.note("harness", "forged frames", f"{len(frames)} on the {line} line")
    for frame in frames:
        if isinstance(frame, Frame):
            faces = str(getattr(frame.message, "faces", "") or "")
            rig.alter("forged", frame.src.value, type(frame.message).__name__, frame.round, faces, line)
        else:
            rig.alter("forged", "", "bytes", line=line)
    rig.emulated.hub.ports[line].transport.write(bytes(data))
    rig.emulated.wake()
    return seq


def ascii_frame(seq: int, body: str) -> bytes:
    """A frame of the ASCII protocol (docs/protocol.md §2-§3) around any body, with its valid CRC: for frames the
    codec would refuse to encode (an unknown type, a bad field)."""
    raw = f"1 {seq} {body}".encode("ascii")
    return b"$" + raw + b"*%04X\r\n" % crc16(raw)


def queue_report(rig: Rig, src: Source, message: Message, round_tag: str | None, at: int | None = None) -> None:
    """Queue ``message`` on device ``src``'s own line, with this round tag and event time, as the device would send
    it (numbered, acknowledged, retransmitted).

    Raises:
        CannotForge: the bench's table has no such device.
    """
    hub = rig.emulated.hub
    if src not in hub.roles:
        raise CannotForge(f"bench {rig.bench.name} has no {src.value} device")
    rig.note("harness", "queued report", f"{src.value} {type(message).__name__} round={round_tag} at={at}")
    rig.alter("queued", src.value, type(message).__name__, round_tag, str(getattr(message, "faces", "") or ""))
    hub.send(src, message, rig.now, round_tag, at)
    rig.emulated.wake()


def at_lift(rig: Rig, action: Callable[[], None]) -> None:
    """Run ``action`` once, right after the table's bowl sensor has reported the next lift of the bowl in the
    round the rig opened last (before the reader's read of it is queued)."""
    on_table(rig, BowlLifted, action)


def on_table(rig: Rig, kind: type[Event], action: Callable[[], None]) -> None:
    """Run ``action`` once, right after the table's devices were handed the next ground-truth event of type ``kind``
    (e.g. :class:`~simulator.events.BettingClosed`: the lamp showed the close) in the round the rig opened last."""
    number = rig.driver.rounds.get(rig.current_round())
    done = False

    def watch(event: Event) -> None:
        nonlocal done
        if not done and isinstance(event, kind) and getattr(event, "round", None) == number:
            done = True
            action()

    rig.emulated.watchers.append(watch)


class _Translator(Protocol):
    def __call__(self, event: Event) -> list[Report]: ...


class MissedReport:
    """The table's event translator, except that device ``src`` never reports a ``kind`` message for simulator round
    ``number``: a sensor that missed the fact (the table did it; the server never hears of it)."""

    def __init__(self, inner: _Translator, src: Source, kind: type[Message], number: int) -> None:
        self.inner, self.src, self.kind, self.number = inner, src, kind, number

    def __call__(self, event: Event) -> list[Report]:
        reports = self.inner(event)
        if getattr(event, "round", None) != self.number:
            return reports
        return [(s, m) for s, m in reports if not (s is self.src and isinstance(m, self.kind))]


def miss(rig: Rig, src: Source, kind: type[Message]) -> None:
    """From now on, device ``src`` does not report ``kind`` messages in the round the rig opened last.

    Raises:
        CannotForge: the bench's table has no such device.
    """
    if src not in rig.emulated.hub.roles:
        raise CannotForge(f"bench {rig.bench.name} has no {src.value} device")
    number = rig.driver.rounds[rig.current_round()]
    rig.note("harness", "sensor misses", f"{src.value} {kind.__name__} in this round")
    rig.alter("miss", src.value, kind.__name__)
    table = rig.emulated
    table.translator = MissedReport(table.translator, src, kind, number)  # type: ignore[assignment]  # called alike
