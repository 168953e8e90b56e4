"""Players at their seats, and each player's network link.

A seat is taken by a sequence of players (``p03.1``, ``p03.2``, ... for seat 3): each stays a random number of
rounds (``players.session_rounds``), then leaves; the seat stays empty for ``players.arrival_gap`` and the next
player sits down at the first opening after that. In each round a seated player bets with probability ``p_bet``,
placing 1..n bets, each after a think time counted from the opening (or from the previous bet). A bet is sent only
if the player's link is up at that moment; it reaches the server after the link's latency. Links go down and up on
their own (``network.up`` / ``network.down``), independently of the rounds, which is how disconnections during a
round (DC-1..3, NET-1) arise. A player who decides to leave sends that round's bets, then leaves.

Each seat draws from its own two streams (bets, link), always in the same order, so adding a seat changes nothing
for the others. One :class:`Crowd` process plays all seats: at each opening it draws every seat's bets for the round
and then sends them in time order, one SimPy event per bet.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Generator, Sequence
from itertools import accumulate
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from simulator.events import BetSent, LinkDown, LinkUp, PlayerJoined, PlayerLeft
from simulator.rng import Stream, Subsystem

if TYPE_CHECKING:
    from simulator.table import Table

Proc = Generator[Any, Any, Any]


class WeightedChoice:
    """Pick among fixed options with fixed weights using one uniform draw."""

    __slots__ = ("_cum", "_options", "_total")

    def __init__(self, options: Sequence[Any], weights: Sequence[float]) -> None:
        # The last option is repeated so that a draw rounding up to the total still lands on it.
        self._options = (*options, options[-1])
        self._cum = list(accumulate(weights))
        self._total = self._cum[-1]

    def pick(self, stream: Stream) -> Any:
        return self._options[bisect_right(self._cum, stream.random() * self._total)]

    def bind(self, stream: Stream) -> Callable[[], Any]:
        """A zero-argument picker on ``stream`` (same draws as :meth:`pick`)."""
        options, cum, total = self.table()
        us, u, _, _ = stream.buffers()
        return lambda: options[bisect_right(cum, (us.pop() if us else u()) * total)]

    def table(self) -> tuple[tuple[Any, ...], list[float], float]:
        """``(options, cum, total)``: the pick for a uniform ``x`` is ``options[bisect_right(cum, x * total)]``,
        for callers that inline the pick in a hot loop."""
        return self._options, self._cum, self._total


class Seat:
    """One seat: who sits there, its bound samplers, how many bets were sent, and whether the link is up."""

    __slots__ = (
        "bets",
        "draw",
        "free_at",
        "index",
        "latency",
        "link_up",
        "net_stream",
        "player",
        "stream",
        "think",
        "uniforms",
        "visits",
    )

    def __init__(self, crowd: Crowd, table: Table, index: int) -> None:
        self.index = index
        self.stream = s = table.streams.stream(Subsystem.PLAYER, index)
        self.net_stream = table.streams.stream(Subsystem.NETWORK, index)
        settings = crowd.settings
        self.think = settings.think.bind(s)
        self.latency = settings.network.latency.bind(s)
        # The seat's next uniform, inlined in the crowd's loop: ``uniforms.pop() if uniforms else draw()``.
        self.uniforms, self.draw, _, _ = s.buffers()
        self.visits = 0
        self.bets = 0
        self.player: str | None = None
        self.free_at = 0.0  # an empty seat is taken at the first opening at or after this time
        self.link_up = True


# One planned action of a round: (time, seat, (bet, stake) or None for leaving, network latency).
_Planned = tuple[float, Seat, tuple[Any, int] | None, float]
_at = itemgetter(0)


class Crowd:
    """All seats of a table, played by one process (plus one link process per seat)."""

    def __init__(self, table: Table, count: int) -> None:
        self.table = table
        settings = table.profile.players
        self.settings = settings
        # 0 bets (no bet this round) is folded into the same single draw as the number of bets.
        weights = settings.bets_per_round
        per_round = [1.0 - settings.p_bet] + [settings.p_bet * w / sum(weights) for w in weights]
        self.n_bets = WeightedChoice(range(len(per_round)), per_round)
        # Bet type and stake are independent: one draw picks the pair from the product distribution.
        pairs = [(b, s, wb * ws) for b, wb in settings.bet_weights for s, ws in settings.stakes]
        self.bet_and_stake = WeightedChoice([(b, s) for b, s, _ in pairs], [w for _, _, w in pairs])
        self.leave_p = 1.0 / settings.session_rounds if settings.session_rounds > 0 else 0.0
        self.seats = [Seat(self, table, i) for i in range(count)]
        for seat in self.seats:
            table.env.process(self.link(seat))
        table.env.process(self.run())

    def run(self) -> Proc:
        """At each opening, draw every seat's bets for the round and hand them to a sender process of their own,
        so a late bet of one round never makes anyone miss the next opening."""
        table, env = self.table, self.table.env
        lamp, emit, seats, leave_p = table.lamp, table.emit, self.seats, self.leave_p
        process = env.process
        # The number of bets and each (bet, stake) pick are inlined (same draws as the bound pickers).
        n_options, n_cum, n_total = self.n_bets.table()
        bet_options, bet_cum, bet_total = self.bet_and_stake.table()
        while True:
            signal = yield lamp.opened
            now = env.now
            plan: list[_Planned] = []
            append = plan.append
            for seat in seats:
                if seat.player is None:
                    if now < seat.free_at:
                        continue
                    seat.visits += 1
                    seat.bets = 0
                    seat.player = f"p{seat.index + 1:02d}.{seat.visits}"
                    emit(PlayerJoined(now, seat.player, seat.index))
                elif seat.free_at < 0.0:
                    continue  # leaving once its last round's bets are sent
                us, u = seat.uniforms, seat.draw
                n = n_options[bisect_right(n_cum, (us.pop() if us else u()) * n_total)]
                at = now
                if n:
                    think, latency = seat.think, seat.latency
                    for _ in range(n):
                        at += think()
                        choice = bet_options[bisect_right(bet_cum, (us.pop() if us else u()) * bet_total)]
                        append((at, seat, choice, latency()))
                if (us.pop() if us else u()) < leave_p:
                    seat.free_at = -1.0
                    append((at, seat, None, 0.0))  # leaves right after its own last bet
            if plan:
                # Time order; equal times keep seat order, then a seat's own order (the sort is stable), and the
                # keys are plain floats, which list.sort compares without tuple comparisons.
                plan.sort(key=_at)
                process(self._send(signal.round, plan))

    def _send(self, round_no: int, plan: list[_Planned]) -> Proc:
        """Play one round's plan in time order: send each bet (lost if its player's link is down) and let each
        leaving player go right after their own last bet."""
        emit = self.table.emit
        timeout = self.table.env.timeout
        now = self.table.env.now
        for at, seat, choice, delay in plan:
            if at > now:
                yield timeout(at - now)
                now = at
            player = seat.player
            if player is None:
                continue
            if choice is None:
                emit(PlayerLeft(at, player, seat.index))
                seat.player = None
                seat.free_at = at + self.settings.arrival_gap.sample(seat.stream)
            elif seat.link_up:
                seat.bets = n = seat.bets + 1
                emit(BetSent(at, round_no, player, f"{player}-{n}", choice[0], choice[1], at + delay))

    def link(self, seat: Seat) -> Proc:
        """The link of whoever sits at ``seat``: up for ``network.up``, down for ``network.down``, forever."""
        env, s, net = self.table.env, seat.net_stream, self.settings.network
        emit = self.table.emit
        while True:
            yield env.timeout(net.up.sample(s))
            seat.link_up = False
            if seat.player is not None:
                emit(LinkDown(env.now, seat.player))
            yield env.timeout(net.down.sample(s))
            seat.link_up = True
            if seat.player is not None:
                emit(LinkUp(env.now, seat.player))
