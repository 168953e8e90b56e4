"""The table lamp device: server lamp commands (docs/protocol.md §6) become states of the simulator's lamp,
which the simulated dealer follows."""

from __future__ import annotations

from collections.abc import Callable

from harness.wire.messages import (
    LAMP_COMMANDS,
    LampClose,
    LampOpen,
    LampPause,
    LampReshake,
    LampResume,
    LampVoid,
    Message,
)
from simulator.lamp import Lamp, LampState

__all__ = ["LAMP_COMMANDS", "LampDriver", "OrdinalLampDriver"]


class LampDriver:
    """Applies lamp commands to a simulator :class:`Lamp`.

    Round ids on the wire are strings; the simulator numbers rounds with ints. A decimal id is used as is; any
    other id gets the next unused number, and the mapping is kept in :attr:`rounds`.

    With :attr:`opened_rounds_only` a command for a round this lamp never saw open (one left over from an earlier
    scenario on a server that keeps running, e.g. a void round's VOID sent again) changes nothing, and so does an
    OPEN that :meth:`accepts_open` refuses (a round that opened before the table was there, its OPEN sent again):
    the line has acknowledged it, the table starts clean.
    """

    #: Ignore commands for rounds no OPEN announced to this lamp.
    opened_rounds_only = False

    def __init__(self, lamp: Lamp) -> None:
        self.lamp = lamp
        self.rounds: dict[str, int] = {}
        self._ids: dict[int, str] = {}  # the reverse of ``rounds`` (the last id given a number)
        self._indexed = 0  # how many entries of ``rounds`` ``_ids`` holds
        self._before_pause: tuple[LampState, float | None] | None = None

    def round_no(self, round_id: str) -> int:
        known = self.rounds.get(round_id)
        if known is not None:
            return known
        number = int(round_id) if round_id.isdigit() else max(self.rounds.values(), default=0) + 1
        self._number(round_id, number)
        return number

    def _number(self, round_id: str, number: int) -> None:
        """Give the new ``round_id`` its ``number`` (in :attr:`rounds` and its reverse, at O(1))."""
        self.rounds[round_id] = number
        if self._indexed == len(self.rounds) - 1:
            self._ids[number] = round_id
            self._indexed += 1

    def accepts_open(self, round_id: str) -> bool:
        """Whether an OPEN for ``round_id``, new to this lamp, is shown (with :attr:`opened_rounds_only`): here
        always; a subclass asks the server."""
        return True

    def wire_id(self, number: int) -> str | None:
        """The wire round id the server opened as round ``number`` (None if no OPEN named it); O(1) while
        :attr:`rounds` is filled through :meth:`round_no`, rebuilt once after anyone else fills it."""
        if self._indexed != len(self.rounds):
            self._ids = dict(zip(self.rounds.values(), self.rounds, strict=True))  # the last id given a number wins
            self._indexed = len(self.rounds)
        return self._ids.get(number)

    def apply(self, message: Message, now: float) -> None:
        """Show the command on the lamp. Messages that are not lamp commands are ignored."""
        lamp = self.lamp
        round_id = getattr(message, "round", None)
        new = self.opened_rounds_only and isinstance(round_id, str) and round_id not in self.rounds
        if new and not (isinstance(message, LampOpen) and self.accepts_open(str(round_id))):
            return
        if isinstance(message, LampOpen):
            lamp.set(LampState.BETTING_OPEN, self.round_no(message.round), now + message.ms / 1000.0)
        elif isinstance(message, LampClose):
            lamp.set(LampState.BETTING_CLOSED, self.round_no(message.round))
        elif isinstance(message, LampReshake):
            # after the close a re-shake does not reopen anything: the lamp keeps showing "betting closed", so
            # the dealer, who re-shakes on his own (SH-2, SH-3), lifts after the new shake instead of waiting
            # for a CLOSE that never comes
            closed = lamp.signal.state is LampState.BETTING_CLOSED
            lamp.set(LampState.BETTING_CLOSED if closed else LampState.RESHAKE, self.round_no(message.round))
        elif isinstance(message, LampPause):
            signal = lamp.signal
            self._before_pause = (signal.state, signal.deadline)
            lamp.set(LampState.PAUSED, self.round_no(message.round))
        elif isinstance(message, LampResume):
            state, deadline = self._before_pause or (LampState.BETTING_CLOSED, None)
            self._before_pause = None
            if state is LampState.BETTING_OPEN and deadline is None:
                state = LampState.BETTING_CLOSED
            lamp.set(state, self.round_no(message.round), deadline)
        elif isinstance(message, LampVoid):
            lamp.set(LampState.VOID, self.round_no(message.round))


class OrdinalLampDriver(LampDriver):
    """Numbers rounds 1, 2, ... in the order the server's lamp opens them, whatever the server's ids are; commands
    for rounds it never saw open (left over from an earlier scenario) change nothing, and so does an OPEN for a
    round the server did not report opened since the rig started (``server_opened``, set by the rig)."""

    opened_rounds_only = True
    server_opened: Callable[[str], bool] | None = None

    def accepts_open(self, round_id: str) -> bool:
        return self.server_opened is None or self.server_opened(round_id)

    def round_no(self, round_id: str) -> int:
        known = self.rounds.get(round_id)
        if known is None:
            known = len(self.rounds) + 1
            self._number(round_id, known)
        return known
