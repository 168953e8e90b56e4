"""Seeded streams: reproducible, independent per (subsystem, index), and split from one root seed."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from simulator.events import BetSent, Event, LinkDown, LinkUp, PlayerJoined, PlayerLeft, RoundEnded
from simulator.profile import profile_from_mapping
from simulator.rng import Streams, Subsystem
from tests.simulator.sim_helpers import run_table, shipped


def test_same_seed_subsystem_and_index_give_the_same_draws() -> None:
    a = Streams(42).stream(Subsystem.TOKENS, 3)
    b = Streams(42).stream(Subsystem.TOKENS, 3)
    assert [a.random() for _ in range(1000)] == [b.random() for _ in range(1000)]
    assert [a.normal() for _ in range(700)] == [b.normal() for _ in range(700)]


@pytest.mark.parametrize(
    ("other_subsystem", "other_index", "other_seed"),
    [(Subsystem.TOKENS, 1, 42), (Subsystem.SHAKER, 0, 42), (Subsystem.PLAYER, 0, 42), (Subsystem.TOKENS, 0, 43)],
)
def test_a_different_index_subsystem_or_seed_gives_different_draws(
    other_subsystem: Subsystem, other_index: int, other_seed: int
) -> None:
    base = Streams(42).stream(Subsystem.TOKENS, 0)
    other = Streams(other_seed).stream(other_subsystem, other_index)
    assert [base.random() for _ in range(20)] != [other.random() for _ in range(20)]


def test_streams_are_the_spawned_children_of_the_root_seed_sequence() -> None:
    # The documented split: root SeedSequence(seed) -> child per subsystem -> grandchild per index.
    child = np.random.SeedSequence(9).spawn(len(Subsystem))[Subsystem.PLAYER].spawn(5)[4]
    expected = np.random.Generator(np.random.PCG64(child)).random(1200).tolist()
    stream = Streams(9).stream(Subsystem.PLAYER, 4)
    # 1200 draws cross two buffer refills: the values must not depend on the block size.
    assert [stream.random() for _ in range(1200)] == expected


def test_below_stays_in_range_and_reaches_every_value() -> None:
    stream = Streams(1).stream(Subsystem.FAULTS)
    seen = [stream.below(4) for _ in range(400)]
    assert set(seen) == {0, 1, 2, 3}


def test_exponential_has_the_requested_mean() -> None:
    stream = Streams(3).stream(Subsystem.NETWORK)
    n, mean = 20_000, 2.5
    draws = [stream.exponential(mean) for _ in range(n)]
    assert min(draws) >= 0.0
    # The standard deviation of an exponential equals its mean: 5 standard errors.
    assert abs(sum(draws) / n - mean) < 5 * mean / math.sqrt(n)


def test_a_negative_root_seed_is_refused_with_the_value() -> None:
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        Streams(-1)


def test_adding_a_seat_leaves_the_tokens_and_the_dealer_unchanged() -> None:
    profile = profile_from_mapping(shipped("chaotic"))
    ten = run_table(profile, seed=11, rounds=60, players=10)
    eleven = run_table(profile, seed=11, rounds=60, players=11)
    # Faces, reds, statuses, re-shakes and the times of every verdict.
    assert [e for e in ten if isinstance(e, RoundEnded)] == [e for e in eleven if isinstance(e, RoundEnded)]


def per_player(log: list[Event]) -> dict[str, list[Event]]:
    out: dict[str, list[Event]] = defaultdict(list)
    for event in log:
        if isinstance(event, BetSent | LinkDown | LinkUp | PlayerJoined | PlayerLeft):
            out[event.player].append(event)
    return dict(out)


@pytest.mark.parametrize("seed", [1, 11])
def test_adding_a_seat_leaves_the_other_seats_unchanged(seed: int) -> None:
    profile = profile_from_mapping(shipped("chaotic"))
    ten = per_player(run_table(profile, seed=seed, rounds=60, players=10))
    eleven = per_player(run_table(profile, seed=seed, rounds=60, players=11))
    assert any(player.startswith("p11.") for player in eleven)
    others = {player: events for player, events in eleven.items() if not player.startswith("p11.")}
    # Every player of seats 1-10: the same arrivals, bets (type, stake, times, ids), link changes and departures.
    assert others == ten
