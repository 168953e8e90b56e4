"""Fairness tests: statistics worked out by hand on constructed streams, Holm's correction, seeded streams."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.fairness import (
    FairnessCheck,
    chi2_reds,
    fairness_report,
    holm,
    ljung_box,
    runs_odd_even,
    token_bias,
)
from harness.stats.readers import OutcomeArrays, arrays_from_patterns
from harness.stats.settlement import draw_patterns, make_generator


def stream(p_red: float, rounds: int, seed: int) -> OutcomeArrays:
    return arrays_from_patterns(draw_patterns(make_generator(seed), rounds, [p_red] * 4))


def test_chi2_of_exactly_expected_counts_is_zero() -> None:
    reds = np.repeat(np.arange(5), [10, 40, 60, 40, 10])
    result = chi2_reds(reds)
    assert result.statistic == pytest.approx(0.0)
    assert result.p_value == pytest.approx(1.0)


def test_chi2_by_hand() -> None:
    # 160 rounds, expected 10, 40, 60, 40, 10; observed 20, 40, 60, 40, 0 → (10²/10) + (10²/10) = 20
    reds = np.repeat(np.arange(5), [20, 40, 60, 40, 0])
    assert chi2_reds(reds).statistic == pytest.approx(20.0)


def test_token_bias_z_by_hand() -> None:
    # 100 rounds of 3 reds: (300 − 200)/√100 = 10
    result = token_bias(np.full(100, 3))
    assert result.statistic == pytest.approx(10.0)
    assert "0.75000" in result.note


def test_runs_test_by_hand() -> None:
    # 20 rounds alternating odd/even: n1 = n2 = 10, 20 runs; μ = 2·10·10/20 + 1 = 11,
    # σ² = 2·10·10·(200 − 20)/(20²·19) = 36000/7600 → z = 9/2.1764 = 4.135
    reds = np.array([1, 2] * 10)
    assert runs_odd_even(reds).statistic == pytest.approx(9 / (36000 / 7600) ** 0.5)


def test_ljung_box_flags_a_strictly_alternating_stream() -> None:
    result = ljung_box(np.array([0, 4] * 100))
    assert result.p_value is not None and result.p_value < 1e-10
    assert result.df == 10


def test_holm_step_down_by_hand() -> None:
    def check(name: str, p: float | None) -> FairnessCheck:
        return FairnessCheck(name, 0.0, None, p, "")

    # m = 3: thresholds 0.01/3, 0.01/2, 0.01/1 for the sorted p-values 0.001, 0.004, 0.03
    out = holm([check("a", 0.03), check("b", 0.001), check("c", 0.004), check("d", None)])
    assert [t.rejected for t in out] == [False, True, True, False]
    assert [t.threshold for t in out] == [
        pytest.approx(0.01),
        pytest.approx(0.01 / 3),
        pytest.approx(0.005),
        None,
    ]
    # the step-down stops at the first p-value above its threshold: 0.004 > 0.01/3, so 0.0045 is kept too
    out = holm([check("a", 0.004), check("b", 0.0045), check("c", 0.02)])
    assert not any(t.rejected for t in out)


def test_a_fair_seeded_stream_passes_every_test() -> None:
    report = fairness_report(stream(0.5, 20_000, seed=11))
    assert report.passed
    assert not report.below_certification_minimum
    names = {t.name for t in report.tests if t.applicable}
    assert names == {"chi2_reds", "chi2_patterns", "token_bias", "runs_odd_even", "ljung_box"}


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
    arrays = OutcomeArrays(
        ("settled", "void", "settled"), np.array([2, -1, 3]), np.array([3, -1, 7]), np.zeros(3, np.int64)
    )
    report = fairness_report(arrays)
    assert (report.rounds, report.settled, report.voided) == (3, 2, 1)
    assert not any(t.applicable for t in report.tests)
    assert report.passed and not report.conclusive and report.below_certification_minimum


def test_ljung_box_needs_50_rounds_with_some_variation() -> None:
    assert not ljung_box(np.array([1, 3] * 24)).applicable
    assert "same red count" in ljung_box(np.full(100, 2)).note
    assert ljung_box(np.array([1, 3] * 25)).df == 10
