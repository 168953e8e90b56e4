"""The verdict as a calibrated decision: its false-fail rate on generated fair streams held to the nominal alpha,
the acceptance power at the 10,000-round certification size, and the batch verdict the same as the audit's."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.calibrate import failures, main, measure, wilson
from harness.stats.defects import defect
from harness.stats.fairness import ALPHA, fairness_report, family
from harness.stats.readers import arrays_from_patterns
from harness.stats.settlement import make_generator


def test_false_fail_rate_of_the_whole_verdict_is_within_alpha() -> None:
    # 2,000 fair 10,000-round streams through every test of the family, the monitor included
    rate = measure("fair", 10_000, 2_000, seed=2027)
    low, high = rate.interval
    # the interval contains alpha: not above it (a liberal verdict), and not below it either (a test that has
    # stopped spending its share of the budget, and lost its power with it)
    assert low <= ALPHA <= high, f"false-fail rate {rate.rate:.4f} (95 % CI {low:.4f}-{high:.4f}), alpha {ALPHA}"


def test_without_the_family_correction_the_same_measurement_fails() -> None:
    # each test on its own at alpha (no shared budget): the measurement above must be able to see that
    rng = make_generator(2028)
    pats = defect("fair").generate(rng, 300, 10_000)
    reds = np.bitwise_count(pats.astype(np.uint8)).astype(np.int64)
    p = np.stack([t.p for t in family(reds, pats)], axis=1)
    naive = int((np.nan_to_num(p, nan=1.0) <= ALPHA).any(axis=1).sum())
    assert wilson(naive, 300)[0] > ALPHA


@pytest.mark.parametrize(("kind", "target"), [("sticky_0.10", 0.9), ("repeat_0.03", 0.9), ("xor_0.10", 0.9)])
def test_dependence_defects_are_caught_at_10000_rounds(kind: str, target: float) -> None:
    rate = measure(kind, 10_000, 200, seed=31)
    assert rate.rate >= target, f"{kind}: {rate.hits}/{rate.streams}"


def test_a_single_token_at_052_is_caught_at_10000_rounds_70_percent() -> None:
    rate = measure("single_0.52", 10_000, 600, seed=32)
    assert rate.rate >= 0.70, f"{rate.hits}/{rate.streams}"


def test_batch_verdict_is_the_audits_verdict() -> None:
    pats = np.concatenate(
        [defect(k).generate(make_generator(40 + i), 4, 3_000) for i, k in enumerate(["fair", "repeat_0.03"])]
    )
    fast = failures(pats)
    slow = [not fairness_report(arrays_from_patterns(row)).passed for row in pats]
    assert fast.tolist() == slow
    assert any(slow) and not all(slow)


def test_script_prints_rates_with_intervals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", "--rounds", "2000", "--streams", "20", "--kinds", "repeat_0.03", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "repeat_0.03" in out and "95 % CI" in out and "2,000 rounds" in out
    with pytest.raises(SystemExit) as exc:
        main(["calibration", "--alpha", "2"])
    assert exc.value.code == 2
    assert "--alpha must be strictly between 0 and 1, got 2" in capsys.readouterr().err
