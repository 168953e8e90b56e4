"""Incremental indexes of the two logs a rig reads many times a round. Both logs only grow, so each read costs only
the entries appended since the previous read:

- :class:`ServerRounds`, over the server's round events: which rounds it reported opened (and when the rig first
  read each opening), and the first event that ended each round;
- :class:`TableRounds`, over the table's ground truth: the simulator rounds whose betting the table saw close, and
  each round's verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.records import RoundEvent, RoundEventKind
from simulator.eventlog import EventLog
from simulator.events import BettingClosed, RoundEnded


@dataclass
class ServerRounds:
    """What the server's cumulative round-event log says about rounds, kept up to date by reading only its tail.

    ``opened`` and ``opened_at`` are brought up to date by :meth:`read_openings`, ``ends`` by :meth:`read_ends`;
    each method keeps its own place in the log, so either may be called alone."""

    opened: set[str] = field(default_factory=set)
    opened_at: dict[str, float] = field(default_factory=dict)  # when the rig first read each round's opening
    ends: dict[str, RoundEvent] = field(default_factory=dict)  # the first event that ended each round
    openings: list[tuple[int, str]] = field(default_factory=list)  # (place in the log, round) of each OPENED event
    first_opening: dict[str, int] = field(default_factory=dict)  # the place in the log of each round's first OPENED
    _openings_read: int = 0
    _ends_read: int = 0

    def read_openings(self, events: Sequence[RoundEvent], now: float) -> set[str]:
        """The ids of the rounds ``events`` (the whole log so far) reports opened; an opening read for the first
        time is dated ``now``."""
        return self.read_new_openings(events[self._openings_read :], now)

    @property
    def openings_read(self) -> int:
        """How many events of the log :meth:`read_openings` / :meth:`read_new_openings` have read so far."""
        return self._openings_read

    def read_new_openings(self, new: Sequence[RoundEvent], now: float) -> set[str]:
        """:meth:`read_openings` from ``new``, the log's events after the first :attr:`openings_read`
        (``round_events_since(openings_read)``): costs only what is new."""
        place = self._openings_read
        for event in new:
            if event.kind == RoundEventKind.OPENED:
                rid = event.round_id
                self.opened.add(rid)
                self.opened_at.setdefault(rid, now)
                self.openings.append((place, rid))
                self.first_opening.setdefault(rid, place)
            place += 1
        self._openings_read = place
        return self.opened

    @property
    def ends_read(self) -> int:
        """How many events of the log :meth:`read_ends` has read so far."""
        return self._ends_read

    def read_ends(self, new: Sequence[RoundEvent]) -> dict[str, RoundEvent]:
        """Each round's first ending event, by round id, after reading ``new``: the log's events after the first
        :attr:`ends_read` (``round_events_since(ends_read)``)."""
        for event in new:
            if event.ends_round:
                self.ends.setdefault(event.round_id, event)
        self._ends_read += len(new)
        return self.ends


@dataclass
class TableRounds:
    """What the table's ground truth says about its rounds, kept up to date by :meth:`read`."""

    closed: set[int] = field(default_factory=set)  # simulator rounds whose betting the table saw close
    ends: dict[int, RoundEnded] = field(default_factory=dict)  # each simulator round's verdict
    _read: int = 0

    def read(self, log: EventLog) -> None:
        """Index the events of ``log`` (the table's ground truth) not read yet.

        Raises:
            ValueError: ``log`` forgot events this index had not read (:meth:`EventLog.forget`).
        """
        for event in log.since(self._read):
            if isinstance(event, BettingClosed):
                self.closed.add(event.round)
            elif isinstance(event, RoundEnded):
                self.ends.setdefault(event.round, event)
        self._read = log.end
