"""What the dealer and the crowd may touch on the table, as narrow protocols, and the round book they share.

:class:`~simulator.table.Table` builds a :class:`~simulator.dealer.Dealer` and a :class:`~simulator.players.Crowd`
and hands each itself; they see it only as a :class:`DealerTable` or a :class:`CrowdTable`, so ``dealer.py`` and
``players.py`` never import ``table.py`` (an import-linter contract keeps it so). The protocols cost nothing at run
time: they are annotations only, and the dealer and the crowd read the table's attributes directly, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import simpy

from simulator.eventlog import Record
from simulator.events import PauseReason, RoundStatus
from simulator.incidents import IncidentSource, RoundPlan
from simulator.lamp import Lamp
from simulator.profile import Profile
from simulator.rng import Streams

Emit = Callable[[Record], None]


@dataclass(slots=True)
class RoundBook:
    """What the table knows of one round while it runs."""

    round: int
    plan: RoundPlan
    opened_at: float
    cleared: simpy.Event  # the dealer has finished with the round and is free for the next
    shakes: int = 0
    reshakes: int = 0
    since_resume: int = 0  # re-shakes since the round opened or last resumed: the budget ``max_reshakes`` caps
    ended: bool = False
    paused_since: float | None = None
    pause_depth: int = 0
    deadline: float | None = None  # the betting deadline first shown by the fixed lamp
    closed_before_pause: bool = False  # the fixed lamp showed *betting closed* when the pause began
    paused_total: float = 0.0
    resumed: simpy.Event | None = field(default=None)


class DealerTable(Protocol):
    """The table as the dealer sees it: the lamp it follows, the incidents it meets, the round books it deals, and
    what it may do to a round (end it, pause it, resume it)."""

    profile: Profile
    env: simpy.Environment
    emit: Emit
    lamp: Lamp
    incidents: IncidentSource

    def book_for(self, round_no: int) -> RoundBook: ...

    def end_round(self, book: RoundBook, status: RoundStatus, clause: str | None, faces: str | None = None) -> None: ...

    def pause(self, book: RoundBook, reason: PauseReason) -> None: ...

    def resume(self, book: RoundBook) -> None: ...


class CrowdTable(Protocol):
    """The table as the players see it: the lamp's openings, the seed's streams and the event log."""

    profile: Profile
    env: simpy.Environment
    emit: Emit
    lamp: Lamp
    streams: Streams
