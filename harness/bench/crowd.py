"""The random crowd's bets, carried from the table model to the game server: every :class:`BetSent` the model logs
is delivered through ``send`` at the bet's arrival time.

In virtual time each bet's delivery is scheduled as the model logs it; on a real-time bench the log is polled every
``step`` wall seconds.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import simpy
from simpy.events import NORMAL

from harness.bench.gridtimer import At
from harness.records import BetReply
from simulator.eventlog import EventLog
from simulator.events import BetSent, Event

STALL_ROUNDS = 5  # rounds in a row, at the end of a run, with crowd bets sent and none accepted: the run stalled


def seat_wallet(player: str, visits: int) -> str:
    """The wallet a crowd player bets from: the model names a seat's players ``p03.1``, ``p03.2``, ... in the order
    they sit down; the ``visits`` wallets ``p03.1`` .. ``p03.<visits>`` opened for seat 3 are its regulars, and the
    seat's ``k``-th player is regular ``(k - 1) % visits + 1`` coming back, with the same id and wallet (so a seat
    never bets from a wallet that does not exist, however long the run). A name not of that form is returned as is.
    """
    seat, dot, visit = player.rpartition(".")
    if not dot or not visit.isdigit() or visits < 1:
        return player
    return sys.intern(f"{seat}.{(int(visit) - 1) % visits + 1}")  # one string a wallet, however many bets name it


@dataclass
class CrowdTally:
    """Every bet the crowd sent, counted as it is answered: sent = accepted + refused (a reply that refused it,
    by code) + failed (no reply: the adapter raised, by code), with the rounds in play for each, so that a run can
    tell whether its bets stopped being accepted (:meth:`problems`)."""

    sent: int = 0
    accepted: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    last_accepted_round: str = ""  # the round in play when the latest accepted bet was sent
    unaccepted_streak: list[str] = field(default_factory=list)  # rounds in play since, each with a bet sent

    def replied(self, in_play: str, reply: BetReply) -> None:
        """Count a bet the server answered."""
        self.sent += 1
        if reply.accepted:
            self.accepted += 1
            self.last_accepted_round = in_play
            self.unaccepted_streak.clear()
        else:
            self.refused[reply.code] += 1
            self._unaccepted(in_play)

    def failed_with(self, in_play: str, code: str) -> None:
        """Count a bet the server could not take (the adapter raised ``AdapterError`` with ``code``)."""
        self.sent += 1
        self.failed[code] += 1
        self._unaccepted(in_play)

    def _unaccepted(self, in_play: str) -> None:
        streak = self.unaccepted_streak
        if in_play != self.last_accepted_round and (not streak or streak[-1] != in_play):
            streak.append(in_play)

    def problems(self) -> list[str]:
        """Why the crowd's bets say the run did not play honestly: any failed bet (in a run of rounds the rules
        explain none: no bet goes unanswered while the server is up), or bets sent but none accepted in the last
        :data:`STALL_ROUNDS` or more rounds in play. Empty when neither."""
        out: list[str] = []
        if self.failed:
            failed = ", ".join(f"{code}: {n}" for code, n in sorted(self.failed.items()))
            out.append(f"{sum(self.failed.values())} crowd bets failed ({failed})")
        streak = self.unaccepted_streak
        if len(streak) >= STALL_ROUNDS:
            if self.last_accepted_round:
                out.append(
                    f"crowd bets stopped being accepted after round {self.last_accepted_round}: "
                    f"none of {len(streak)} rounds since took one"
                )
            else:
                out.append(f"no crowd bet was accepted: none of {len(streak)} rounds with bets took one")
        return out

    def to_json(self) -> dict[str, Any]:
        """The counts as a JSON-compatible dict (``run --json``'s ``bets``)."""
        return {
            "sent": self.sent,
            "accepted": self.accepted,
            "refused": dict(sorted(self.refused.items())),
            "failed": dict(sorted(self.failed.items())),
        }


class CrowdForwarder:
    """Delivers the crowd's bets from ``log`` (the model's event log) by calling ``send(event)`` from a SimPy
    timeout at the bet's arrival time, made when the log is read (in virtual time its place among events due at the
    same instant is the one a process started at the reading and waiting for that time would take)."""

    def __init__(self, env: simpy.Environment, log: EventLog, send: Callable[[BetSent], None], step: float) -> None:
        self.env = env
        self.log = log
        self.send = send
        self.step = step
        self._seen = 0
        self._watching = False  # bets are scheduled as they are logged (start_on_log), not read from the log

    @property
    def read_to(self) -> int:
        """The log's position (:attr:`~simulator.eventlog.EventLog.end`) read up to: the bets before it are
        scheduled."""
        return self.log.end if self._watching else self._seen

    def start_on_log(self, watchers: list[Callable[[Event], None]]) -> None:
        """Virtual time: schedule each bet's delivery as the model logs it; ``watchers`` is the model's list of
        event observers, to which this forwarder adds its own."""
        env, deliver = self.env, self._deliver
        self._watching = True

        def watch(event: Event) -> None:
            if isinstance(event, BetSent):
                _Arrival(env, max(event.arrives - env._now, 0.0), event, deliver)

        watchers.append(watch)

    def start_polling(self) -> None:
        """Real time: read the log every ``step`` seconds."""
        self.env.process(self._poll())

    def _poll(self) -> Generator[simpy.Event, Any, None]:
        while True:
            self._forward_new(float(self.env.now))
            yield self.env.timeout(self.step)

    def _forward_new(self, _now: float) -> None:
        """Schedule the delivery of each bet logged since the last call: a timeout dated as a process started now
        would date its own (``now + max(arrives - now, 0)``), made in log order, whose callback sends the bet."""
        env = self.env
        new = self.log.since(self._seen)
        self._seen = self.log.end
        now = env.now
        for event in new:
            if isinstance(event, BetSent):
                _Arrival(env, max(event.arrives - now, 0.0), event, self._deliver)

    def _deliver(self, arrival: simpy.Event) -> None:
        assert isinstance(arrival, _Arrival)
        self.send(arrival.bet)


class _Arrival(At):
    """A bet's arrival: scheduled as ``env.timeout(delay)`` schedules its event (NORMAL priority, ``now + delay``),
    calling ``deliver`` with itself when processed."""

    def __init__(
        self, env: simpy.Environment, delay: float, bet: BetSent, deliver: Callable[[simpy.Event], None]
    ) -> None:
        self.bet = bet
        super().__init__(env, delay, NORMAL, deliver)
