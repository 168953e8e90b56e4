"""PAY-1..PAY-10: every bet type against every red count, amounts derived by hand from RULES.md."""

from __future__ import annotations

import pytest

from gameserver.bets import BetResult, BetType, reds_of, settle

W, L, P = BetResult.WIN, BetResult.LOSE, BetResult.PUSH

# stake 1000 minor units; returned = stake + stake × odds, written out by hand.
CASES = [
    # bet type, reds, result, returned
    ("four_red", 4, W, 15_000), ("four_red", 3, L, 0), ("four_red", 0, L, 0),
    ("three_red", 3, W, 3_800), ("three_red", 4, L, 0), ("three_red", 2, L, 0),
    ("two_red", 2, W, 2_500), ("two_red", 1, L, 0), ("two_red", 3, L, 0),
    ("one_red", 1, W, 3_800), ("one_red", 0, L, 0), ("one_red", 2, L, 0),
    ("four_white", 0, W, 15_000), ("four_white", 1, L, 0), ("four_white", 4, L, 0),
    ("four_of_a_kind", 0, W, 7_500), ("four_of_a_kind", 4, W, 7_500), ("four_of_a_kind", 2, L, 0),
    ("four_of_a_kind", 1, L, 0), ("four_of_a_kind", 3, L, 0),
    ("odd", 1, W, 1_960), ("odd", 3, W, 1_960), ("odd", 0, L, 0), ("odd", 2, L, 0), ("odd", 4, L, 0),
    ("even", 0, W, 1_960), ("even", 2, W, 1_960), ("even", 4, W, 1_960), ("even", 1, L, 0), ("even", 3, L, 0),
    ("big", 3, W, 1_960), ("big", 4, W, 1_960), ("big", 2, P, 1_000), ("big", 1, L, 0), ("big", 0, L, 0),
    ("small", 0, W, 1_960), ("small", 1, W, 1_960), ("small", 2, P, 1_000), ("small", 3, L, 0),
    ("small", 4, L, 0),
]  # fmt: skip


@pytest.mark.parametrize(("bet_type", "reds", "result", "returned"), CASES)
def test_settle_matches_rules(bet_type: str, reds: int, result: BetResult, returned: int) -> None:
    assert settle(BetType(bet_type), 1000, reds) == (result, returned)


def test_every_bet_type_is_covered() -> None:
    assert {c[0] for c in CASES} == {t.value for t in BetType}


def test_smallest_stake_quantum_pays_whole_units() -> None:
    # 50 × 14/5 = 140, 50 × 3/2 = 75, 50 × 13/2 = 325, 50 × 24/25 = 48
    assert settle(BetType.THREE_RED, 50, 3) == (W, 190)
    assert settle(BetType.TWO_RED, 50, 2) == (W, 125)
    assert settle(BetType.FOUR_OF_A_KIND, 50, 4) == (W, 375)
    assert settle(BetType.BIG, 50, 4) == (W, 98)


def test_fractional_payout_is_refused() -> None:
    with pytest.raises(ValueError, match="multiples of 50"):
        settle(BetType.ODD, 10, 1)


@pytest.mark.parametrize("faces", ["RRR", "RRRRR", "RXRW", "rrww", "RSWR"])
def test_reds_of_rejects_bad_faces(faces: str) -> None:
    with pytest.raises(ValueError, match="R/W"):
        reds_of(faces)


def test_reds_of_counts_red() -> None:
    assert [reds_of(f) for f in ("WWWW", "RWWW", "WRWR", "RRWR", "RRRR")] == [0, 1, 2, 3, 4]
