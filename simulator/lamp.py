"""The table lamp: what the dealer is told to do. A game server drives it; standalone runs use a fixed schedule.

The dealer and the players never read a clock to decide when betting ends: they follow the lamp. In a HIL bench the
lamp's state is set from the server's lamp commands arriving over serial; in a standalone run
:class:`simulator.table.FixedScheduleController` plays a minimal, rule-following table controller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import simpy
from simpy.events import Event

from simulator.fastinit import install_fast_init


class LampState(StrEnum):
    OFF = "off"  # between rounds
    BETTING_OPEN = "betting_open"
    BETTING_CLOSED = "betting_closed"
    RESHAKE = "reshake"  # the server asks for a re-shake (e.g. it could not read the result)
    PAUSED = "paused"  # ERR-1
    VOID = "void"  # the round is over without settlement (void or cancelled): clear the table


# hot path: the members the hot paths compare against, as module constants. In Python 3.11 reading ``LampState.X``
# is much slower than reading a global: ``EnumType`` defines ``__getattr__``, which turns off attribute caching on
# the class (figures: docs/performance.md).
_OPEN = LampState.BETTING_OPEN


@dataclass(frozen=True, slots=True)
class LampSignal:
    state: LampState
    round: int
    deadline: float | None  # sim time betting closes, for BETTING_OPEN


install_fast_init(LampSignal)  # three signals per round


class Lamp:
    """The lamp's current signal plus SimPy events to wait on its changes.

    ``changed`` fires on every change; ``opened`` fires only when a *new* round opens (not on a resume), so that
    processes that care about new rounds wake once per round. ``on_change``, when set, is called at once with the
    previous and the new signal on every change (a waiter woken by ``changed`` may see only the latest of several
    changes made at one instant).
    """

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.signal = LampSignal(LampState.OFF, 0, None)
        self.changed: simpy.Event = env.event()
        self.opened: simpy.Event = env.event()
        self.on_change: Callable[[LampSignal, LampSignal], None] | None = None

    @property
    def state(self) -> LampState:
        return self.signal.state

    def set(self, state: LampState, round_no: int | None = None, deadline: float | None = None) -> None:
        """Show ``state`` for ``round_no`` (default: the current round) and wake every waiter.

        Raises:
            ValueError: BETTING_OPEN without a deadline.
        """
        if state is _OPEN and deadline is None:
            raise ValueError("betting open needs a deadline")
        previous = self.signal
        signal = LampSignal(state, previous.round if round_no is None else round_no, deadline)
        self.signal = signal
        fired, self.changed = self.changed, Event(self.env)
        fired.succeed(signal)
        if self.on_change is not None:
            self.on_change(previous, signal)
        if state is _OPEN and signal.round != previous.round:
            opened, self.opened = self.opened, Event(self.env)
            opened.succeed(signal)
