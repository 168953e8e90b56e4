"""Measured RTP from bet records, worked out by hand."""

from __future__ import annotations

import math
from fractions import Fraction as F

import pytest

from harness.stats.measured import measured_rtp
from harness.stats.readers import BetRecord
from simulator.bets import BetType


def bet(bet_type: BetType, wagered: int, result: str, returned: int, n: int = 0) -> BetRecord:
    status = {"refund": "void", "pending": "in_progress"}.get(result, "settled")
    return BetRecord(f"b{n}", f"r{n}", "p1", bet_type, wagered, result, returned, status, None, None)


def test_big_rtp_counts_pushes_and_leaves_refunds_and_pending_out() -> None:
    records = [
        bet(BetType.BIG, 100, "win", 196),
        bet(BetType.BIG, 100, "win", 196),
        bet(BetType.BIG, 100, "push", 100),
        bet(BetType.BIG, 100, "lose", 0),
        bet(BetType.BIG, 300, "refund", 300),
        bet(BetType.BIG, 100, "pending", 0),
    ]
    big, pooled = measured_rtp(records)
    assert big.bet is BetType.BIG and pooled.bet is None
    # (196 + 196 + 100 + 0) / 400 decided minor units
    assert big.rtp == F(492, 400)
    assert (big.bets, big.wagered, big.returned) == (4, 400, 492)
    assert (big.refunded_bets, big.refunded, big.pending_bets) == (1, 300, 1)
    assert big.theoretical == F(79, 80)


def test_standard_error_and_interval_by_hand() -> None:
    # Odd, four bets of 100: two wins (196), two losses. RTP = 392/400 = 0.98.
    # residuals 196 − 98 = 98 (twice), 0 − 98 = −98 (twice): √(4 × 98²) / 400 = 196/400 = 0.49
    records = [bet(BetType.ODD, 100, r, x) for r, x in (("win", 196), ("win", 196), ("lose", 0), ("lose", 0))]
    odd = measured_rtp(records, confidence=95)[0]
    assert odd.std_error == pytest.approx(0.49)
    low, high = odd.interval or (math.nan, math.nan)
    assert low == pytest.approx(0.98 - 1.96 * 0.49, abs=1e-3)
    assert high == pytest.approx(0.98 + 1.96 * 0.49, abs=1e-3)
    assert odd.consistent is True


def test_pooled_theoretical_is_stake_weighted() -> None:
    # 100 on four_red (15/16) and 300 on big (79/80): (100 × 15/16 + 300 × 79/80) / 400
    records = [bet(BetType.FOUR_RED, 100, "lose", 0), bet(BetType.BIG, 300, "lose", 0)]
    pooled = measured_rtp(records)[-1]
    assert pooled.theoretical == (100 * F(15, 16) + 300 * F(79, 80)) / 400
    assert pooled.rtp == 0


def test_only_refunds_gives_no_rtp() -> None:
    line = measured_rtp([bet(BetType.EVEN, 100, "refund", 100)])[0]
    assert line.rtp is None and line.interval is None and line.consistent is None
    assert line.theoretical == F(49, 50)


def test_unknown_confidence_is_refused() -> None:
    with pytest.raises(KeyError):
        measured_rtp([], confidence=80)
