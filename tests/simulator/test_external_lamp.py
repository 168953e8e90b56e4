"""A lamp driven from outside (as a game server will drive it): the dealer follows it, not the profile's schedule."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import simpy

from simulator import Lamp, LampState, Table
from simulator.events import BettingClosed, RoundEnded, RoundOpened, RoundStatus
from tests.simulator.sim_helpers import by_round, kinds, profile_of


def test_the_dealer_lifts_only_after_the_external_lamp_closes_betting(quiet: dict[str, Any]) -> None:
    env = simpy.Environment()
    lamp = Lamp(env)
    table = Table(profile_of(quiet), seed=1, env=env, lamp=lamp, players=0)

    def server() -> Generator[Any, Any, None]:
        # Betting stays open 30 s (not the profile's 15), then 20 s between rounds.
        for round_no, opens in ((1, 0.0), (2, 50.0)):
            yield env.timeout(opens - env.now)
            lamp.set(LampState.BETTING_OPEN, round_no, deadline=opens + 30.0)
            yield env.timeout(30.0)
            lamp.set(LampState.BETTING_CLOSED)

    env.process(server())
    env.run(until=100)
    rounds = by_round(table.log)
    assert set(rounds) == {1, 2}
    first = rounds[1]
    assert first[0] == RoundOpened(0.0, 1, 30.0)
    assert [e for e in first if isinstance(e, BettingClosed)] == [BettingClosed(30.0, 1)]
    # Quiet timings: shake over at 5, then nothing until the lamp closes at 30; react 0.5 + lift 1.
    assert kinds(first)[-4:] == ["betting_closed", "bowl_lifted", "revealed", "round_ended"]
    end = first[-1]
    assert isinstance(end, RoundEnded) and (end.t, end.status) == (31.5, RoundStatus.SETTLED)
    second_end = rounds[2][-1]
    assert isinstance(second_end, RoundEnded) and second_end.t == 81.5
    assert table.log.of(RoundOpened) == [RoundOpened(0.0, 1, 30.0), RoundOpened(50.0, 2, 80.0)]
