"""What a device end may optionally do, beyond :class:`~harness.wire.dialects.base.DeviceEnd`.

Each capability is a small :func:`~typing.runtime_checkable` protocol; code that needs one asks
``isinstance(end, X)`` and does without it otherwise (the bench's forge, :mod:`harness.bench.forge`, reports a
scenario not applicable on a line whose end lacks :class:`Forging`). An end offers a capability by having its
members; it need not inherit from the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame, Message, Source

__all__ = [
    "AckLosing",
    "AddressForging",
    "CheckFlip",
    "CheckFlipping",
    "ForgeEncoding",
    "Forging",
    "LostAck",
    "Muting",
    "NoiseBodies",
    "NoiseFrames",
    "NoiseKind",
    "Redial",
    "Redialing",
    "Releasing",
    "Renumbering",
]


class NoiseKind(StrEnum):
    """A frame whose integrity check holds (where the dialect has one) but that the dialect refuses."""

    #: a type (code, keyword) the dialect does not define
    UNKNOWN_TYPE = "unknown_type"
    #: a known report with a field value out of its range
    BAD_FIELD = "bad_field"
    #: a known report with a field missing
    MISSING_FIELD = "missing_field"


@runtime_checkable
class Forging(Protocol):
    """The end can put frames on its line that its devices did not send: a report as if another device sent it, a
    copy of an old report, noise. Forged frames stand outside the line's own dialogue: the end numbers them itself
    (:meth:`forge`), never retransmits them, ignores what the far end answers to them, and its own reports keep
    their sequence numbers and their order.

    Where a forged frame goes: an end whose devices push writes it unasked, after what it has written already; an
    end whose devices answer polls puts it in device ``src``'s next reply to the master that is not an offer again
    of an unacknowledged report, before the device's own answer (which is neither delayed nor renumbered), or, when
    the line does not carry ``src``, in the next such reply of any of its devices.
    """

    def forge(self, frame: Frame, now: float) -> int:
        """Put ``frame`` (a data message from a device) on the line as if device ``frame.src`` sent it, with its round
        tag and event time. Its ``seq`` is ignored: the end gives it a *forged number*, one the far end cannot take for
        a retransmission: it differs from the last number the line's own device used and from the one given to the
        previous forged frame, and the line's own device will not reach it soon (each end documents its choice).

        Returns:
            the sequence number the frame went out with.

        Raises:
            EncodeError: the dialect cannot express the frame (a sender or message it does not carry).
            ValueError: ``frame`` holds a control message (an ACK, a heartbeat: the dialogue's own).
        """
        ...

    def noise_kinds(self) -> frozenset[NoiseKind]:
        """The kinds of noise :meth:`forge_noise` can make on this line (empty: none)."""
        ...

    def forge_noise(self, kind: NoiseKind, src: Source, now: float) -> int:
        """Put one frame of ``kind`` on the line as if device ``src`` sent it (placed like :meth:`forge`, with a forged
        number): its integrity check holds, and the dialect's own decoder returns it as a ``BadFrame``.

        Returns:
            the sequence number the frame carries.

        Raises:
            EncodeError: ``kind`` is not in :meth:`noise_kinds`, or the dialect cannot say ``src`` sent it.
        """
        ...


@runtime_checkable
class ForgeEncoding(Protocol):
    """A forging end (:class:`Forging`) that tells, without writing anything, the bytes :meth:`Forging.forge` would put
    on its line for a frame: what the bench asks before it arms a forged frame, so that a frame the line cannot carry
    makes the scenario not applicable instead of failing when it fires. An end needs it when its line's formats are
    not :meth:`~harness.wire.dialects.base.Dialect.codec`'s (a line that carries one device's format of several, a
    forged frame sent in its sender's own format); without it the bench asks the codec of the line's dialect."""

    def forged_bytes(self, frame: Frame) -> bytes:
        """The bytes :meth:`Forging.forge` would write for ``frame``, numbered ``frame.seq``, without writing them or
        changing the end.

        Raises:
            EncodeError: the end cannot forge the frame on its line (as :meth:`Forging.forge` would).
        """
        ...


@runtime_checkable
class NoiseFrames(Protocol):
    """A codec that can make noise frames of its own dialect: what lets a push end forge noise
    (:meth:`Forging.forge_noise`) whatever the codec."""

    def noise_frame(self, kind: NoiseKind, src: Source, seq: int) -> bytes:
        """The wire bytes of one frame of ``kind`` from ``src`` numbered ``seq``: its integrity check holds and this
        codec's decoder returns it as a ``BadFrame``. Raises EncodeError when ``src`` cannot send one."""
        ...


@runtime_checkable
class NoiseBodies(Protocol):
    """A message map that can make noise frame bodies: a composed codec (framer, integrity, this map) then makes
    noise frames by wrapping them like any body."""

    def noise_body(self, kind: NoiseKind, src: Source, seq: int) -> bytes:
        """The body (before integrity and framing) of one frame of ``kind`` from ``src`` numbered ``seq``, which
        this map's decoder refuses. Raises EncodeError when ``src`` cannot send one."""
        ...


@runtime_checkable
class AddressForging(Protocol):
    """An end whose devices answer polls can put a frame in the reply of another of its devices, under that device's
    address: a report of device ``frame.src`` sent from the address of device ``via`` (a result in the console's
    reply), what a device that claims another's report would put on the line."""

    def forge_at(self, frame: Frame, via: Source, now: float) -> int:
        """Put ``frame`` (a data message of device ``frame.src``) in device ``via``'s next reply that is not an offer
        again of an unacknowledged report, before its own answer, with ``via``'s address and the frame's own type,
        round tag and event time, numbered like :meth:`Forging.forge`.

        Returns:
            the sequence number the frame went out with.

        Raises:
            ValueError: ``via`` is not a device of this line, or ``frame`` holds a control message.
            EncodeError: the dialect cannot express the frame's message.
        """
        ...


@dataclass(frozen=True, slots=True)
class CheckFlip:
    """A report whose first transmission had one bit of its integrity check flipped (:class:`CheckFlipping`):
    its device, its sequence number, how many times it went out before the far end acknowledged it (the damaged copy
    included) and whether it has been acknowledged."""

    src: Source
    seq: int
    sends: int
    delivered: bool


@runtime_checkable
class CheckFlipping(Protocol):
    """The end can damage the integrity check of one of its own reports on the line: the body unchanged, one bit of
    the check inverted, on the first transmission only (what a line error inside the check does). The report keeps
    its number; its retransmission (or its next offer) is intact."""

    def flip_check(self, src: Source) -> None:
        """The next report device ``src`` sends for the first time goes out once with one bit of its check flipped.

        Raises:
            ValueError: the line does not carry ``src``, or its frames carry no check this end can damage.
        """
        ...

    def check_flips(self) -> tuple[CheckFlip, ...]:
        """Every report damaged so far (:meth:`flip_check`), in order."""
        ...


@dataclass(frozen=True, slots=True)
class LostAck:
    """An acknowledgement the device did not get (:class:`AckLosing`): the report's device, its sequence number, its
    message type, and whether the device has had it acknowledged since (its copy sent again reached the far end)."""

    src: Source
    seq: int
    message: str
    delivered: bool


@runtime_checkable
class AckLosing(Protocol):
    """The end can lose the far end's acknowledgement of one of its reports on the way: the device never learns the
    report arrived, so it sends it again, the same number and the same bytes, as the dialogue says."""

    def lose_ack(self, src: Source, kind: type[Message]) -> None:
        """The first acknowledgement of device ``src``'s next ``kind`` report is lost (for an acknowledgement carried
        by the next request, as on a polled bus: that request's acknowledgement).

        Raises:
            ValueError: the line does not carry ``src``, or its dialogue acknowledges nothing.
        """
        ...

    def acks_lost(self) -> tuple[LostAck, ...]:
        """Every acknowledgement lost so far (:meth:`lose_ack`), in order."""
        ...


@runtime_checkable
class Muting(Protocol):
    """An end that carries several devices (a bus) can make one of them go quiet while the others go on."""

    def mute(self, src: Source) -> None:
        """From now on device ``src`` puts no byte on the line: it answers no request addressed to it and sends no
        report; the far end can tell only by its silence limit. For the rest of the end's life.

        Raises:
            ValueError: the line does not carry ``src``.
        """
        ...


@runtime_checkable
class Renumbering(Protocol):
    """The end can move a device's numbering on to the end of its sequence space, so that its next reports cross the
    wrap (e.g. 65,535 then 1 on a push link, 255 then 1 on a polled bus)."""

    def number_last(self, src: Source) -> tuple[int, int]:
        """The next report device ``src`` numbers gets the last number of its space, the one after it the first.

        Returns:
            (the last number, the first number after the wrap).

        Raises:
            ValueError: the line does not carry ``src``.
        """
        ...


@dataclass(frozen=True, slots=True)
class Redial:
    """A connection the device left right after one of its reports went out (:class:`Redialing`): the report's
    device, its sequence number and message type, whether the device sent it again on its new connection and whether
    the far end has acknowledged it since."""

    src: Source
    seq: int
    message: str
    resent: bool
    delivered: bool


@runtime_checkable
class Redialing(Protocol):
    """The end can drop its connection right after one of its reports went out, before the far end's
    acknowledgement of it came back, and connect again when the device next has a report to send: its session starts
    again (a hello first), then the unacknowledged report goes out again under its own sequence number, then the new
    one. What a device whose dialect declares ``resend_after_reconnect``
    (:class:`~harness.wire.dialects.base.ProtocolCapabilities`) does after a reconnect; the far end must take the copy
    for the report it already has."""

    def redial_after(self, src: Source, kind: type[Message]) -> None:
        """Device ``src``'s next ``kind`` report is the last thing its connection carries: the end writes nothing and
        takes nothing more on it (the acknowledgement on the way is lost), and connects again when ``src`` next
        sends a report.

        Raises:
            ValueError: the line does not carry ``src``, or its dialogue acknowledges nothing.
        """
        ...

    def redials(self) -> tuple[Redial, ...]:
        """Every connection left so far (:meth:`redial_after`), in order."""
        ...


@runtime_checkable
class Releasing(Protocol):
    """A server end (:class:`~harness.wire.dialects.base.ServerEnd`) that holds reports back (for event order across
    the devices of a bus) and can let them go without new bytes: what its owner asks after each
    :meth:`~harness.wire.dialects.base.ServerEnd.tick`."""

    def released(self, now: float) -> list[Frame | BadFrame]:
        """The reports :meth:`~harness.wire.dialects.base.ServerEnd.tick` let go since the last call, in order; each
        is handed on once, here or by the next ``receive``."""
        ...
