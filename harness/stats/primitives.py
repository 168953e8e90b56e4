"""Test statistics computed over a batch of streams at once (one stream per row), with their null distributions
from ``scipy.stats`` (``chi2``, ``norm``, ``binom``), called once per test on whole arrays.

An audit is a batch of one; the calibration runs thousands of generated streams through the same code. Each
function is checked against the matching single-stream ``scipy.stats`` test (``chisquare``,
``chi2_contingency``, ``binomtest``) in ``tests/stats/test_battery.py``. A p-value of NaN marks a row where the
test is not applicable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def scipy_stats() -> Any:
    """``scipy.stats``, imported on first use: about 2 s of start-up that a process without statistics never pays
    (every certify worker imports the statistics package with the step library)."""
    from scipy import stats

    return stats


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One test over a batch: per row the statistic and the p-value (NaN: not applicable, see ``why``).

    ``df`` is per row (0 where the test has none); ``notes`` one line per row for the report.
    """

    name: str
    kind: str
    tokens: tuple[int, ...]
    statistic: Floats
    df: Ints
    p: Floats
    notes: tuple[str, ...]
    why: str = ""
    has_df: bool = True


def row_counts(values: Ints, bins: int) -> Ints:
    """Per row, how often each value 0..bins-1 occurs: shape (rows, bins)."""
    rows = values.shape[0]
    offset = (np.arange(rows, dtype=np.int64) * bins)[:, None]
    return np.bincount((values + offset).ravel(), minlength=rows * bins).reshape(rows, bins)


def chi2_sf(statistic: Floats, df: Ints | int) -> Floats:
    """Upper tail of chi-square (``scipy.stats.chi2.sf``); NaN where df < 1."""
    stats = scipy_stats()
    dfs = np.broadcast_to(np.asarray(df, dtype=np.float64), statistic.shape)
    out = np.full(statistic.shape, np.nan)
    ok = dfs >= 1
    out[ok] = stats.chi2.sf(statistic[ok], dfs[ok])
    return out


def normal_two_sided(z: Floats) -> Floats:
    """2 · P(Z > |z|) for a standard normal Z (``scipy.stats.norm.sf``)."""
    return np.asarray(2 * scipy_stats().norm.sf(np.abs(z)), dtype=np.float64)


def binomial_two_sided(k: Ints, n: int, p: float) -> Floats:
    """Exact two-sided binomial p-value by doubling the smaller tail, min(1, 2 · min(P(X <= k), P(X >= k))),
    X ~ Binomial(n, p) (``scipy.stats.binom``): twice the smaller of ``scipy.stats.binomtest``'s one-sided
    p-values, equal to its two-sided one when p = ½, and a valid test at every level (P(p-value <= a) <= a)."""
    stats = scipy_stats()
    low = stats.binom.cdf(k, n, p)
    high = stats.binom.sf(k - 1, n, p)
    return np.asarray(np.minimum(1.0, 2 * np.minimum(low, high)), dtype=np.float64)


def goodness_of_fit(observed: Ints, expected: Floats) -> Floats:
    """Pearson's Σ (O − E)² / E per row (``scipy.stats.chisquare``'s statistic)."""
    return np.asarray((((observed - expected) ** 2) / expected).sum(axis=1), dtype=np.float64)


def independence(rows: Ints, cols: Ints, shape: tuple[int, int]) -> tuple[Floats, Ints, npt.NDArray[np.bool_]]:
    """Pearson chi-square of independence of the table rows × cols, per batch row (``scipy.stats.
    chi2_contingency`` with ``correction=False``'s statistic). Empty table rows and columns are left out of the
    statistic and the df. Returns (statistic, df, applicable): applicable under Cochran's rule, no expected
    count below 1 and at most a fifth below 5, over the non-empty cells' table.
    """
    r, c = shape
    table = row_counts(rows * c + cols, r * c).reshape(-1, r, c).astype(np.float64)
    row_sum = table.sum(axis=2, keepdims=True)
    col_sum = table.sum(axis=1, keepdims=True)
    total = table.sum(axis=(1, 2), keepdims=True)
    expected = row_sum * col_sum / np.where(total > 0, total, 1)
    live = expected > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(live, (table - expected) ** 2 / np.where(live, expected, 1), 0.0)
    statistic = terms.sum(axis=(1, 2))
    n_rows = (row_sum[:, :, 0] > 0).sum(axis=1)
    n_cols = (col_sum[:, 0, :] > 0).sum(axis=1)
    df = ((n_rows - 1) * (n_cols - 1)).astype(np.int64)
    cells = np.maximum(n_rows * n_cols, 1)
    small = (live & (expected < 5)).sum(axis=(1, 2))
    tiny = (live & (expected < 1)).sum(axis=(1, 2))
    applicable = (df >= 1) & (tiny == 0) & (small <= 0.2 * cells)
    return statistic, df, applicable


def runs(flags: npt.NDArray[np.bool_]) -> tuple[Floats, Ints, Floats, npt.NDArray[np.bool_]]:
    """Wald–Wolfowitz runs per row of a two-valued sequence: (z, runs, expected runs, applicable), z = (R − μ)/σ
    with μ = 2n₁n₂/n + 1, σ² = 2n₁n₂(2n₁n₂ − n)/(n²(n − 1)), conditional on the counts n₁, n₂ of each value;
    applicable when each value occurs at least 10 times."""
    n = flags.shape[1]
    n1 = flags.sum(axis=1).astype(np.float64)
    n2 = n - n1
    count = 1 + np.count_nonzero(flags[:, 1:] != flags[:, :-1], axis=1)
    mean = 2 * n1 * n2 / max(n, 1) + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (max(n, 1) ** 2 * max(n - 1, 1))
    applicable = (np.minimum(n1, n2) >= 10) & (var > 0)
    z = np.where(applicable, (count - mean) / np.sqrt(np.where(var > 0, var, 1)), 0.0)
    return z, count.astype(np.int64), mean, applicable


def masked(p: Floats, applicable: npt.NDArray[np.bool_]) -> Floats:
    """``p`` with NaN where the test is not applicable."""
    return np.where(applicable, p, np.nan)
