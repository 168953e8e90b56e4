"""The live bias monitor: its boundary, latching, skipped voids, the vectorised twin agreeing with it, and a
false-alarm rate held over the whole stream (not per stretch)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats.calibrate import wilson
from harness.stats.fairness import FAMILY_WEIGHT, MONITOR_ALARM_ALPHA, WEIGHTS, monitor_design
from harness.stats.monitor import BiasMonitor, MonitorDesign, anytime_p_value, first_alarms, log_evidence
from harness.stats.settlement import draw_patterns, make_generator


def reds_stream(p: float, rounds: int, seed: int) -> np.ndarray:
    return np.bitwise_count(draw_patterns(make_generator(seed), rounds, [p] * 4)).astype(np.int64)


def test_alarm_level_is_the_monitors_share_of_the_family_budget() -> None:
    assert pytest.approx(0.01 * WEIGHTS["monitor"] / FAMILY_WEIGHT) == MONITOR_ALARM_ALPHA
    assert monitor_design(0.02).alpha == pytest.approx(2 * MONITOR_ALARM_ALPHA)


def test_boundary_is_the_mixture_boundary() -> None:
    d = MonitorDesign(alpha=0.001, rho=500)
    # |S| >= sqrt((n + rho)(ln((n + rho)/rho) + 2 ln(1/alpha))), as z = S/sqrt(n)
    n = 10_000
    want = math.sqrt((n + 500) * (math.log(10_500 / 500) + 2 * math.log(1000)) / n)
    assert d.boundary(n) == pytest.approx(want)
    assert d.boundary(100) > d.boundary(10_000) < d.boundary(1_000_000)  # tightest near rho x a few


def test_all_red_table_alarms_at_the_first_round_over_the_boundary() -> None:
    d = MonitorDesign(alpha=0.001, rho=500, look=10)
    # every round 4 reds: S = 2n; alarm at the first n with 4n^2 / (2(n + 500)) + 0.5 ln(500/(n + 500)) >= ln 1000
    want = next(n for n in range(1, 200) if 2 * n * n / (n + 500) + 0.5 * math.log(500 / (n + 500)) >= math.log(1000))
    monitor = BiasMonitor(d)
    alarm = monitor.feed([4] * 500)
    assert alarm is not None
    assert (alarm.round, alarm.direction, alarm.p_red_estimate) == (want, "red", 1.0)
    assert [lk.round for lk in monitor.looks] == list(range(10, want + 1, 10))


def test_alarm_latches_until_reset_and_voids_are_skipped() -> None:
    monitor = BiasMonitor(MonitorDesign(alpha=0.001))
    monitor.feed([0] * 1000)
    assert monitor.alarm is not None and monitor.alarm.direction == "white"
    assert monitor.update(2) is monitor.alarm
    monitor.reset()
    assert monitor.alarm is None and monitor.rounds == 0
    for _ in range(499):
        monitor.update(None)
        monitor.update(2)
    assert monitor.rounds == 499 and monitor.looks == []  # 499 settled rounds since the reset: no look yet


def test_p_value_is_one_over_the_largest_evidence() -> None:
    reds = reds_stream(0.5, 5_000, seed=3)
    log_m = log_evidence(np.cumsum(reds - 2))
    p, at = anytime_p_value(reds)
    assert p == pytest.approx(min(1.0, math.exp(-max(0.0, log_m.max()))))
    assert at == int(np.argmax(log_m)) + 1
    monitor = BiasMonitor(MonitorDesign(alpha=1e-9))
    monitor.feed(reds.tolist())
    assert monitor.p_value == pytest.approx(p)


def test_vectorised_monitor_matches_the_streaming_one() -> None:
    d = monitor_design()
    runs = np.stack([reds_stream(p, 20_000, seed) for seed, p in enumerate([0.5, 0.51, 0.49, 0.52, 0.5, 0.515])])
    fast = first_alarms(runs, d)
    for row, expected in zip(runs, fast, strict=True):
        alarm = BiasMonitor(d).feed(row.tolist())
        assert (alarm.round if alarm else -1) == expected
    assert (fast > 0).sum() >= 3  # the seeded biased rows do alarm: the comparison is not all "no alarm"


def test_false_alarms_over_the_whole_stream_stay_within_alpha() -> None:
    # 2,000 fair streams of 20,000 rounds watched every round at alpha 5 %: the anytime bound holds over the
    # whole stream. A fixed 1.96 z-test repeated every round (the planted defect) alarms in most of them.
    rng = make_generator(77)
    d = MonitorDesign(alpha=0.05)
    reds = np.bitwise_count(rng.integers(0, 16, size=(2_000, 20_000), dtype=np.uint8)).astype(np.int64)
    alarms = int((first_alarms(reds, d) > 0).sum())
    low, _ = wilson(alarms, 2_000)
    assert low <= 0.05, f"{alarms}/2000 fair streams alarmed at alpha 0.05"
    excess = np.cumsum(reds - 2, axis=1)
    naive = int((np.abs(excess) / np.sqrt(np.arange(1, 20_001)) >= 1.96).any(axis=1).sum())
    assert wilson(naive, 2_000)[0] > 0.05, "the naive repeated test should exceed alpha: the measurement can fail"


def test_bad_design_and_input_are_refused() -> None:
    with pytest.raises(ValueError, match=r"alpha must be strictly between 0 and 1, got 1\.5"):
        MonitorDesign(alpha=1.5)
    with pytest.raises(ValueError, match="rho must be > 0"):
        MonitorDesign(alpha=0.01, rho=0)
    with pytest.raises(ValueError, match=r"reds must be 0\.\.4, got 5"):
        BiasMonitor(MonitorDesign(alpha=0.01)).update(5)
    with pytest.raises(ValueError, match="2-D array"):
        first_alarms(np.zeros(10, dtype=np.int64), MonitorDesign(alpha=0.01))
