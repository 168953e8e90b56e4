"""Frames the table did not send: a report forged on another device's line, a replay of an earlier report, and noise
(frames whose check is valid but that are malformed or irrelevant), put on a rig's device lines the way a hostile or
broken device would: as bytes on the device end of the line, encoded by the line's own dialect.

Two ways in, both through the rig's traced device ends (every forged byte is in the serial trace):

- :func:`write_frames`: frames put on a line as if any device ``src`` sent them (the line may carry someone else),
  and noise (:class:`Noise`: frames whose check holds but that the dialect refuses), by the line's device end when
  it has the capability :class:`~harness.wire.dialects.capabilities.Forging`: the end encodes them in its dialect,
  numbers them so that none can be taken for a retransmission of the line's own frames, and puts them where its
  dialogue lets a device speak (a push end writes them unasked; a polled end answers the master's next poll with
  them). A line whose end lacks the capability cannot be forged on (:func:`forgeable`).
- :func:`write_in_reply`: on a polled bus, a frame put in another device's reply, under that device's address
  (the capability :class:`~harness.wire.dialects.capabilities.AddressForging`).
- :func:`queue_report`: a report queued on the device's *own* end, numbered, acknowledged and retransmitted like
  the table's reports (a device re-sending a buffered read): works on every dialect.

Faults of the link itself, made by the device's own end in its dialect: :func:`flip_check` (one bit of the next
report's integrity check), :func:`lose_ack` (the acknowledgement of its next report of a kind), :func:`number_last`
(its numbering moved on to the wrap), and :func:`silence` (its line quiet for good, no error).

:class:`MissedReport` (:func:`miss`) makes a device miss one kind of fact for a round: the table did it, the server
never hears of it (a bowl sensor that did not see the bowl put on).

:func:`at_lift` runs an injection when the table lifts the bowl in the round the rig is playing (the moment a read
counts, so a server that trusts the frame settles the round on it), :func:`on_table` on any other table event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from harness.bench.devices.translate import Report
from harness.bench.rig import Rig
from harness.wire.dialects.base import DelegatingDeviceEnd, DeviceEnd, LineSpec
from harness.wire.dialects.capabilities import (
    AckLosing,
    AddressForging,
    CheckFlip,
    CheckFlipping,
    ForgeEncoding,
    Forging,
    LostAck,
    Muting,
    NoiseKind,
    Renumbering,
)
from harness.wire.frame_errors import EncodeError
from harness.wire.messages import Frame, Message, Source
from simulator.events import BowlLifted, Event


class CannotForge(Exception):
    """The bench cannot put this frame on this line; the message says why (for a not-applicable verdict)."""


@dataclass(frozen=True, slots=True)
class Noise:
    """One noise frame to put on a line: its kind, and the device it claims to come from."""

    kind: NoiseKind
    src: Source


def line_of(rig: Rig, device: str) -> str:
    """The name of the line that carries ``device`` (a device or line name, any case).

    Raises:
        CannotForge: the bench has no such line.
    """
    for line in rig.bench.lines:
        if device.lower() == line.name or device.upper() in (r.value for r in line.roles):
            return line.name
    raise CannotForge(f"bench {rig.bench.name} has no {device} line")


def spec_of(rig: Rig, line: str) -> LineSpec:
    """The bench's spec of line ``line`` (a name from :func:`line_of`)."""
    return next(s for s in rig.bench.lines if s.name == line)


def forgeable(rig: Rig, line: str) -> Forging:
    """The device end of ``line``, when it can put frames on the line that its devices did not send.

    Raises:
        CannotForge: the end lacks the :class:`~harness.wire.dialects.capabilities.Forging` capability (the message
            names the line's dialect and the capability).
    """
    end = rig.emulated.hub.ports[line].end
    if not isinstance(end, Forging):
        raise CannotForge(
            f"the {line} line speaks {spec_of(rig, line).dialect.name}, whose device end ({type(end).__name__}) "
            "lacks the capability Forging (harness.wire.dialects.capabilities): no frame it did not send can be "
            "put on it"
        )
    return end


def inexpressible(rig: Rig, line: str, frame: Frame) -> str:
    """Why ``frame`` (its sender, message, tag and time, whatever its ``seq``) cannot be forged on ``line``, naming
    the line's dialect and what it cannot carry; "" when it can. Asked per line: the line's device end when it tells
    what it would forge (:class:`~harness.wire.dialects.capabilities.ForgeEncoding`: a dialect whose lines speak
    different formats, or that forges a frame in its sender's own format), else the codec of the dialect that makes
    the line (a companion dialect's, on the companion's lines)."""
    spec = spec_of(rig, line)
    end = rig.emulated.hub.ports[line].end
    numbered = replace(frame, seq=1)
    try:
        if isinstance(end, ForgeEncoding):
            end.forged_bytes(numbered)
        else:
            spec.dialect.codec().encode(numbered)
    except EncodeError as exc:
        what = f"a {frame.src.value} {type(frame.message).__name__}"
        return f"the {line} line speaks {spec.dialect.name}, which cannot carry {what} on it: {exc}"
    return ""


def expressible(rig: Rig, line: str, frame: Frame) -> bool:
    """Whether ``frame`` can be forged on ``line`` (:func:`inexpressible` says why not)."""
    return not inexpressible(rig, line, frame)


def noise_kinds(rig: Rig, line: str) -> frozenset[NoiseKind]:
    """The kinds of noise the device end of ``line`` can make (none when it cannot forge)."""
    end = rig.emulated.hub.ports[line].end
    return end.noise_kinds() if isinstance(end, Forging) else frozenset()


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


def write_frames(rig: Rig, line: str, items: Sequence[Frame | Noise]) -> list[int]:
    """Put ``items`` on ``line``, in order, through its device end (:func:`forgeable`): a :class:`Frame` as if device
    ``frame.src`` sent it, with its round tag and event time (its own ``seq`` is ignored), a :class:`Noise` as one
    noise frame of its kind. The end numbers each (a forged number: never taken for a retransmission or a duplicate of
    the line's own frames) and puts it where its dialogue lets a device speak (at once on a push line; on a polled
    bus, as the answer to the next poll: see :class:`~harness.wire.dialects.capabilities.Forging`). A line that is
    unplugged loses what is written on it now. Returns the sequence numbers the items went out with.

    Raises:
        CannotForge: the line's device end cannot forge (:func:`forgeable`).
        EncodeError: the dialect cannot express a frame, or has no noise of a kind (:func:`noise_kinds`).
    """
    end = forgeable(rig, line)
    now = rig.now
    seqs = [
        end.forge(item, now) if isinstance(item, Frame) else end.forge_noise(item.kind, item.src, now) for item in items
    ]
    rig.note("harness", "forged frames", f"{len(items)} on the {line} line")
    for item in items:
        if isinstance(item, Frame):
            faces = str(getattr(item.message, "faces", "") or "")
            rig.alter("forged", item.src.value, type(item.message).__name__, item.round, faces, line)
        else:
            rig.alter("forged", item.src.value, f"noise:{item.kind}", line=line)
    port = rig.emulated.hub.ports[line]
    port.dirty = True  # the end has output: the next service writes it
    rig.emulated.wake()
    return seqs


def address_forgeable(rig: Rig, line: str) -> AddressForging:
    """The device end of ``line``, when it can put a frame in another device's reply (a polled bus).

    Raises:
        CannotForge: the end lacks :class:`~harness.wire.dialects.capabilities.AddressForging` (the message names
            the line's dialect and the capability).
    """
    end = rig.emulated.hub.ports[line].end
    if not isinstance(end, AddressForging):
        raise CannotForge(
            f"the {line} line speaks {spec_of(rig, line).dialect.name}, whose device end ({type(end).__name__}) "
            "lacks the capability AddressForging (harness.wire.dialects.capabilities): no frame can be put in "
            "another device's reply"
        )
    return end


def write_in_reply(rig: Rig, line: str, via: Source, frame: Frame) -> int:
    """Put ``frame`` (a report of device ``frame.src``) on ``line`` in device ``via``'s next reply, under ``via``'s
    address (:class:`~harness.wire.dialects.capabilities.AddressForging`): what a device that claims another's report
    sends on a polled bus. Returns the sequence number it went out with.

    Raises:
        CannotForge: the line's device end lacks the capability, or the line does not carry ``via``.
        EncodeError: the dialect cannot express the frame's message.
    """
    end = address_forgeable(rig, line)
    if via not in spec_of(rig, line).roles:
        raise CannotForge(f"the {line} line does not carry the {via.value.lower()}")
    seq = end.forge_at(frame, via, rig.now)
    rig.note("harness", "forged frames", f"1 in the {via.value} reply on the {line} line")
    faces = str(getattr(frame.message, "faces", "") or "")
    # on a bus, a device's own "line" is its address: the alteration names the slot the frame was put in
    rig.alter("forged", frame.src.value, type(frame.message).__name__, frame.round, faces, f"{line}@{via.value}")
    port = rig.emulated.hub.ports[line]
    port.dirty = True
    rig.emulated.wake()
    return seq


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


def _own_end(rig: Rig, src: Source) -> tuple[str, DeviceEnd]:
    """The line carrying device ``src`` and its device end. Raises CannotForge: the bench has no such device."""
    port = rig.emulated.hub.roles.get(src)
    if port is None:
        raise CannotForge(f"bench {rig.bench.name} has no {src.value} device")
    return port.name, port.end


def _lacks(rig: Rig, line: str, end: DeviceEnd, capability: str, what: str) -> CannotForge:
    return CannotForge(
        f"the {line} line speaks {spec_of(rig, line).dialect.name}, whose device end ({type(end).__name__}) lacks "
        f"the capability {capability} (harness.wire.dialects.capabilities): {what}"
    )


def flip_check(rig: Rig, src: Source) -> None:
    """Device ``src``'s next report goes out once with one bit of its integrity check flipped, its body intact
    (:class:`~harness.wire.dialects.capabilities.CheckFlipping`); the device sends it again, intact, as its dialogue
    says when the far end does not take it.

    Raises:
        CannotForge: no such device, its line's dialect has no integrity check, or its end lacks the capability.
    """
    line, end = _own_end(rig, src)
    dialect = spec_of(rig, line).dialect
    if not dialect.integrity_checked:
        raise CannotForge(f"the {line} line speaks {dialect.name}, whose frames carry no integrity check")
    if not isinstance(end, CheckFlipping):
        raise _lacks(rig, line, end, "CheckFlipping", "no frame's check can be damaged")
    try:
        end.flip_check(src)
    except ValueError as exc:
        raise CannotForge(f"the {line} line: {exc}") from None
    rig.note("harness", "check flipped", f"the {src.value}'s next report, once, on the {line} line")


def check_flips(rig: Rig, src: Source) -> tuple[CheckFlip, ...]:
    """The reports of device ``src`` sent damaged so far (:func:`flip_check`), in order (none: nothing armed)."""
    _line, end = _own_end(rig, src)
    return tuple(f for f in end.check_flips() if f.src is src) if isinstance(end, CheckFlipping) else ()


def lose_ack(rig: Rig, src: Source, kind: type[Message]) -> None:
    """The first acknowledgement of device ``src``'s next ``kind`` report is lost on the way to the device
    (:class:`~harness.wire.dialects.capabilities.AckLosing`): the device sends the report again, same number and
    same bytes, and the server must take the copy for a duplicate.

    Raises:
        CannotForge: no such device, or its line's end lacks the capability or expects no acknowledgement.
    """
    line, end = _own_end(rig, src)
    if not isinstance(end, AckLosing):
        raise _lacks(rig, line, end, "AckLosing", "no acknowledgement can be lost")
    try:
        end.lose_ack(src, kind)
    except ValueError as exc:
        raise CannotForge(f"the {line} line: {exc}") from None
    rig.note("harness", "acknowledgement lost", f"of the {src.value}'s next {kind.__name__}, on the {line} line")


def acks_lost(rig: Rig, src: Source) -> tuple[LostAck, ...]:
    """The acknowledgements of device ``src``'s reports lost so far (:func:`lose_ack`), in order."""
    _line, end = _own_end(rig, src)
    return tuple(a for a in end.acks_lost() if a.src is src) if isinstance(end, AckLosing) else ()


def number_last(rig: Rig, src: Source) -> tuple[int, int]:
    """Device ``src``'s next report gets the last number of its line's sequence space, the one after it the first
    (:class:`~harness.wire.dialects.capabilities.Renumbering`). Returns (last, first).

    Raises:
        CannotForge: no such device, or its line's end lacks the capability.
    """
    line, end = _own_end(rig, src)
    if not isinstance(end, Renumbering):
        raise _lacks(rig, line, end, "Renumbering", "its numbering cannot be moved on to the wrap")
    last, first = end.number_last(src)
    rig.note("harness", "numbering moved", f"the {src.value}'s next report is {last}, then {first}, on {line}")
    return last, first


class _Silenced(DelegatingDeviceEnd):
    """A device end gone mute: it runs as ``inner`` does, hearing the far end, but every byte it would put on the line
    is dropped (bytes already written are on the wire). No error, no close: the port stays open and quiet."""

    def take_output(self) -> bytes:
        self.inner.take_output()  # dropped: nothing reaches the line
        return b""


def silence(rig: Rig, src: Source, began: Callable[[float], None] | None = None) -> None:
    """From now on device ``src``'s line is quiet for the rest of the rig's run, the port open and no error raised:
    what only the server's silence limit can tell. A line that carries ``src`` alone puts no more byte on the wire (no
    heartbeat, no reply, no report); on a line shared with other devices (a bus) ``src`` stops answering (its end's
    :class:`~harness.wire.dialects.capabilities.Muting`) and the others go on. Recorded for the judge (kind
    ``silenced``: a pause of the round from then on has this cause); ``began`` is called with the bench time.

    Raises:
        CannotForge: no such device, or a shared line whose end cannot mute one device.
    """
    line, end = _own_end(rig, src)
    port = rig.emulated.hub.ports[line]
    if len(port.roles) > 1:
        if not isinstance(end, Muting):
            raise _lacks(rig, line, end, "Muting", f"the {src.value.lower()} cannot go silent alone on a shared line")
        end.mute(src)
    elif not isinstance(end, _Silenced):
        port.end = _Silenced(end)
    rig.note("harness", "line silent", f"the {src.value} on the {line} line puts no byte on the wire from now on")
    rig.alter("silenced", src.value, "", line=line)
    if began is not None:
        began(rig.now)
    port.dirty = True
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
