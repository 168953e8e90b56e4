"""The weighted Holm step-down: thresholds, adjusted p-values and where the step-down stops, by hand."""

from __future__ import annotations

import pytest

from harness.stats.checks import FairnessCheck
from harness.stats.fairness import judge
from harness.stats.holm import weighted_holm


def test_equal_weights_are_holm_by_hand() -> None:
    # m = 3: thresholds 0.01/3, 0.01/2, 0.01/1 for the sorted p-values 0.001, 0.004, 0.03
    out = weighted_holm([("a", 0.03, 1), ("b", 0.001, 1), ("c", 0.004, 1), ("d", None, 1)], 0.01)
    assert set(out) == {"a", "b", "c"}  # the not-applicable test is out of the family
    assert [out[k].rejected for k in "abc"] == [False, True, True]
    assert [out[k].step for k in "abc"] == [3, 1, 2]
    assert [out[k].threshold for k in "abc"] == [pytest.approx(0.01), pytest.approx(0.01 / 3), pytest.approx(0.005)]
    # adjusted: 3 x 0.001 = 0.003, max(0.003, 2 x 0.004) = 0.008, max(0.008, 1 x 0.03) = 0.03
    assert [out[k].adjusted_p for k in "bca"] == [pytest.approx(0.003), pytest.approx(0.008), pytest.approx(0.03)]


def test_step_down_stops_at_the_first_test_kept_and_says_where() -> None:
    # 0.004 > 0.01/3 stops the step-down: 0.0045 is under its own threshold 0.005 but is never reached
    out = weighted_holm([("a", 0.004, 1), ("b", 0.0045, 1), ("c", 0.02, 1)], 0.01)
    assert not any(s.rejected for s in out.values())
    assert out["a"].blocked_by is None and out["b"].blocked_by == "a" and out["c"].blocked_by == "a"
    assert out["b"].threshold == pytest.approx(0.005) and out["b"].adjusted_p == pytest.approx(0.012)


def test_weights_share_the_budget_by_hand() -> None:
    # weights 3 and 1, total 4: "big" is judged at 0.01 x 3/4 = 0.0075, then "small" at 0.01 x 1/1
    out = weighted_holm([("big", 0.006, 3), ("small", 0.009, 1)], 0.01)
    assert out["big"].step == 1 and out["big"].threshold == pytest.approx(0.0075) and out["big"].rejected
    assert out["small"].threshold == pytest.approx(0.01) and out["small"].rejected
    assert out["big"].adjusted_p == pytest.approx(0.006 * 4 / 3)
    # unweighted, 0.006 > 0.01/2 would have stopped it
    assert not weighted_holm([("big", 0.006, 1), ("small", 0.009, 1)], 0.01)["big"].rejected


def test_judge_marks_a_test_under_its_threshold_that_was_not_reached() -> None:
    # three tests of weight 1: thresholds 0.01/3, 0.01/2, 0.01; 0.004 stops the step-down before 0.0045
    tests = [FairnessCheck(n, 0.0, None, p, "", "pair") for n, p in (("x", 0.004), ("y", 0.0045), ("z", 0.5))]
    judged = {t.name: t for t in judge(tests)}
    assert judged["y"].below_threshold_not_rejected and judged["y"].blocked_by == "x"
    assert not judged["x"].below_threshold_not_rejected and not judged["z"].below_threshold_not_rejected


def test_bad_input_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"alpha must be strictly between 0 and 1, got 0"):
        weighted_holm([("a", 0.1, 1)], 0)
    with pytest.raises(ValueError, match=r"test a: weight must be > 0, got -1"):
        weighted_holm([("a", 0.1, -1)], 0.01)
    with pytest.raises(ValueError, match=r"test a: p-value must be in 0\.\.1, got 2"):
        weighted_holm([("a", 2, 1)], 0.01)
    with pytest.raises(ValueError, match="unique"):
        weighted_holm([("a", 0.1, 1), ("a", 0.2, 1)], 0.01)
    with pytest.raises(ValueError, match=r"kind 'nonsense' is not one of chi2_reds, "):
        judge([FairnessCheck("q", 0.0, None, 0.5, "", "nonsense")])
