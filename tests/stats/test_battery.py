"""The lab battery: each statistic against scipy.stats' own test on one stream, statistics by hand, and each
generated defect caught by the test made for it (and not by the ones that cannot see it)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from harness.stats import battery
from harness.stats.defects import DEFECTS, defect
from harness.stats.fairness import chi2_patterns, fairness_report
from harness.stats.primitives import binomial_two_sided, independence, row_counts
from harness.stats.readers import arrays_from_patterns
from harness.stats.settlement import make_generator


def patterns_of(kind: str, rounds: int, seed: int, streams: int = 1) -> np.ndarray:
    return defect(kind).generate(make_generator(seed), streams, rounds)


def test_batch_statistics_equal_scipys_tests_on_each_stream() -> None:
    pats = patterns_of("copy_0.05", 3_000, seed=1, streams=3)
    for row in range(3):
        p = pats[row]
        b1, b2 = (p >> 1) & 1, (p >> 2) & 1
        table = np.array([[np.sum((b1 == i) & (b2 == j)) for j in (0, 1)] for i in (0, 1)])
        want = stats.chi2_contingency(table, correction=False)
        got = battery.pair(pats, 1, 2)
        assert got.statistic[row] == pytest.approx(want.statistic) and got.p[row] == pytest.approx(want.pvalue)
        serial = np.zeros((16, 16), dtype=np.int64)
        np.add.at(serial, (p[:-1], p[1:]), 1)
        want = stats.chi2_contingency(serial, correction=False)
        got = battery.serial_patterns(pats)
        assert got.statistic[row] == pytest.approx(want.statistic) and got.df[row] == want.dof == 225
        assert got.p[row] == pytest.approx(want.pvalue)
        want = stats.chisquare(np.bincount(p, minlength=16))
        assert chi2_patterns(pats).statistic[row] == pytest.approx(want.statistic)


def test_doubled_binomial_p_is_twice_scipys_smaller_exact_tail() -> None:
    for k, n, p in ((470, 1000, 0.5), (500, 1000, 0.5), (560, 1000, 0.5), (40, 1000, 1 / 16), (90, 1000, 1 / 16)):
        tails = [stats.binomtest(k, n, p, alternative=side).pvalue for side in ("less", "greater")]
        assert float(binomial_two_sided(np.array([k]), n, p)[0]) == pytest.approx(min(1.0, 2 * min(tails)))
    # symmetric null: the same as scipy's two-sided binomtest
    assert float(binomial_two_sided(np.array([530]), 1000, 0.5)[0]) == pytest.approx(
        stats.binomtest(530, 1000, 0.5).pvalue
    )


def test_tables_drop_empty_rows_and_follow_cochrans_rule() -> None:
    rows = np.array([[0, 0, 1, 1, 0, 1] * 10])
    cols = np.array([[0, 1, 0, 1, 1, 0] * 10])
    _, df, ok = independence(rows, cols, (3, 2))  # row 2 is empty: a 2x2 table, df 1
    assert df[0] == 1 and ok[0]
    _, _, ok = independence(np.array([[0, 1, 0, 1]]), np.array([[0, 1, 1, 0]]), (2, 2))
    assert not ok[0]  # expected counts of 1 in every cell
    assert row_counts(np.array([[0, 2, 2], [1, 1, 1]]), 3).tolist() == [[1, 0, 2], [0, 3, 0]]


def test_repeat_and_runs_by_hand() -> None:
    pats = np.array([[3, 3, 5, 5, 5, 0] * 20])  # 119 pairs; repeats at 3 of every 6 steps within a block of 6
    result = battery.repeat(pats)
    k = int(np.count_nonzero(pats[0, 1:] == pats[0, :-1]))
    assert k == 60 and result.notes[0].startswith("60 repeats")
    assert result.p[0] == pytest.approx(float(binomial_two_sided(np.array([60]), 119, 1 / 16)[0]))
    # token 0 of 3, 3, 5, 5, 5, 0: 1 1 1 1 1 0 repeated -> 40 runs in 120 faces, n1 = 100, n2 = 20
    runs = battery.runs_token(pats, 0)
    assert runs.notes[0].startswith("40 runs")


def test_stationarity_by_hand() -> None:
    reds = np.array([[4] * 500 + [0] * 500])  # 10 blocks of 100: S_b = +-200, q = 10 x 200^2 / 100 = 4000
    result = battery.stationarity(reds)
    assert result.statistic[0] == pytest.approx(4000.0) and result.df[0] == 10
    assert np.isnan(battery.stationarity(np.full((1, 499), 2)).p[0])


def test_identified_tokens_are_needed_for_per_token_tests() -> None:
    tests = battery.lab_battery(np.full((1, 100), 2), None)
    assert all(np.isnan(t.p[0]) for t in tests if t.tokens or t.kind in ("repeat", "serial_patterns"))
    assert "tokens not identified" in next(t for t in tests if t.name == "runs_t2").why


@pytest.mark.parametrize(
    ("kind", "caught_by", "blind"),
    [
        ("single_0.52", {"frequency_t0"}, {"repeat", "runs_t0"}),
        ("copy_0.05", {"pair_t1_t2"}, {"frequency_t1", "frequency_t2"}),
        ("repeat_0.03", {"repeat"}, {"frequency_t0", "token_bias"}),
        ("switching", {"stationarity"}, {"repeat"}),
        ("sticky_0.10", {"runs_t0", "serial_t0"}, {"frequency_t0", "runs_t1"}),
        ("xor_0.10", {"serial_t3"}, {"pair_t0_t3", "pair_t1_t3", "frequency_t3", "runs_t3", "ljung_box"}),
    ],
)
def test_each_defect_is_caught_by_its_test_and_named(kind: str, caught_by: set[str], blind: set[str]) -> None:
    report = fairness_report(arrays_from_patterns(patterns_of(kind, 20_000, seed=5)[0]))
    rejected = {t.name for t in report.rejected()}
    assert caught_by <= rejected, f"{kind}: rejected {sorted(rejected)}"
    assert not blind & rejected, f"{kind}: {sorted(blind & rejected)} should not see it"


def test_defects_are_declared_once_and_fair_is_fair() -> None:
    assert len({d.name for d in DEFECTS}) == len(DEFECTS)
    with pytest.raises(ValueError, match="unknown stream kind 'loaded'; one of fair, uniform_1pp"):
        defect("loaded")
    pats = patterns_of("fair", 160_000, seed=9)[0]
    assert np.abs(np.bincount(pats, minlength=16) / 10_000 - 1).max() < 0.05
