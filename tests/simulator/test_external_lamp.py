"""A lamp driven from outside (as a game server will drive it): the dealer follows it, not the profile's schedule."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import simpy

from simulator import Lamp, LampState, Script, Table
from simulator.events import BettingClosed, BowlLifted, Paused, Resumed, RoundEnded, RoundOpened, RoundStatus
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


def _one_round(quiet: dict[str, Any], steps: list[tuple[float, LampState]], script: Any = None) -> list[Any]:
    """Round 1 under an external lamp that opens at 0 (deadline 15) and then shows each (time, state) of ``steps``."""
    env = simpy.Environment()
    lamp = Lamp(env)
    table = Table(profile_of(quiet), seed=1, env=env, lamp=lamp, players=0, script=script)

    def server() -> Generator[Any, Any, None]:
        lamp.set(LampState.BETTING_OPEN, 1, deadline=15.0)
        for at, state in steps:
            yield env.timeout(at - env.now)
            lamp.set(state, 1)

    env.process(server())
    env.run(until=200)
    return by_round(table.log)[1]


def test_the_dealer_neither_lifts_nor_reads_while_the_lamp_shows_paused(quiet: dict[str, Any]) -> None:
    # ERR-1: the server closes at 15 and pauses at 15.2, in the dealer's reaction time; it resumes at 40.
    events = _one_round(
        quiet, [(15.0, LampState.BETTING_CLOSED), (15.2, LampState.PAUSED), (40.0, LampState.BETTING_CLOSED)]
    )
    lift = next(e for e in events if isinstance(e, BowlLifted))
    assert lift.t == 40.0  # react 0.5 + lift 1 would have lifted at 16.5
    end = events[-1]
    assert isinstance(end, RoundEnded) and (end.t, end.status) == (40.0, RoundStatus.SETTLED)


def test_a_pause_the_lamp_ends_without_resuming_is_the_tables_err3(quiet: dict[str, Any]) -> None:
    events = _one_round(quiet, [(15.0, LampState.BETTING_CLOSED), (15.2, LampState.PAUSED), (75.2, LampState.VOID)])
    assert not any(isinstance(e, BowlLifted) for e in events)
    assert events[-1] == RoundEnded(75.2, 1, RoundStatus.CANCELLED, "ERR-3", None, None, 0)


def test_the_dealer_waits_out_the_tables_own_problem_after_the_close(quiet: dict[str, Any]) -> None:
    # The table's problem at 15.2 (after the close at 15) is solved 10 s later; the lamp pauses from 15.25 to 25.3.
    script = Script.from_data([{"round": 1, "problem": {"after": 15.2, "resolve": 10.0}}])
    steps = [(15.0, LampState.BETTING_CLOSED), (15.25, LampState.PAUSED), (25.3, LampState.BETTING_CLOSED)]
    events = _one_round(quiet, steps, script)
    assert [type(e) for e in events if isinstance(e, Paused | Resumed)] == [Paused, Resumed]
    lift = next(e for e in events if isinstance(e, BowlLifted))
    assert lift.t == 25.3
