"""The kit's fairness tests: statistics worked out by hand on constructed streams, and the whole family on
seeded streams."""

from __future__ import annotations

import numpy as np
import pytest

from harness.records import RoundStatus
from harness.stats.fairness import (
    CATALOGUE,
    FAMILY_WEIGHT,
    chi2_reds,
    fairness_report,
    ljung_box,
    runs_odd_even,
    token_bias,
)
from harness.stats.primitives import BatchResult
from harness.stats.readers import OutcomeArrays, arrays_from_patterns
from harness.stats.settlement import draw_patterns, make_generator


def stream(p_red: float, rounds: int, seed: int) -> OutcomeArrays:
    return arrays_from_patterns(draw_patterns(make_generator(seed), rounds, [p_red] * 4))


def one(values: list[int] | np.ndarray) -> np.ndarray:
    """A batch of one stream."""
    return np.asarray(values, dtype=np.int64).reshape(1, -1)


def only(result: BatchResult) -> tuple[float, float]:
    return float(result.statistic[0]), float(result.p[0])


def test_chi2_of_exactly_expected_counts_is_zero() -> None:
    stat, p = only(chi2_reds(one(np.repeat(np.arange(5), [10, 40, 60, 40, 10]))))
    assert stat == pytest.approx(0.0)
    assert p == pytest.approx(1.0)


def test_chi2_by_hand() -> None:
    # 160 rounds, expected 10, 40, 60, 40, 10; observed 20, 40, 60, 40, 0 → (10²/10) + (10²/10) = 20
    assert only(chi2_reds(one(np.repeat(np.arange(5), [20, 40, 60, 40, 0]))))[0] == pytest.approx(20.0)


def test_token_bias_z_by_hand() -> None:
    # 100 rounds of 3 reds: (300 − 200)/√100 = 10
    result = token_bias(one(np.full(100, 3)))
    assert result.statistic[0] == pytest.approx(10.0)
    assert "0.75000" in result.notes[0]


def test_runs_test_by_hand() -> None:
    # 20 rounds alternating odd/even: n1 = n2 = 10, 20 runs; μ = 2·10·10/20 + 1 = 11,
    # σ² = 2·10·10·(200 − 20)/(20²·19) = 36000/7600 → z = 9/2.1764 = 4.135
    assert runs_odd_even(one([1, 2] * 10)).statistic[0] == pytest.approx(9 / (36000 / 7600) ** 0.5)


def test_ljung_box_flags_a_strictly_alternating_stream() -> None:
    result = ljung_box(one([0, 4] * 100))
    assert result.p[0] < 1e-10
    assert result.df[0] == 10


def test_a_fair_seeded_stream_passes_every_test() -> None:
    report = fairness_report(stream(0.5, 20_000, seed=11))
    assert report.passed
    assert not report.below_certification_minimum
    names = {t.name for t in report.tests if t.applicable}
    assert {"chi2_reds", "chi2_patterns", "token_bias", "runs_odd_even", "ljung_box", "monitor"} <= names
    assert names.isdisjoint({"reshake_independence", "void_independence"})  # no re-shakes or voids recorded
    assert len(names) == 28 and report.applicable_weight == FAMILY_WEIGHT - 2


def test_every_test_of_the_family_is_in_the_catalogue_once() -> None:
    report = fairness_report(stream(0.5, 2_000, seed=15))
    kinds = [t.kind for t in report.tests]
    assert sorted(set(kinds)) == sorted(k.kind for k in CATALOGUE)
    assert all(kinds.count(k.kind) == k.instances for k in CATALOGUE)
    assert len({t.name for t in report.tests}) == len(report.tests)


def test_a_one_point_bias_over_20000_rounds_is_rejected_on_token_bias() -> None:
    report = fairness_report(stream(0.51, 20_000, seed=12))
    assert not report.passed
    assert {t.name for t in report.tests if t.rejected} >= {"token_bias"}


def test_one_token_biased_either_way_is_caught_by_the_pattern_test() -> None:
    # token 0 red 56 %, token 1 red 44 %: the mean red count stays 2, so token_bias sees nothing
    pats = draw_patterns(make_generator(13), 20_000, [0.56, 0.44, 0.5, 0.5])
    rejected = {t.name for t in fairness_report(arrays_from_patterns(pats)).tests if t.rejected}
    assert "chi2_patterns" in rejected
    assert "token_bias" not in rejected


def test_reshakes_that_depend_on_the_outcome_are_caught() -> None:
    base = stream(0.5, 5_000, seed=14)
    reshakes = (base.reds >= 3).astype(np.int64)  # a dealer re-shaking whenever Big would win
    rigged = OutcomeArrays(base.status, base.reds, base.patterns, reshakes)
    by_name = {t.name: t for t in fairness_report(rigged).tests}
    assert by_name["reshake_independence"].rejected


def test_voids_out_of_the_denominator_and_small_streams_not_applicable() -> None:
    status = (RoundStatus.SETTLED, RoundStatus.VOID, RoundStatus.SETTLED)
    arrays = OutcomeArrays(status, np.array([2, -1, 3]), np.array([3, -1, 7]), np.zeros(3, np.int64))
    report = fairness_report(arrays)
    assert (report.rounds, report.settled, report.voided) == (3, 2, 1)
    assert [t.name for t in report.tests if t.applicable] == ["monitor"]  # valid at any length, p = 1 here
    assert report.passed and report.below_certification_minimum


def test_ljung_box_needs_50_rounds_with_some_variation() -> None:
    assert np.isnan(ljung_box(one([1, 3] * 24)).p[0])
    assert "same red count" in ljung_box(one(np.full(100, 2))).notes[0]
    assert ljung_box(one([1, 3] * 25)).df[0] == 10
