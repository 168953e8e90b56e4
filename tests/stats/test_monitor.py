"""The live bias monitor: boundaries, latching, skipping voids, and the vectorised twin agreeing with it."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.monitor import BiasMonitor, MonitorDesign, first_alarms
from harness.stats.settlement import draw_patterns, make_generator


def reds_stream(p: float, rounds: int, seed: int) -> np.ndarray:
    return np.bitwise_count(draw_patterns(make_generator(seed), rounds, [p] * 4)).astype(np.int64)


def test_boundary_is_high_early_and_flat_after_the_horizon() -> None:
    d = MonitorDesign()
    assert d.boundary(500) == pytest.approx(2.68 * 20)
    assert d.boundary(10_000) == pytest.approx(2.68)
    assert d.boundary(10_500) == d.boundary(100_000) == pytest.approx(4.2)


def test_all_red_table_alarms_at_the_first_look_it_can() -> None:
    # every round 4 reds: S = 2n, z = 2√n; the boundary 2.68·10⁴/n is first met at n = 1000 (63.2 ≥ 26.8),
    # not at n = 500 (44.7 < 53.6)
    monitor = BiasMonitor()
    alarm = monitor.feed([4] * 5_000)
    assert alarm is not None
    assert (alarm.round, alarm.direction, alarm.p_red_estimate) == (1000, "red", 1.0)
    assert [lk.round for lk in monitor.looks] == [500, 1000]


def test_alarm_latches_until_reset_and_voids_are_skipped() -> None:
    monitor = BiasMonitor()
    monitor.feed([0] * 1000)
    assert monitor.alarm is not None and monitor.alarm.direction == "white"
    assert monitor.update(2) is monitor.alarm
    monitor.reset()
    assert monitor.alarm is None
    for _ in range(499):
        monitor.update(None)
        monitor.update(2)
    assert len(monitor.looks) == 2  # the reset epoch has 499 settled rounds: no new look yet


def test_fair_rounds_give_z_zero_and_no_alarm() -> None:
    monitor = BiasMonitor(MonitorDesign(look=100, horizon=1000, epoch=2000))
    monitor.feed([1, 3] * 2500)  # excess 0 at every even count; epochs restart at 2000 and 4000
    assert monitor.alarm is None
    assert all(lk.z == 0 for lk in monitor.looks)
    assert [lk.epoch for lk in monitor.looks].count(2) == 10


def test_vectorised_monitor_matches_the_streaming_one() -> None:
    runs = np.stack([reds_stream(p, 20_000, seed) for seed, p in enumerate([0.5, 0.51, 0.49, 0.52, 0.5, 0.515])])
    fast = first_alarms(runs)
    for row, expected in zip(runs, fast, strict=True):
        alarm = BiasMonitor().feed(row.tolist())
        assert (alarm.round if alarm else -1) == expected
    assert (fast > 0).sum() >= 3  # the seeded biased rows do alarm: the comparison is not all "no alarm"


def test_bad_design_and_input_are_refused() -> None:
    with pytest.raises(ValueError, match="look <= horizon <= epoch"):
        MonitorDesign(look=600, horizon=500)
    with pytest.raises(ValueError, match=r"reds must be 0\.\.4, got 5"):
        BiasMonitor().update(5)
    with pytest.raises(ValueError, match="exceed one epoch"):
        first_alarms(np.zeros((1, 200_000), dtype=np.int64))
