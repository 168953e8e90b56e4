"""Players at their seats, and each player's network link.

A seat is taken by a sequence of players (``p03.1``, ``p03.2``, ... for seat 3): each stays a random number of
rounds (``players.session_rounds``), then leaves; the seat stays empty for ``players.arrival_gap`` and the next
player sits down at the first opening after that. In each round a seated player bets with probability ``p_bet``,
placing 1..n bets, each after a think time counted from the opening (or from the previous bet). A bet is sent only
if the player's link is up at that moment; it reaches the server after the link's latency. Links go down and up on
their own (``network.up`` / ``network.down``), independently of the rounds, which is how disconnections during a
round (DC-1..3, NET-1) arise. A player who decides to leave sends that round's bets, then leaves.

Randomness is per seat, so adding a seat changes nothing for the others: a seat's betting decisions at the k-th
opening come from its own generator (:mod:`simulator.seatplans`), its arrival gaps and its link from two streams of
its own. One :class:`Crowd` process plays all seats: at each opening it takes every seat's decisions for the round
and schedules each bet as a SimPy event of its own (a planned action), whose callback sends it at its time.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, cast

import simpy
from simpy.events import NORMAL

from simulator.events import BetSent, LinkDown, LinkUp, PlayerJoined, PlayerLeft
from simulator.rng import Subsystem
from simulator.seatplans import Choice, SeatBets, SeatPlans

if TYPE_CHECKING:
    from simulator.seams import CrowdTable

Proc = Generator[Any, Any, Any]


class Seat:
    """One seat: who sits there, how many bets they sent, whether the link is up, and the seat's own streams."""

    __slots__ = ("arrivals", "bets", "free_at", "index", "link_up", "net_stream", "player", "rows", "visits")

    def __init__(self, table: CrowdTable, index: int, rows: SeatBets) -> None:
        self.index = index
        self.rows = rows  # the bets placed at this seat, drawn ahead
        self.arrivals = table.streams.stream(Subsystem.PLAYER, index, 1)  # arrival gaps after a player leaves
        self.net_stream = table.streams.stream(Subsystem.NETWORK, index)
        self.visits = 0
        self.bets = 0
        self.player: str | None = None
        self.free_at = 0.0  # an empty seat is taken at the first opening at or after this time
        self.link_up = True


# What a planned action carries: (its time, round, seat, (bet, stake) or None for leaving, when the bet reaches the
# server).
_Due = tuple[float, int, Seat, Choice | None, float]


class _Planned(simpy.Event):
    """A seat's planned action: an event triggered when it is planned and processed by SimPy at its time.

    It is what ``env.timeout(delay, value)`` makes, without the Timeout's per-instance bookkeeping: the crowd builds
    one per bet (ten a round) inline, exactly as :meth:`simpy.events.Event.succeed` triggers an event (``_ok`` and
    ``_value`` set, then ``env.schedule``), but with a delay. Scheduled in the same order, at the same times, as
    ``env.timeout`` would schedule them.

    Each crowd plans through a subclass of its own (:func:`_planned_for`) whose ``env`` and ``callbacks`` are class
    attributes, so an action sets only its ``_value`` (hot path: cheaper than a timeout, docs/performance.md).
    The shared ``callbacks`` list is never changed: SimPy processes an event by reading its callbacks and setting
    ``callbacks = None`` on the instance (which shadows the class's list), and nothing ever waits on a planned
    action, so nothing appends to it.
    """

    _ok = True
    _value: _Due


def _planned_for(env: simpy.Environment, deliver: Callable[[_Planned], None]) -> type[_Planned]:
    """The :class:`_Planned` subclass of one crowd: its environment and its callbacks (``[deliver]``)."""
    namespace = {"env": env, "callbacks": [deliver], "__slots__": ()}
    return cast(type[_Planned], type("_Planned", (_Planned,), namespace))


class Crowd:
    """All seats of a table, played by one process (plus one link process per seat)."""

    def __init__(self, table: CrowdTable, count: int) -> None:
        self.table = table
        self._emit = table.emit
        self.settings = table.profile.players
        self.plans = SeatPlans(table.streams, self.settings, count)
        self.seats = [Seat(table, i, self.plans.bets[i]) for i in range(count)]
        self._planned = _planned_for(table.env, self._deliver)
        for seat in self.seats:
            table.env.process(self.link(seat))
        table.env.process(self.run())

    def run(self) -> Proc:
        """At each opening, seat newcomers, take every seat's decisions for the round and schedule each bet as a
        SimPy event of its own (:meth:`_deliver` runs at its time), so a late bet of one round never makes anyone
        miss the next opening."""
        table, env, plans = self.table, self.table.env, self.plans
        lamp, emit, seats = table.lamp, table.emit, self.seats
        schedule, new, planned = env.schedule, object.__new__, self._planned
        while True:
            signal = yield lamp.opened
            now, round_no = env.now, signal.round
            counts, leaving = plans.next_opening()
            for seat, n, leaves in zip(seats, counts, leaving):  # noqa: B905 - one entry per seat, by construction
                if seat.player is None:
                    if now < seat.free_at:
                        continue
                    seat.visits += 1
                    seat.bets = 0
                    seat.player = f"p{seat.index + 1:02d}.{seat.visits}"
                    emit((PlayerJoined, now, seat.player, seat.index))
                elif seat.free_at < 0.0:
                    continue  # leaving once its last round's bets are sent
                delay = 0.0
                if n:
                    rows = seat.rows
                    first = rows.pos  # hot path: SeatBets.take, written out
                    if first + n > len(rows.thinks):
                        first = rows.take(n)
                    else:
                        rows.pos = first + n
                    thinks, choices, latencies = rows.thinks, rows.choices, rows.latencies
                    # Actions due at the same time are processed in the order they were scheduled: seat order, then
                    # each seat's own order.
                    for j in range(first, first + n):
                        delay += thinks[j]
                        at = now + delay  # the very sum SimPy computes for the event's time
                        due = new(planned)
                        due._value = (at, round_no, seat, choices[j], at + latencies[j])
                        schedule(due, NORMAL, delay)
                if leaves:
                    seat.free_at = -1.0
                    at = now + delay
                    self._plan(delay, (at, round_no, seat, None, at))  # after its last bet

    def _plan(self, delay: float, action: _Due) -> None:
        """Schedule ``action`` in ``delay`` seconds (what the crowd's loop does inline for each bet)."""
        due = object.__new__(self._planned)
        due._value = action
        self.table.env.schedule(due, NORMAL, delay)

    def _deliver(self, due: _Planned) -> None:
        """At a planned action's time: send the bet (lost if the player's link is down), or let the player leave."""
        at, round_no, seat, choice, arrives = due._value
        player = seat.player
        if player is None:
            return
        if choice is None:
            self._emit((PlayerLeft, at, player, seat.index))
            seat.player = None
            seat.free_at = at + self.settings.arrival_gap.sample(seat.arrivals)
        elif seat.link_up:
            seat.bets = n = seat.bets + 1
            bet, stake = choice
            # The bet's number stands for its id, f"{player}-{n}", which the log forms when read (simulator.eventlog).
            self._emit((BetSent, at, round_no, player, n, bet, stake, arrives))

    def link(self, seat: Seat) -> Proc:
        """The link of whoever sits at ``seat``: up for ``network.up``, down for ``network.down``, forever."""
        env, s, net = self.table.env, seat.net_stream, self.settings.network
        emit = self.table.emit
        while True:
            yield env.timeout(net.up.sample(s))
            seat.link_up = False
            if seat.player is not None:
                emit((LinkDown, env.now, seat.player))
            yield env.timeout(net.down.sample(s))
            seat.link_up = True
            if seat.player is not None:
                emit((LinkUp, env.now, seat.player))
