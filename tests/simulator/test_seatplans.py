"""Seat plans: each seat's decisions are a pure function of (seed, seat, opening) and (seed, seat, bet number),
whatever other seats exist and however the bets are taken."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from harness.files import load_profile
from simulator.distributions import Exponential, Fixed, LogNormal, Uniform
from simulator.rng import Streams
from simulator.seatplans import _BETS, _OPENINGS, SeatPlans


def _settings(**changes: object):  # type: ignore[no-untyped-def]
    return dataclasses.replace(load_profile("standard").players, **changes)


def test_a_seats_openings_do_not_depend_on_how_many_seats_there_are() -> None:
    few, many = SeatPlans(Streams(5), _settings(), 2), SeatPlans(Streams(5), _settings(), 9)
    for _ in range(_OPENINGS + 10):  # across a block boundary
        (few_counts, few_leaving), (many_counts, many_leaving) = few.next_opening(), many.next_opening()
        assert few_counts == many_counts[:2] and few_leaving == many_leaving[:2]
        assert len(many_counts) == len(many_leaving) == 9


def test_the_jth_bet_of_a_seat_is_the_same_however_the_bets_are_taken() -> None:
    def bets(sizes: list[int]) -> list[tuple[float, object, float]]:
        rows = SeatPlans(Streams(8), _settings(), 3).bets[1]
        out = []
        for n in sizes:
            first = rows.take(n)
            out += [(rows.thinks[j], rows.choices[j], rows.latencies[j]) for j in range(first, first + n)]
        return out

    total = 2 * _BETS + 7
    one_by_one = bets([1] * total)
    mixed = [3, 2, 1] * (total // 6) + [1] * (total % 6)
    assert sum(mixed) == total
    assert bets(mixed) == one_by_one
    assert bets([2 * _BETS + 7]) == one_by_one  # more than a block at once


def test_seats_draw_independent_bets() -> None:
    plans = SeatPlans(Streams(8), _settings(), 2)
    a, b = plans.bets
    a.take(50)
    b.take(50)
    assert a.thinks[:50] != b.thinks[:50]


@pytest.mark.parametrize(("p_bet", "weights"), [(0.7, (0.6, 0.3, 0.1)), (1.0, (0.0, 1.0)), (0.0, (1.0,))])
def test_bet_counts_follow_p_bet_and_the_bets_per_round_weights(p_bet: float, weights: tuple[float, ...]) -> None:
    plans = SeatPlans(Streams(2), _settings(p_bet=p_bet, bets_per_round=weights), 20)
    counts = [n for _ in range(1000) for n in plans.next_opening()[0]]  # 20,000 seat-openings
    expected = [1.0 - p_bet] + [p_bet * w / sum(weights) for w in weights]
    for n, share in enumerate(expected):
        assert counts.count(n) / len(counts) == pytest.approx(share, abs=0.012)


def test_leaving_follows_the_mean_session_length() -> None:
    plans = SeatPlans(Streams(4), _settings(session_rounds=40.0), 20)
    leaving = [flag for _ in range(1000) for flag in plans.next_opening()[1]]
    assert sum(leaving) / len(leaving) == pytest.approx(1 / 40, abs=0.004)
    never = SeatPlans(Streams(4), _settings(session_rounds=0.0), 5)
    assert not any(flag for _ in range(300) for flag in never.next_opening()[1])


def test_no_seats_means_empty_openings() -> None:
    plans = SeatPlans(Streams(1), _settings(), 0)
    assert plans.next_opening() == ([], [])
    assert plans.bets == []


@pytest.mark.parametrize(
    ("think", "latency"),
    [
        (Fixed(2.0), Uniform(0.01, 0.02)),
        (LogNormal(3.0, 0.4), Exponential(0.05)),
        (Uniform(1.0, 4.0), Fixed(0.03)),
    ],
    ids=["fixed-uniform", "lognormal-exponential", "uniform-fixed"],
)
def test_bets_draw_only_the_variates_their_distributions_use(think: Any, latency: Any) -> None:
    network = dataclasses.replace(_settings().network, latency=latency)
    rows = SeatPlans(Streams(6), _settings(think=think, network=network), 1).bets[0]
    first = rows.take(2 * _BETS + 3)
    thinks = rows.thinks[first:]
    latencies = rows.latencies[first:]
    if isinstance(think, Fixed):
        assert set(thinks) == {2.0}
    if isinstance(latency, Fixed):
        assert set(latencies) == {0.03}
    if isinstance(latency, Uniform):
        assert all(0.01 <= x < 0.02 for x in latencies)
    if isinstance(think, Uniform):
        assert all(1.0 <= x < 4.0 for x in thinks)
    assert all(x > 0 for x in thinks + latencies)
    assert len(set(thinks)) > 100 or isinstance(think, Fixed)
