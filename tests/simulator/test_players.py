"""Players: arrivals, bets of all ten types with stakes from the profile, links that drop and come back."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest

from simulator.bets import BetType
from simulator.events import BetSent, Event, LinkDown, LinkUp, PlayerJoined, PlayerLeft, RoundOpened
from simulator.profile import profile_from_mapping
from tests.simulator.sim_helpers import profile_of, run_table, shipped


def standard_run(rounds: int = 400, seed: int = 2) -> list[Event]:
    return run_table(profile_from_mapping(shipped("standard")), seed=seed, rounds=rounds, players=10)


def test_bets_cover_all_ten_types_with_profile_stakes_in_whole_quanta() -> None:
    bets = [e for e in standard_run() if isinstance(e, BetSent)]
    assert {b.bet for b in bets} == set(BetType)
    assert {b.stake for b in bets} <= {100, 500, 1000, 5000, 10000}
    assert all(b.stake % 50 == 0 and isinstance(b.stake, int) for b in bets)
    assert len({b.bet_id for b in bets}) == len(bets)
    assert all(b.arrives >= b.t for b in bets)


def test_a_player_bets_only_while_seated_and_while_the_link_is_up() -> None:
    seated: set[str] = set()
    down: set[str] = set()
    for event in standard_run(rounds=300, seed=4):
        if isinstance(event, PlayerJoined):
            assert event.player.startswith(f"p{event.seat + 1:02d}.")
            seated.add(event.player)
        elif isinstance(event, PlayerLeft):
            seated.remove(event.player)
            down.discard(event.player)
        elif isinstance(event, LinkDown):
            assert event.player in seated
            down.add(event.player)
        elif isinstance(event, LinkUp):
            down.discard(event.player)
        elif isinstance(event, BetSent):
            assert event.player in seated and event.player not in down
            assert event.bet_id.startswith(f"{event.player}-")


def test_players_come_and_go() -> None:
    events = standard_run(rounds=400, seed=6)
    joined = Counter(e.seat for e in events if isinstance(e, PlayerJoined))
    # session_rounds 40 over 400 rounds: every seat sees several players.
    assert set(joined) == set(range(10))
    assert all(count >= 2 for count in joined.values())
    assert any(isinstance(e, LinkDown) for e in events)


def test_every_seated_player_with_p_bet_1_bets_in_every_round(standard_data: dict[str, Any]) -> None:
    # One seat, always bets once, thinks 25 s; the link never drops; nothing goes wrong at the table.
    fixed = {"place": 1.0, "shake": 4.0, "react": 0.5, "lift": 1.0, "rearrange": 3.0, "reassemble": 8.0}
    standard_data["dealer"]["timing"].update(fixed)
    profile = profile_of(
        standard_data,
        tokens__p_standing=0.0,
        tokens__p_fall=0.0,
        shaker__p_drop_bowl=0.0,
        shaker__p_drop_plate=0.0,
        shaker__p_touch=0.0,
        dealer__mistakes__forget_shake=0.0,
        dealer__mistakes__early_lift=0.0,
        problems__rate=0.0,
        players__p_bet=1.0,
        players__bets_per_round={1: 1},
        players__think=25.0,
        players__session_rounds=0,
        players__network__up=1e9,
    )
    events = run_table(profile, seed=3, rounds=5, players=1)
    opened = {e.round: e.t for e in events if isinstance(e, RoundOpened)}
    # Rounds open every 20.5 s (15 betting + 0.5 react + 1 lift + 4 gap); the bet is sent 25 s after each
    # opening, i.e. after the next round has opened: the player is late, but still bets in every round.
    assert opened == {1: 0.0, 2: 20.5, 3: 41.0, 4: 61.5, 5: 82.0}
    sent = {e.round: e.t for e in events if isinstance(e, BetSent)}
    assert sent == {r: t + 25.0 for r, t in opened.items() if t + 25.0 <= max(e.t for e in events)}
    assert set(sent) >= {1, 2, 3, 4}


def assert_binomial(successes: int, trials: int, p: float, what: str) -> None:
    sd = math.sqrt(trials * p * (1 - p))
    assert abs(successes - trials * p) < 5 * sd, f"{what}: {successes}/{trials}, expected {p:.4f}"


@pytest.fixture(scope="module")
def steady_bets() -> list[BetSent]:
    """Standard profile, 10 players who never leave and whose links never drop, 1500 rounds."""
    profile = profile_of(shipped("standard"), players__session_rounds=0, players__network__up=1e9)
    events = run_table(profile, seed=8, rounds=1500, players=10)
    return [e for e in events if isinstance(e, BetSent) and e.round < 1500]


def test_bet_types_and_stakes_follow_their_weights(steady_bets: list[BetSent]) -> None:
    n = len(steady_bets)
    weights = {"big": 25, "small": 25, "odd": 12, "even": 12, "two_red": 6, "three_red": 5, "one_red": 5}
    weights.update({"four_of_a_kind": 4, "four_red": 3, "four_white": 3})  # total 100
    for bet, weight in weights.items():
        assert_binomial(sum(b.bet == bet for b in steady_bets), n, weight / 100, bet)
    for stake, weight in {100: 40, 500: 30, 1000: 20, 5000: 8, 10000: 2}.items():  # total 100
        assert_binomial(sum(b.stake == stake for b in steady_bets), n, weight / 100, f"stake {stake}")


def test_players_bet_with_p_bet_and_the_bets_per_round_weights(steady_bets: list[BetSent]) -> None:
    per_player_round = Counter((b.player, b.round) for b in steady_bets)
    seated = 10 * 1499  # every seat is taken from round 1 and nobody leaves
    assert_binomial(len(per_player_round), seated, 0.7, "rounds with a bet")
    histogram = Counter(per_player_round.values())
    for count, p in {1: 0.6, 2: 0.3, 3: 0.1}.items():
        assert_binomial(histogram[count], len(per_player_round), p, f"{count} bets in a round")


def test_latency_has_the_profile_median(steady_bets: list[BetSent]) -> None:
    # Log-normal with median 0.06 s: half the bets arrive within 0.06 s.
    assert_binomial(sum(b.arrives - b.t < 0.06 for b in steady_bets), len(steady_bets), 0.5, "latency < median")
