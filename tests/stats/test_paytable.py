"""The harness paytable against RULES.md PAY-1..PAY-10, with returns worked out by hand for a 100 stake."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.judge.paytable import outcome, returned
from simulator.bets import BetType

# (bet, reds) -> minor units returned on a 100 stake: stake + 100 × odds on a win (14 → 1500, 2.8 → 380,
# 1.5 → 250, 6.5 → 750, 0.96 → 196), the stake on a push, 0 on a loss.
HAND = {
    BetType.FOUR_RED: (0, 0, 0, 0, 1500),
    BetType.THREE_RED: (0, 0, 0, 380, 0),
    BetType.TWO_RED: (0, 0, 250, 0, 0),
    BetType.ONE_RED: (0, 380, 0, 0, 0),
    BetType.FOUR_WHITE: (1500, 0, 0, 0, 0),
    BetType.FOUR_OF_A_KIND: (750, 0, 0, 0, 750),
    BetType.ODD: (0, 196, 0, 196, 0),
    BetType.EVEN: (196, 0, 196, 0, 196),
    BetType.BIG: (0, 0, 100, 196, 196),
    BetType.SMALL: (196, 196, 100, 0, 0),
}


@pytest.mark.parametrize("bet", list(BetType))
@pytest.mark.parametrize("reds", range(5))
def test_returned_on_a_100_stake_matches_the_hand_table(bet: BetType, reds: int) -> None:
    assert returned(bet, reds, 100) == HAND[bet][reds]


def test_big_and_small_push_on_two_reds_and_nothing_else_pushes() -> None:
    pushes = {(b, k) for b in BetType for k in range(5) if outcome(b, k) == "push"}
    assert pushes == {(BetType.BIG, 2), (BetType.SMALL, 2)}


def test_smallest_stake_of_50_pays_whole_minor_units() -> None:
    # 50 × 2.8 = 140, 50 × 0.96 = 48, 50 × 1.5 = 75, 50 × 6.5 = 325
    assert returned(BetType.THREE_RED, 3, 50) == 190
    assert returned(BetType.ODD, 1, 50) == 98
    assert returned(BetType.TWO_RED, 2, 50) == 125
    assert returned(BetType.FOUR_OF_A_KIND, 4, 50) == 375


@pytest.mark.parametrize("stake", [75, 0, -50, 1, 149])
def test_stake_not_a_positive_multiple_of_50_is_refused_and_named(stake: int) -> None:
    with pytest.raises(ValueError, match=f"multiple of 50 minor units, got {stake}"):
        returned(BetType.BIG, 3, stake)


def test_float_stake_is_refused() -> None:
    with pytest.raises(ValueError, match="integer number of minor units"):
        returned(BetType.BIG, 3, 100.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("reds", [-1, 5])
def test_red_count_outside_0_to_4_is_refused(reds: int) -> None:
    with pytest.raises(ValueError, match=f"reds must be 0..4, got {reds}"):
        returned(BetType.ODD, reds, 100)


@settings(max_examples=60)
@given(st.sampled_from(list(BetType)), st.integers(0, 4), st.integers(1, 10_000))
def test_returns_scale_exactly_with_the_stake(bet: BetType, reds: int, units: int) -> None:
    assert returned(bet, reds, 50 * units) == units * returned(bet, reds, 50)
