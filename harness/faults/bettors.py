"""The players' workload during a fault run: each player bets ``bets_per_round`` times at random moments of the
betting window, through the route fault injection gives its link, and every attempt lands in the history.

Guarantees: the draws are the players' own seeded streams (``{seed}/player/{id}``), so a seed replays the same
bets; each attempt is recorded once as invoked and once with what the player saw: ``ok`` (accepted), ``fail``
(refused, or never sent: the link is down or the client is not connected) or ``info`` (the outcome is unknown: no
reply, or the connection reset before it).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from typing import Any

import simpy

from harness.bench.adapters.base import GameServerAdapter
from harness.errors import AdapterError
from harness.faults.apply import Applier, Sessions
from harness.faults.links import PlayerLinks, RouteMode
from harness.faults.schedule_model import Schedule
from harness.judge.history import History
from harness.records import OpFunction, OpType
from simulator.bets import BetType

BET_TYPES = tuple(BetType)


class Bettors:
    """The schedule's players, betting on ``adapter`` through ``links`` (see the module doc)."""

    def __init__(
        self,
        env: simpy.Environment,
        adapter: GameServerAdapter,
        schedule: Schedule,
        seed: int,
        betting_s: float,
        history: History,
        links: PlayerLinks,
        sessions: Sessions,
        applier: Applier,
        now: Callable[[], float],
    ) -> None:
        self.env = env
        self.adapter = adapter
        self.schedule = schedule
        self.betting_s = betting_s
        self.history = history
        self.links = links
        self.sessions = sessions
        self.applier = applier
        self._now = now
        self.rngs = {p: random.Random(f"{seed}/player/{p}") for p in schedule.player_ids}
        self.bet_counter = 0

    @property
    def now(self) -> float:
        return self._now()

    def round_bets(self, player: str) -> Generator[simpy.Event, Any, None]:
        """One round of ``player``'s bets, spread over the first 90 % of the betting window (a SimPy process)."""
        rng = self.rngs[player]
        window = self.betting_s * 0.9
        offsets = sorted(rng.uniform(0.0, window) for _ in range(self.schedule.bets_per_round))
        start = self.now
        for offset in offsets:
            yield self.env.timeout(max(start + offset - self.now, 0.0))
            yield from self._bet(player, rng)

    def _bet(self, player: str, rng: random.Random) -> Generator[simpy.Event, Any, None]:
        self.bet_counter += 1
        cid = f"{player}-{self.bet_counter}"
        bet_type, stake = str(rng.choice(BET_TYPES)), rng.choice(self.schedule.stakes)
        fields: dict[str, Any] = {"client_bet_id": cid, "bet_type": bet_type, "stake": stake}
        self.history.add(self.now, player, OpType.INVOKE, OpFunction.BET, **fields)
        route = self.links.route(player)
        if route.mode == RouteMode.DOWN:
            self.history.add(self.now, player, OpType.FAIL, OpFunction.BET, detail="disconnected: not sent", **fields)
            return
        if route.delay > 0 and player not in self.applier.proxies:  # a proxied link delays the bytes itself
            yield self.env.timeout(route.delay)
        if route.mode == RouteMode.BLACKHOLE:
            self.history.add(self.now, player, OpType.INFO, OpFunction.BET, detail="blackhole: no reply", **fields)
            return
        self.sessions.connect(player)
        reset = route.mode == RouteMode.RESET
        proxied_reset = reset and player in self.applier.proxies  # the proxy cuts the answer itself
        try:
            lose = reset and not proxied_reset
            reply = self.adapter.place_bet(player, cid, bet_type, stake, lose_reply=lose)
        except AdapterError as exc:
            if exc.code == "not_connected":  # refused by the client before anything was sent
                self.sessions.forget(player)
                not_sent = "not connected: not sent"
                self.history.add(self.now, player, OpType.FAIL, OpFunction.BET, detail=not_sent, **fields)
            else:
                self.history.add(self.now, player, OpType.INFO, OpFunction.BET, detail=exc.code, **fields)
            return
        if reset:
            self.sessions.forget(player)
            lost = "connection reset before the reply"
            self.history.add(self.now, player, OpType.INFO, OpFunction.BET, detail=lost, **fields)
        elif reply.accepted:
            ids = {"round_id": reply.round_id, "bet_id": reply.bet_id}
            self.history.add(self.now, player, OpType.OK, OpFunction.BET, **ids, **fields)
        else:
            self.history.add(self.now, player, OpType.FAIL, OpFunction.BET, detail=reply.code, **fields)
