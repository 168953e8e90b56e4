"""Summaries: the chi-square closed form against scipy, nearest-rank percentiles, incident counting."""

from __future__ import annotations

import math

import pytest
import scipy.stats

from simulator.bets import BetType
from simulator.events import (
    BetSent,
    BowlLifted,
    DropItem,
    Dropped,
    Event,
    LinkDown,
    Paused,
    PauseReason,
    Reshake,
    ReshakeReason,
    Resumed,
    Revealed,
    RoundEnded,
    RoundOpened,
    RoundStatus,
    ShakeSkipped,
)
from simulator.summary import INCIDENT_KEYS, chi_square_fair, percentiles, summarize


def test_a_perfectly_fair_histogram_has_chi_square_zero() -> None:
    assert chi_square_fair((10, 40, 60, 40, 10)) == (0.0, 1.0)


def test_chi_square_by_hand() -> None:
    # n = 160, expected 10-40-60-40-10: deviations of 10 in the two tails give 10^2/10 + 10^2/10 = 20.
    stat, p = chi_square_fair((20, 40, 60, 40, 0))
    assert stat == pytest.approx(20.0)
    assert p == pytest.approx(math.exp(-10) * 11)


@pytest.mark.parametrize(
    "histogram", [(1, 4, 6, 4, 1), (7, 25, 30, 33, 5), (100, 420, 580, 390, 110), (0, 0, 5, 0, 0), (3, 0, 0, 0, 0)]
)
def test_chi_square_matches_scipy(histogram: tuple[int, int, int, int, int]) -> None:
    n = sum(histogram)
    expected = [n * k / 16 for k in (1, 4, 6, 4, 1)]
    reference = scipy.stats.chisquare(histogram, expected)
    stat, p = chi_square_fair(histogram)
    assert stat == pytest.approx(reference.statistic)
    assert p == pytest.approx(scipy.stats.chi2.sf(stat, 4), rel=1e-9, abs=1e-300)
    assert p == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-300)


def test_an_empty_histogram_is_not_evidence_of_anything() -> None:
    assert chi_square_fair((0, 0, 0, 0, 0)) == (0.0, 1.0)


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in (7, 3, 10, 1, 9, 2, 8, 5, 4, 6)]
    # Nearest rank: p50 -> ceil(0.5*10) = 5th smallest, p90 -> 9th, p99 -> ceil(9.9) = 10th.
    assert percentiles(values) == {"p50": 5.0, "p90": 9.0, "p99": 10.0, "max": 10.0}
    assert percentiles([]) == {}
    assert percentiles([2.5], (1, 100)) == {"p1": 2.5, "p100": 2.5, "max": 2.5}


def test_summarize_counts_a_hand_written_log() -> None:
    log: list[Event] = [
        RoundOpened(0.0, 1, 15.0),
        BetSent(1.0, 1, "p01.1", "p01.1-1", BetType.BIG, 100, 1.1),
        Revealed(10.0, 1, "RWSW", False),
        Reshake(10.0, 1, ReshakeReason.STANDING, 1),
        Dropped(12.0, 1, 2, DropItem.PLATE, None),
        Reshake(20.0, 1, ReshakeReason.DROP, 2),
        BowlLifted(25.0, 1, False, False, None),
        Revealed(25.0, 1, "RRWW", True),
        RoundEnded(28.0, 1, RoundStatus.SETTLED, None, "RRWW", 2, 2),
        RoundOpened(30.0, 2, 45.0),
        ShakeSkipped(32.0, 2),
        LinkDown(33.0, "p01.1"),
        BowlLifted(47.0, 2, False, True, 1),
        RoundEnded(47.0, 2, RoundStatus.VOID, "SH-4a", None, None, 0),
        RoundOpened(50.0, 3, 65.0),
        Paused(51.0, 3, PauseReason.EQUIPMENT),
        Resumed(52.0, 3),
        Paused(70.0, 3, PauseReason.RESHAKE_CAP),
        RoundEnded(100.0, 3, RoundStatus.CANCELLED, "ERR-3", None, None, 3),
        RoundOpened(104.0, 4, 119.0),
        BowlLifted(110.0, 4, True, False, None),
        RoundEnded(110.0, 4, RoundStatus.SETTLED, None, "RRRR", 4, 0),
    ]
    summary = summarize(log)
    assert summary.rounds == 4
    assert summary.reds_histogram == (0, 0, 1, 0, 1)
    assert summary.voided == 2
    assert set(summary.incidents) == set(INCIDENT_KEYS)
    expected = dict.fromkeys(INCIDENT_KEYS, 0)
    expected.update(
        overlaps=1,
        drops_plate=1,
        standing_tokens=1,
        reshakes=2,
        touches=1,
        forgotten_shakes=1,
        early_lifts=1,
        pauses=2,
        resumed=1,
        reshake_cap_exceeded=1,
        voided_rounds=1,
        cancelled_rounds=1,
        bets_sent=1,
        disconnects=1,
    )
    assert summary.incidents == expected
    # Durations 28, 17, 50, 6: nearest rank p50 = 2nd smallest (17), p90 and p99 = 4th (50).
    assert summary.duration_percentiles == {"p50": 17.0, "p90": 50.0, "p99": 50.0, "max": 50.0}
