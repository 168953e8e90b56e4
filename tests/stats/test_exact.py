"""Exact mathematics against figures derived by hand (CERTIFICATION.md, RULES.md RTP-1)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from harness.stats.exact import (
    all_bets,
    bet_math,
    bias_curve,
    break_even_p_red,
    exact_decimal,
    max_rtp,
    pattern_probabilities,
    red_count_probabilities,
)
from simulator.bets import BetType

# CERTIFICATION.md: 15/16 for 4-red, 4-white, 2-2 and four-of-a-kind; 19/20 for 3-red and 1-red; 49/50 for
# odd and even; 79/80 for big and small.
HAND_RTP = {
    BetType.FOUR_RED: F(15, 16),
    BetType.FOUR_WHITE: F(15, 16),
    BetType.TWO_RED: F(15, 16),
    BetType.FOUR_OF_A_KIND: F(15, 16),
    BetType.THREE_RED: F(19, 20),
    BetType.ONE_RED: F(19, 20),
    BetType.ODD: F(49, 50),
    BetType.EVEN: F(49, 50),
    BetType.BIG: F(79, 80),
    BetType.SMALL: F(79, 80),
}


def test_fair_red_counts_are_1_4_6_4_1_over_16() -> None:
    assert red_count_probabilities() == (F(1, 16), F(4, 16), F(6, 16), F(4, 16), F(1, 16))
    assert pattern_probabilities() == (F(1, 16),) * 16


@pytest.mark.parametrize("bet", list(BetType))
def test_per_bet_rtp_matches_certification(bet: BetType) -> None:
    assert bet_math(bet).rtp == HAND_RTP[bet]


def test_rtp_1_maximum_is_98_75_percent_on_big_and_small() -> None:
    best, bets = max_rtp()
    assert best == F(5, 16) * F(196, 100) + F(6, 16) == F(9875, 10000)
    assert set(bets) == {BetType.BIG, BetType.SMALL}


def test_big_counted_per_decided_bet_is_98_percent() -> None:
    # 5/16 × 1.96 over the 10/16 of bets that are decided
    assert bet_math(BetType.BIG).rtp_decided == F(98, 100)
    assert bet_math(BetType.BIG).push == F(6, 16)


def test_four_red_variance_and_sigma_by_hand() -> None:
    # net +14 w.p. 1/16, −1 w.p. 15/16: mean −1/16, E[X²] = (196 + 15)/16, var = 211/16 − 1/256 = 3375/256
    m = bet_math(BetType.FOUR_RED)
    assert (m.win, m.push, m.lose) == (F(1, 16), F(0), F(15, 16))
    assert m.variance == F(3375, 256)
    assert m.sigma == pytest.approx(3375**0.5 / 16)


def test_big_variance_by_hand() -> None:
    # net +0.96 w.p. 5/16, 0 w.p. 6/16, −1 w.p. 5/16: mean −1/80, E[X²] = 5/16 × 1.9216, var = 0.6005 − 1/6400
    assert bet_math(BetType.BIG).variance == F(5, 16) * F(19216, 10000) - F(1, 6400) == F(19211, 32000)


def test_volatility_index_is_z_times_sigma() -> None:
    m = bet_math(BetType.ODD)  # σ = 0.98 (net ±0.96/−1, each 1/2: E[X²] = 0.9608, mean −0.02)
    assert m.sigma == pytest.approx(0.98)
    assert m.volatility_index(95) == pytest.approx(1.96 * 0.98, rel=1e-4)
    assert m.volatility_index(99) == pytest.approx(2.5758 * 0.98, rel=1e-4)


def test_verifying_14_to_1_bets_to_a_tenth_of_a_point_takes_about_1e8_rounds() -> None:
    # (2.5758 × 3.6309 / 0.001)² ≈ 8.75e7
    n = bet_math(BetType.FOUR_RED).rounds_to_verify(F(1, 1000), 99)
    assert 8.7e7 < n < 8.8e7


def test_rounds_to_verify_refuses_a_zero_tolerance() -> None:
    with pytest.raises(ValueError, match="tolerance must be > 0"):
        bet_math(BetType.BIG).rounds_to_verify(0)


def test_biased_tokens_give_big_the_edge() -> None:
    # P(red) = p: Big returns 1.96 (4p³q + p⁴) + 6p²q²; at 0.505 about 100.2 %, at 0.51 about 101.7 %.
    for p, expected in ((F(505, 1000), 1.0022), (F(51, 100), 1.0169)):
        q = 1 - p
        by_hand = F(196, 100) * (4 * p**3 * q + p**4) + 6 * p**2 * q**2
        assert bet_math(BetType.BIG, p).rtp == by_hand
        assert float(by_hand) == pytest.approx(expected, abs=1e-4)


def test_break_even_bias_for_big_lies_between_fair_and_half_a_point() -> None:
    p = break_even_p_red(BetType.BIG)
    assert 0.5 < p < 0.505
    assert float(bet_math(BetType.BIG, F(p)).rtp) == pytest.approx(1.0, abs=1e-9)


def test_bias_curve_is_mirror_symmetric_between_big_and_small() -> None:
    curve = dict(bias_curve([F(49, 100), F(51, 100)]))
    assert curve[F(49, 100)][BetType.SMALL] == curve[F(51, 100)][BetType.BIG]


def test_per_token_probabilities_one_token_always_red() -> None:
    probs = red_count_probabilities([F(1), F(1, 2), F(1, 2), F(1, 2)])
    assert probs == (F(0), F(1, 8), F(3, 8), F(3, 8), F(1, 8))


@pytest.mark.parametrize("bad", [F(-1, 10), F(11, 10)])
def test_probability_outside_0_1_is_refused(bad: F) -> None:
    with pytest.raises(ValueError, match=r"P\(red\) must be within \[0, 1\]"):
        red_count_probabilities(bad)


def test_per_token_list_must_have_four_entries() -> None:
    with pytest.raises(ValueError, match="4 values"):
        red_count_probabilities([F(1, 2)] * 3)


def test_win_push_lose_sum_to_one_for_every_bet() -> None:
    assert all(m.win + m.push + m.lose == 1 for m in all_bets(F(3, 7)))


def test_exact_decimal_is_exact_when_the_fraction_terminates() -> None:
    assert exact_decimal(F(79, 80)) == "0.9875"
    assert exact_decimal(F(14)) == "14"
    assert exact_decimal(F(1, 3), 5) == "0.33333…"
