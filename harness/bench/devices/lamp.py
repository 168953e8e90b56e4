"""The table lamp device: server lamp commands (docs/protocol.md §6) become states of the simulator's lamp,
which the simulated dealer follows.

Betting shows open from OPEN until the server's CLOSE (or another command) whatever the betting time: nothing here
closes betting by itself. An OPEN's betting time only sets the close the lamp announces (the lamp signal's
deadline, which the dealer and the ground truth go by). A lamp whose protocol carries no betting time on OPEN
(a dialect declaring no ``betting_time_on_open``) announces the table's own betting period instead
(:attr:`LampDriver.until_close_s`), never the OPEN's ``ms``: its betting shows open until CLOSE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

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

__all__ = ["LAMP_COMMANDS", "HeldOpen", "LampDriver", "OpenVerdict", "OrdinalLampDriver"]


class OpenVerdict(Enum):
    """What a lamp with :attr:`LampDriver.opened_rounds_only` does with an OPEN for a round new to it."""

    SHOW = "show"  # show betting open now
    HOLD = "hold"  # keep it in :attr:`LampDriver.held` until its owner shows it (:meth:`LampDriver.show_held`)
    PASS = "pass"  # pass it over: the table does not play that round


@dataclass(frozen=True, slots=True)
class HeldOpen:
    """An OPEN the lamp holds (:attr:`OpenVerdict.HOLD`): ``message``, which reached the lamp at ``at``;
    ``overtaken``: another command for its round reached the lamp while it was held; ``open_s``: the seconds from its
    arrival to the close it announces when that is not its ``ms`` (a lamp that shows betting open until CLOSE,
    :attr:`LampDriver.until_close_s`), None when it is."""

    message: LampOpen
    at: float
    overtaken: bool = False
    open_s: float | None = None

    @property
    def deadline(self) -> float:
        """When its announced betting closes, counted from its arrival: ``at`` plus :attr:`open_s`, or plus the
        OPEN's ``ms`` when :attr:`open_s` is None."""
        return self.at + (self.message.ms / 1000.0 if self.open_s is None else self.open_s)


class LampDriver:
    """Applies lamp commands to a simulator :class:`Lamp`.

    Round ids on the wire are strings; the simulator numbers rounds with ints, from 1 (0 is the lamp's "no round
    yet"). A decimal id of ASCII digits without leading zeros, 1 and up (a ``numeric`` dialect's round ids, up to
    2³²−1), is used as is when no other id has that number; any other id (text, ``0``, ``007``) gets the next unused
    number above every number given so far, and the mapping is kept in :attr:`rounds`.

    ``until_close_s``: None when the lamp's OPEN carries the betting time (its ``ms`` sets the close the lamp
    announces); else the lamp's protocol carries none (a dialect declaring no ``betting_time_on_open``) and every
    OPEN shows betting open until CLOSE, announcing a close ``until_close_s`` after its arrival (the table's own
    betting period; ``math.inf`` when none is known) whatever its ``ms``. Raises ValueError for a negative or NaN
    ``until_close_s``.

    With :attr:`opened_rounds_only` a command for a round this lamp never saw open (one left over from an earlier
    scenario on a server that keeps running, e.g. a void round's VOID sent again) changes nothing, and an OPEN for
    a round new to it is shown, held or passed over as :meth:`admits_open` says. Passed over (a round that opened
    before the table was there, its OPEN sent again), it changes nothing: the line has acknowledged it, the table
    starts clean. Held (the server's report of that round's opening has not come yet), it waits in :attr:`held`,
    changing nothing, until its owner calls :meth:`show_held` (shown as if it had been shown on arrival) or
    :meth:`drop_held`; another OPEN for that round meanwhile keeps the first one's arrival, and any other command
    for it marks it ``overtaken`` and changes nothing.
    """

    #: Ignore commands for rounds no OPEN announced to this lamp.
    opened_rounds_only = False

    def __init__(self, lamp: Lamp, until_close_s: float | None = None) -> None:
        if until_close_s is not None and not until_close_s >= 0:
            raise ValueError(f"until_close_s: must be a number of seconds >= 0 (or None); got {until_close_s!r}")
        self.lamp = lamp
        self.until_close_s = until_close_s
        self.rounds: dict[str, int] = {}
        self.held: dict[str, HeldOpen] = {}  # OPENs held until the server reports their round opened, by round id
        self._ids: dict[int, str] = {}  # the reverse of ``rounds`` (the last id given a number)
        self._indexed = 0  # how many entries of ``rounds`` ``_ids`` holds
        self._before_pause: tuple[LampState, float | None] | None = None

    def round_no(self, round_id: str) -> int:
        known = self.rounds.get(round_id)
        if known is not None:
            return known
        number = _decimal(round_id)
        if number is None or number in self._taken():
            number = max(self.rounds.values(), default=0) + 1
        self._number(round_id, number)
        return number

    def _taken(self) -> set[int] | dict[int, str]:
        """The numbers already given (the reverse index while it is complete, else a set built now)."""
        return self._ids if self._indexed == len(self.rounds) else set(self.rounds.values())

    def open_s(self, message: LampOpen) -> float:
        """Seconds from ``message``'s arrival to the close the lamp announces for it: its ``ms``, or
        :attr:`until_close_s` when the lamp's protocol carries no betting time."""
        return message.ms / 1000.0 if self.until_close_s is None else self.until_close_s

    def _number(self, round_id: str, number: int) -> None:
        """Give the new ``round_id`` its ``number`` (in :attr:`rounds` and its reverse, at O(1))."""
        self.rounds[round_id] = number
        if self._indexed == len(self.rounds) - 1:
            self._ids[number] = round_id
            self._indexed += 1

    def admits_open(self, round_id: str) -> OpenVerdict:
        """What becomes of an OPEN for ``round_id``, new to this lamp (with :attr:`opened_rounds_only`): here it is
        always shown; a subclass asks the server. May show held OPENs (:meth:`show_held`) before it returns."""
        return OpenVerdict.SHOW

    def show_held(self, round_id: str) -> None:
        """Show the held OPEN of ``round_id`` as if it had been shown when it arrived: its round gets its number
        now, and betting closes at :attr:`HeldOpen.deadline`. Raises KeyError when no OPEN of that round is held."""
        held = self.held.pop(round_id)
        self.lamp.set(LampState.BETTING_OPEN, self.round_no(round_id), held.deadline)

    def drop_held(self, round_id: str) -> HeldOpen | None:
        """Let go of the held OPEN of ``round_id`` (the lamp never shows it); returns it, None when none was held."""
        return self.held.pop(round_id, None)

    def _admits(self, message: Message, round_id: str, now: float) -> bool:
        """Whether ``message``, a command for ``round_id`` (a round new to this lamp), is shown now; holds an OPEN
        :meth:`admits_open` says to hold, and marks a held OPEN overtaken by any other command for its round."""
        held = self.held.get(round_id)
        if not isinstance(message, LampOpen):
            if held is not None and not held.overtaken:
                self.held[round_id] = replace(held, overtaken=True)
            return False
        verdict = self.admits_open(round_id)
        if round_id in self.rounds:  # asking showed its held OPEN, from that one's arrival
            return False
        if verdict is OpenVerdict.HOLD:
            if held is None:
                self.held[round_id] = HeldOpen(message, now, open_s=self.until_close_s)
            return False
        self.held.pop(round_id, None)
        return verdict is OpenVerdict.SHOW

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
        if new and not self._admits(message, str(round_id), now):
            return
        if isinstance(message, LampOpen):
            lamp.set(LampState.BETTING_OPEN, self.round_no(message.round), now + self.open_s(message))
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


def _decimal(round_id: str) -> int | None:
    """The number a round id of ASCII digits without leading zeros stands for, when it is 1 or more; else None."""
    if not round_id.isascii() or not round_id.isdigit() or round_id[0] == "0":
        return None
    return int(round_id)


class OrdinalLampDriver(LampDriver):
    """Numbers rounds 1, 2, ... in the order the lamp shows them open, whatever the server's ids are; commands for
    rounds it never saw open (left over from an earlier scenario) change nothing. What becomes of an OPEN for a
    new round is ``server_opened``'s answer (set by the rig: shown when the server reported that round opened since
    the rig started, held while it has not, passed over when the two came too far apart); without it, shown."""

    opened_rounds_only = True
    server_opened: Callable[[str], OpenVerdict] | None = None

    def admits_open(self, round_id: str) -> OpenVerdict:
        return OpenVerdict.SHOW if self.server_opened is None else self.server_opened(round_id)

    def round_no(self, round_id: str) -> int:
        known = self.rounds.get(round_id)
        if known is None:
            known = len(self.rounds) + 1
            self._number(round_id, known)
        return known
