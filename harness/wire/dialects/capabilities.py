"""What a device end may optionally do, beyond :class:`~harness.wire.dialects.base.DeviceEnd`.

Each capability is a small :func:`~typing.runtime_checkable` protocol; code that needs one asks
``isinstance(end, X)`` and does without it otherwise (the bench's forge, :mod:`harness.bench.forge`, reports a
scenario not applicable on a line whose end lacks :class:`Forging`). An end offers a capability by having its
members; it need not inherit from the protocol.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable

from harness.wire.messages import Frame, Source

__all__ = ["Forging", "NoiseBodies", "NoiseFrames", "NoiseKind"]


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
