"""Fairness tests on an outcome stream, judged together at 99 % with Holm's multiple-test correction.

Tests (settled rounds only unless said otherwise), each giving a two-sided p-value under "fair, independent
tokens":

* ``chi2_reds``: chi-square of the red-count histogram against N·(1, 4, 6, 4, 1)/16, df 4.
* ``chi2_patterns``: chi-square of the 16 token patterns against N/16 each, df 15 (only when tokens are
  identified).
* ``token_bias``: z = (reds − 2N)/√N, the total reds against 4 fair tokens per round.
* ``runs_odd_even``: Wald–Wolfowitz runs test on the odd/even sequence.
* ``ljung_box``: Ljung–Box Q on the red counts' autocorrelations up to lag h = min(10, N // 5), df h (N >= 50).
* ``reshake_independence``: chi-square of independence, re-shaken or not × {0–1, 2, 3–4 reds}, df 2.
* ``void_independence``: chi-square of independence, "the previous round was void/cancelled" or not × the same
  three red-count classes of the next settled round, df 2 (a dealer voiding rounds selectively skews what
  follows).

A test is *not applicable* (and left out of the correction) when its expected cell counts fall below 5 or
there is nothing to test. With m applicable tests and p-values sorted p₍₁₎ ≤ … ≤ p₍ₘ₎, Holm rejects p₍ᵢ₎ while
p₍ᵢ₎ ≤ α / (m − i + 1), α = 0.01; this keeps the chance of any false rejection at most 1 % (GLI-19 3.2.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from harness.stats.readers import OutcomeArrays


def _scipy_stats() -> Any:
    """``scipy.stats``, imported on first use: about 2 s of start-up that a process without statistics never pays
    (every certify worker imports this module with the step library)."""
    from scipy import stats

    return stats


ALPHA = 0.01
CERTIFICATION_MINIMUM = 10_000  # GLI-19 3.4.2: physical RNG devices are certified on at least this many outcomes
RED_WEIGHTS = np.array([1, 4, 6, 4, 1], dtype=np.float64) / 16
_CLASSES = np.array([0, 0, 1, 2, 2])  # small (0-1 reds), two reds, big (3-4 reds)


@dataclass(frozen=True, slots=True)
class FairnessCheck:
    """One fairness test. ``threshold``/``rejected`` are filled in by the Holm step (None: not applicable)."""

    name: str
    statistic: float | None
    df: int | None
    p_value: float | None
    note: str
    threshold: float | None = None
    rejected: bool = False

    @property
    def applicable(self) -> bool:
        return self.p_value is not None


@dataclass(frozen=True, slots=True)
class FairnessReport:
    rounds: int
    settled: int
    voided: int
    tests: tuple[FairnessCheck, ...]
    alpha: float = ALPHA

    @property
    def passed(self) -> bool:
        """No test rejected (see :attr:`conclusive`: with no applicable test nothing was shown either)."""
        return not any(t.rejected for t in self.tests)

    @property
    def conclusive(self) -> bool:
        """At least one test was applicable."""
        return any(t.applicable for t in self.tests)

    @property
    def below_certification_minimum(self) -> bool:
        return self.settled < CERTIFICATION_MINIMUM


def _na(name: str, why: str) -> FairnessCheck:
    return FairnessCheck(name, None, None, None, f"not applicable: {why}")


def chi2_reds(reds: npt.NDArray[np.int64]) -> FairnessCheck:
    """Chi-square of red counts against the binomial(4, ½) weights, df 4."""
    stats = _scipy_stats()
    n = len(reds)
    if n * RED_WEIGHTS.min() < 5:
        return _na("chi2_reds", f"{n} settled rounds, need >= 80 (expected count >= 5 per bin)")
    observed = np.bincount(reds, minlength=5)
    res = stats.chisquare(observed, n * RED_WEIGHTS)
    return FairnessCheck("chi2_reds", float(res.statistic), 4, float(res.pvalue), f"observed {observed.tolist()}")


def chi2_patterns(patterns: npt.NDArray[np.int64]) -> FairnessCheck:
    """Chi-square of the 16 token patterns against uniform, df 15."""
    stats = _scipy_stats()
    n = len(patterns)
    if n / 16 < 5:
        return _na("chi2_patterns", f"{n} identified rounds, need >= 80")
    res = stats.chisquare(np.bincount(patterns, minlength=16))
    return FairnessCheck("chi2_patterns", float(res.statistic), 15, float(res.pvalue), "16 patterns, uniform")


def token_bias(reds: npt.NDArray[np.int64]) -> FairnessCheck:
    """z = (reds − 2N)/√N (variance of 4 fair tokens is 1 per round); two-sided normal p-value."""
    stats = _scipy_stats()
    n = len(reds)
    if n < 30:
        return _na("token_bias", f"{n} settled rounds, need >= 30")
    excess = int(reds.sum()) - 2 * n
    z = excess / math.sqrt(n)
    p_hat = 0.5 + excess / (4 * n)
    return FairnessCheck("token_bias", z, None, float(2 * stats.norm.sf(abs(z))), f"P(red) estimate {p_hat:.5f}")


def runs_odd_even(reds: npt.NDArray[np.int64]) -> FairnessCheck:
    """Wald–Wolfowitz runs test on odd/even: z = (R − μ)/σ with μ = 2n₁n₂/n + 1."""
    stats = _scipy_stats()
    odd = (reds % 2).astype(bool)
    n1 = int(odd.sum())
    n2 = len(odd) - n1
    if min(n1, n2) < 10:
        return _na("runs_odd_even", f"{n1} odd and {n2} even rounds, need >= 10 of each")
    n = n1 + n2
    runs = 1 + int(np.count_nonzero(odd[1:] != odd[:-1]))
    mean = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    z = (runs - mean) / math.sqrt(var)
    return FairnessCheck(
        "runs_odd_even", z, None, float(2 * stats.norm.sf(abs(z))), f"{runs} runs, {mean:.1f} expected"
    )


def ljung_box(reds: npt.NDArray[np.int64], max_lag: int = 10) -> FairnessCheck:
    """Ljung–Box Q = n(n+2) Σₖ ρₖ²/(n−k), k = 1..h, h = min(max_lag, n // 5), against chi-square with h degrees
    of freedom. Needs n >= 50 (the chi-square approximation is poor below) and some variation."""
    stats = _scipy_stats()
    n = len(reds)
    lags = min(max_lag, n // 5)
    if n < 50:
        return _na("ljung_box", f"{n} settled rounds, need >= 50")
    x = reds.astype(np.float64) - reds.mean()
    denom = float(x @ x)
    if denom == 0:
        return _na("ljung_box", f"all {n} settled rounds show the same red count")
    rho = np.array([float(x[k:] @ x[:-k]) / denom for k in range(1, lags + 1)])
    q = n * (n + 2) * float(np.sum(rho**2 / (n - np.arange(1, lags + 1))))
    return FairnessCheck("ljung_box", q, lags, float(stats.chi2.sf(q, lags)), f"largest |rho| {np.abs(rho).max():.4f}")


def _independence(name: str, flags: npt.NDArray[np.bool_], reds: npt.NDArray[np.int64], what: str) -> FairnessCheck:
    stats = _scipy_stats()
    if not flags.any() or flags.all():
        return _na(name, f"no settled round {what}" if not flags.any() else f"every settled round {what}")
    classes = _CLASSES[reds]
    table = np.array([np.bincount(classes[flags], minlength=3), np.bincount(classes[~flags], minlength=3)])
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    if expected.min() < 5:
        return _na(name, f"expected cell count {expected.min():.1f} < 5 ({int(flags.sum())} settled rounds {what})")
    res = stats.chi2_contingency(table, correction=False)
    return FairnessCheck(
        name, float(res.statistic), int(res.dof), float(res.pvalue), f"{int(flags.sum())} settled rounds {what}"
    )


def holm(tests: list[FairnessCheck], alpha: float = ALPHA) -> list[FairnessCheck]:
    """Apply Holm's step-down correction; returns the tests in their original order with thresholds set."""
    ranked = sorted((t.p_value, i) for i, t in enumerate(tests) if t.p_value is not None)
    m = len(ranked)
    out = list(tests)
    still_rejecting = True
    for rank, (p, i) in enumerate(ranked):
        threshold = alpha / (m - rank)
        still_rejecting = still_rejecting and p <= threshold
        out[i] = replace(tests[i], threshold=threshold, rejected=still_rejecting)
    return out


def fairness_report(stream: OutcomeArrays, alpha: float = ALPHA) -> FairnessReport:
    """Run every test on ``stream`` and judge them together at ``alpha`` with Holm's correction."""
    settled = stream.settled
    reds = stream.reds[settled]
    tests = [chi2_reds(reds)]
    if stream.identified:
        tests.append(chi2_patterns(stream.patterns[settled]))
    else:
        tests.append(_na("chi2_patterns", "tokens not identified (faces missing)"))
    tests += [token_bias(reds), runs_odd_even(reds), ljung_box(reds)]
    tests.append(_independence("reshake_independence", stream.reshakes[settled] > 0, reds, "was re-shaken"))
    voided = ~settled
    after_void = np.concatenate([[False], voided[:-1]])[settled] if len(voided) else np.zeros(0, dtype=bool)
    tests.append(_independence("void_independence", after_void, reds, "follows a void/cancelled round"))
    return FairnessReport(len(stream.reds), int(settled.sum()), int(voided.sum()), tuple(holm(tests, alpha)), alpha)
