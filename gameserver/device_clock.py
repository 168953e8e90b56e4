"""When a device's fact happened, in the engine's clock, from the device time on its frames (protocol 1.2).

A device data frame may end with ``at=<ms>``: the device's own monotonic clock, in milliseconds since its
power-up, when the fact happened (fixed then: a retransmission keeps it). The server does not know the
device clock's origin, so it learns the offset between the two clocks from the frames themselves. For every
frame, ``arrival − at`` is the true offset plus that frame's transit delay (queueing, retransmission, a
dropping line), which is never negative; the smallest value seen so far is therefore the best estimate of the
offset, and it only improves. A frame's estimated time is ``at + offset``:

- it is never later than the frame's arrival (the offset is at most this frame's own ``arrival − at``);
- it is never earlier than the truth (every ``arrival − at`` is at least the true offset), so a rule that
  fires on "happened before X" never fires on a fact that truly happened after X. It is late by the fastest
  transit seen since the last reset (a few ms on a healthy line).

The device clock may restart when the device re-opens its port, so the estimate is forgotten on the line's
``HELLO`` (:meth:`DeviceClock.reset`); the first frame after it is taken as prompt. Clock drift between the
device and the server is not modelled: between two HELLOs the estimate can move by the clocks' relative
rate (50 ppm is 3 ms a minute), which the "never earlier than the truth" bound above does not cover.
"""

from __future__ import annotations


class DeviceClock:
    """The device-time to engine-time mapping of one device line. Not thread-safe: one per line's thread."""

    def __init__(self) -> None:
        self._offset: float | None = None  # min over frames since the last reset of (arrival_s − at_ms/1000)

    @property
    def offset_s(self) -> float | None:
        """The current offset estimate (engine seconds minus device seconds), or None before any timed frame."""
        return self._offset

    def observe(self, at_ms: int | None, arrival_s: float) -> float | None:
        """Learn from one frame with device time ``at_ms`` that arrived at ``arrival_s`` (engine seconds) and
        return when its fact happened, in engine seconds — never later than ``arrival_s``. A frame without a
        device time (``at_ms`` None) teaches nothing and gives None. Raises ValueError for a negative
        ``at_ms`` (the codec never produces one)."""
        if at_ms is None:
            return None
        if at_ms < 0:
            raise ValueError(f"device time must be >= 0 ms, got {at_ms}")
        at_s = at_ms / 1000.0
        candidate = arrival_s - at_s
        if self._offset is None or candidate < self._offset:
            self._offset = candidate
        return min(at_s + self._offset, arrival_s)

    def reset(self) -> None:
        """Forget the offset (the line's HELLO: the device clock may have restarted)."""
        self._offset = None
