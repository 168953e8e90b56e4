"""Vectorised settlement: nibble counting by hand, reproducibility, and agreement with the exact figures."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from harness.stats.exact import bet_math
from harness.stats.settlement import (
    _count_nibbles,
    fair_red_histogram,
    make_generator,
    pattern_histogram,
    reds_from_patterns,
    settle_histogram,
    simulate,
)
from simulator.bets import BetType


def test_nibble_counts_of_a_known_word() -> None:
    # nibbles 0..F have popcounts 0,1,1,2,1,2,2,3,1,2,2,3,2,3,3,4: one 0, four 1s, six 2s, four 3s, one 4
    words = np.array([0x0123456789ABCDEF], dtype=np.uint64)
    scratch = np.empty(1, dtype=np.uint64), np.empty(1, dtype=np.uint64)
    assert _count_nibbles(words, *scratch) == (4, 6, 4, 1)


def test_nibble_counts_of_all_red_and_all_white_words() -> None:
    words = np.array([0xFFFFFFFFFFFFFFFF, 0, 0xF0F0F0F0F0F0F0F0], dtype=np.uint64)
    scratch = np.empty(3, dtype=np.uint64), np.empty(3, dtype=np.uint64)
    assert _count_nibbles(words, *scratch) == (0, 0, 0, 24)


@pytest.mark.parametrize("rounds", [0, 1, 15, 17, 1_000_003])
def test_histogram_counts_exactly_the_rounds_asked(rounds: int) -> None:
    hist = fair_red_histogram(make_generator(1), rounds, chunk_words=4096)
    assert hist.sum() == rounds
    assert hist.dtype == np.int64


def test_same_seed_same_counts_and_chunking_does_not_matter() -> None:
    a = fair_red_histogram(make_generator(9), 100_000, chunk_words=64)
    b = fair_red_histogram(make_generator(9), 100_000, chunk_words=1 << 16)
    assert a.tolist() == b.tolist()
    assert a.tolist() != fair_red_histogram(make_generator(10), 100_000).tolist()


def test_settling_the_ideal_histogram_gives_the_exact_rtp() -> None:
    # one of each pattern: reds 1,4,6,4,1. Big on 100: 5 wins × 196 + 6 pushes × 100 = 1580 of 1600.
    totals = settle_histogram([1, 4, 6, 4, 1], 100)
    assert totals[BetType.BIG].returned == 1580
    assert totals[BetType.BIG].rtp == F(79, 80)
    assert totals[BetType.FOUR_RED].returned == 1500


def test_settle_refuses_a_bad_stake_and_a_bad_histogram() -> None:
    with pytest.raises(ValueError, match="multiple of 50"):
        settle_histogram([1, 4, 6, 4, 1], 120)
    with pytest.raises(ValueError, match="5 red-count bins"):
        settle_histogram([1, 4, 6, 4], 100)


def test_ten_million_fair_rounds_agree_with_the_exact_rtp_of_every_bet() -> None:
    result = simulate(10_000_000, seed=2024)
    for bet, tot in result.totals.items():
        m = bet_math(bet)
        # 4.5 standard errors: a wrong payout or a wrong bit count moves a bet by far more at this size
        assert abs(tot.z_against(m.rtp, m.sigma)) < 4.5, bet
    assert result.worst_z() < 4.5


def test_two_workers_are_reproducible_and_split_the_rounds() -> None:
    a = simulate(1_000_001, seed=5, workers=2)
    b = simulate(1_000_001, seed=5, workers=2)
    assert a.red_hist == b.red_hist
    assert sum(a.red_hist) == 1_000_001


def test_biased_tokens_move_the_histogram_as_the_exact_maths_predicts() -> None:
    p = F(51, 100)
    result = simulate(1_000_000, seed=3, p_red=[0.51] * 4)
    assert result.worst_z(p) < 4.5
    assert result.totals[BetType.BIG].rtp > 1  # the player has the edge on Big (101.7 %)


def test_pattern_histogram_of_certain_tokens() -> None:
    hist = pattern_histogram(make_generator(0), 1000, [1.0, 0.0, 1.0, 0.0])
    assert hist[0b0101] == 1000
    assert reds_from_patterns(hist).tolist() == [0, 0, 1000, 0, 0]


@pytest.mark.parametrize("bad", [[0.5] * 3, [0.5, 0.5, 0.5, 1.5]])
def test_pattern_histogram_refuses_bad_probabilities(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="4 probabilities"):
        pattern_histogram(make_generator(0), 10, bad)


def test_simulate_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="workers must be >= 1"):
        simulate(10, seed=0, workers=0)
    with pytest.raises(ValueError, match="rounds must be >= 0"):
        simulate(-1, seed=0)


@pytest.mark.parametrize("bet", list(BetType))
def test_settling_the_ideal_histogram_agrees_with_the_enumeration_for_every_bet(bet: BetType) -> None:
    # two independent routes to one number: integer settlement of one round per pattern, and the fractions
    assert settle_histogram([1, 4, 6, 4, 1], 50)[bet].rtp == bet_math(bet).rtp
