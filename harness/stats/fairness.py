"""The audit's family of fairness tests, judged together in one family-wise error budget.

The family is the kit's tests below, the lab battery (:mod:`harness.stats.battery`) and the live monitor's
anytime-valid p-value (:mod:`harness.stats.monitor`), all on the settled rounds under "four fair tokens,
independent of each other and of every earlier round". Each test is declared once in :data:`CATALOGUE` with its
weight; the weighted Holm step-down (:mod:`harness.stats.holm`) keeps the chance that a fair table fails any of
them at most :data:`ALPHA` = 1 % (GLI-19 3.2.2), whatever the dependence between the tests.

The kit's tests:

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

A test is *not applicable* (and left out of the family) when its expected cell counts fall below 5 or there is
nothing to test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from harness.stats.battery import TOKENS, lab_battery
from harness.stats.checks import FairnessCheck, not_applicable
from harness.stats.holm import weighted_holm
from harness.stats.monitor import MonitorDesign, log_evidence
from harness.stats.primitives import (
    BatchResult,
    Ints,
    chi2_sf,
    goodness_of_fit,
    masked,
    normal_two_sided,
    row_counts,
    runs,
    scipy_stats,
)
from harness.stats.readers import OutcomeArrays

ALPHA = 0.01
CERTIFICATION_MINIMUM = 10_000  # GLI-19 3.4.2: physical RNG devices are certified on at least this many outcomes
RED_WEIGHTS = np.array([1, 4, 6, 4, 1], dtype=np.float64) / 16
_CLASSES = np.array([0, 0, 1, 2, 2])  # small (0-1 reds), two reds, big (3-4 reds)


@dataclass(frozen=True, slots=True)
class TestKind:
    """One kind of test in the family: ``weight`` per instance, ``instances`` (one per token, per pair of tokens
    or one for the round), and what it looks for."""

    kind: str
    weight: float
    instances: int
    looks_for: str


CATALOGUE: tuple[TestKind, ...] = (
    TestKind("chi2_reds", 1, 1, "red-count histogram off binomial(4, 1/2)"),
    TestKind("chi2_patterns", 1, 1, "16 token patterns not uniform"),
    TestKind("token_bias", 4, 1, "total reds off 2 a round (all tokens biased one way)"),
    TestKind("runs_odd_even", 1, 1, "odd/even outcomes in too few or too many runs"),
    TestKind("ljung_box", 1, 1, "red counts autocorrelated up to lag 10"),
    TestKind("reshake_independence", 1, 1, "re-shaken rounds show different outcomes"),
    TestKind("void_independence", 1, 1, "rounds after a void show different outcomes"),
    TestKind("frequency", 5, TOKENS, "one token red more or less than half the time"),
    TestKind("pair", 1, TOKENS * (TOKENS - 1) // 2, "two tokens' faces in one round dependent"),
    TestKind("runs", 1, TOKENS, "one token sticky (too few runs) or alternating"),
    TestKind("serial_reds", 1, 1, "a red count depends on the previous one"),
    TestKind("serial_patterns", 1, 1, "a pattern depends on the previous pattern"),
    TestKind("serial_token", 1, TOKENS, "one token follows a rule of the previous round's pattern"),
    TestKind("repeat", 1, 1, "rounds repeating the previous pattern"),
    TestKind("stationarity", 1, 1, "bias that changes from block to block"),
    TestKind("monitor", 2, 1, "running red excess (the live monitor, anytime-valid)"),
)
WEIGHTS = {k.kind: k.weight for k in CATALOGUE}
FAMILY_WEIGHT = sum(k.weight * k.instances for k in CATALOGUE)


def monitor_design(alpha: float = ALPHA) -> MonitorDesign:
    """The live monitor inside the family at ``alpha``: it alarms at its first Holm threshold with every test of
    the catalogue applicable, α · w_monitor / W, so a live alarm always means the audit of those rounds fails."""
    return MonitorDesign(alpha=alpha * WEIGHTS["monitor"] / FAMILY_WEIGHT)


MONITOR_ALARM_ALPHA = monitor_design().alpha


@dataclass(frozen=True, slots=True)
class FairnessReport:
    """Every test of the family on one stream, judged together at ``alpha``."""

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

    @property
    def applicable_weight(self) -> float:
        """The total weight of the applicable tests (the family the budget was shared over)."""
        return sum(t.weight for t in self.tests if t.applicable)

    def rejected(self) -> list[FairnessCheck]:
        """The rejected tests, strongest evidence (smallest adjusted p-value, then step) first."""
        return sorted((t for t in self.tests if t.rejected), key=lambda t: (t.adjusted_p or 0.0, t.step or 0))


def _na(name: str, rows: int, why: str) -> BatchResult:
    nan = np.full(rows, np.nan)
    return BatchResult(name, name, (), nan, np.zeros(rows, np.int64), nan, ("",) * rows, why)


def chi2_reds(reds: Ints) -> BatchResult:
    """Chi-square of red counts against the binomial(4, ½) weights, df 4."""
    rows, n = reds.shape
    if n * RED_WEIGHTS.min() < 5:
        return _na("chi2_reds", rows, f"{n} settled rounds, need >= 80 (expected count >= 5 per bin)")
    observed = row_counts(reds, 5)
    stat = goodness_of_fit(observed, n * RED_WEIGHTS)
    notes = tuple(f"observed {o.tolist()}" for o in observed)
    return BatchResult("chi2_reds", "chi2_reds", (), stat, np.full(rows, 4, np.int64), chi2_sf(stat, 4), notes)


def chi2_patterns(patterns: Ints) -> BatchResult:
    """Chi-square of the 16 token patterns against uniform, df 15."""
    rows, n = patterns.shape
    if n / 16 < 5:
        return _na("chi2_patterns", rows, f"{n} identified rounds, need >= 80")
    stat = goodness_of_fit(row_counts(patterns, 16), np.full(16, n / 16))
    notes = ("16 patterns, uniform",) * rows
    return BatchResult(
        "chi2_patterns", "chi2_patterns", (), stat, np.full(rows, 15, np.int64), chi2_sf(stat, 15), notes
    )


def token_bias(reds: Ints) -> BatchResult:
    """z = (reds − 2N)/√N (variance of 4 fair tokens is 1 per round); two-sided normal p-value."""
    rows, n = reds.shape
    if n < 30:
        return _na("token_bias", rows, f"{n} settled rounds, need >= 30")
    excess = reds.sum(axis=1) - 2 * n
    z = excess / math.sqrt(n)
    notes = tuple(f"P(red) estimate {0.5 + e / (4 * n):.5f}" for e in excess)
    return BatchResult(
        "token_bias",
        "token_bias",
        (),
        z.astype(np.float64),
        np.zeros(rows, np.int64),
        normal_two_sided(z),
        notes,
        has_df=False,
    )


def runs_odd_even(reds: Ints) -> BatchResult:
    """Wald–Wolfowitz runs test on odd/even: z = (R − μ)/σ with μ = 2n₁n₂/n + 1."""
    z, count, mean, ok = runs((reds % 2).astype(bool))
    why = "fewer than 10 odd or 10 even rounds"
    notes = tuple(f"{c} runs, {m:.1f} expected" if good else why for c, m, good in zip(count, mean, ok, strict=True))
    return BatchResult(
        "runs_odd_even",
        "runs_odd_even",
        (),
        z,
        np.zeros(reds.shape[0], np.int64),
        masked(normal_two_sided(z), ok),
        notes,
        why,
        has_df=False,
    )


def ljung_box(reds: Ints, max_lag: int = 10) -> BatchResult:
    """Ljung–Box Q = n(n+2) Σₖ ρₖ²/(n−k), k = 1..h, h = min(max_lag, n // 5), against chi-square with h degrees
    of freedom. Needs n >= 50 (the chi-square approximation is poor below) and some variation."""
    rows, n = reds.shape
    if n < 50:
        return _na("ljung_box", rows, f"{n} settled rounds, need >= 50")
    lags = min(max_lag, n // 5)
    x = reds.astype(np.float64) - reds.mean(axis=1, keepdims=True)
    denom = (x * x).sum(axis=1)
    varied = denom > 0
    safe = np.where(varied, denom, 1.0)
    rho = np.stack([(x[:, k:] * x[:, :-k]).sum(axis=1) / safe for k in range(1, lags + 1)], axis=1)
    q = n * (n + 2) * (rho**2 / (n - np.arange(1, lags + 1))).sum(axis=1)
    why = f"all {n} settled rounds show the same red count"
    notes = tuple(f"largest |rho| {np.abs(r).max():.4f}" if v else why for r, v in zip(rho, varied, strict=True))
    return BatchResult(
        "ljung_box", "ljung_box", (), q, np.full(rows, lags, np.int64), masked(chi2_sf(q, lags), varied), notes, why
    )


def monitor_test(reds: Ints) -> BatchResult:
    """The live monitor's anytime-valid p-value over every settled round (see :mod:`harness.stats.monitor`):
    p = min(1, 1 / max_n M_n); statistic: z = S/√N over all the rounds."""
    rows, n = reds.shape
    if n == 0:
        return _na("monitor", rows, "no settled rounds")
    excess = np.cumsum(reds - 2, axis=1)
    log_m = log_evidence(excess, monitor_design().rho)
    best = np.argmax(log_m, axis=1)
    p = np.minimum(1.0, np.exp(-np.maximum(0.0, log_m.max(axis=1))))
    total = excess[:, -1]
    notes = tuple(
        f"P(red) estimate {0.5 + t / (4 * n):.5f} over all rounds; strongest evidence at round {b + 1}"
        for t, b in zip(total, best, strict=True)
    )
    return BatchResult("monitor", "monitor", (), total / math.sqrt(n), np.zeros(rows, np.int64), p, notes, has_df=False)


def family(reds: Ints, patterns: Ints | None) -> list[BatchResult]:
    """Every test of :data:`CATALOGUE` that a bare outcome stream allows (all but the re-shake and void tests,
    which need the record's re-shakes and voids), on a batch of settled-round streams (rounds × columns)."""
    tests = [chi2_reds(reds)]
    rows = reds.shape[0]
    if patterns is not None:
        tests.append(chi2_patterns(patterns))
    else:
        tests.append(_na("chi2_patterns", rows, "tokens not identified (faces missing)"))
    tests += [token_bias(reds), runs_odd_even(reds), ljung_box(reds)]
    tests += lab_battery(reds, patterns)
    tests.append(monitor_test(reds))
    return tests


def fails(tests: list[BatchResult], alpha: float = ALPHA) -> npt.NDArray[np.bool_]:
    """Per batch row, whether the weighted Holm step-down at ``alpha`` rejects at least one test: exactly when
    the first step does, min over tests of p / w <= alpha / (total weight of the applicable tests)."""
    p = np.stack([t.p for t in tests], axis=1)
    w = np.array([WEIGHTS[t.kind] for t in tests], dtype=np.float64)
    live = ~np.isnan(p)
    ratio = np.where(live, p, np.inf) / w
    total = (live * w).sum(axis=1)
    return np.asarray(ratio.min(axis=1) <= alpha / np.where(total > 0, total, np.inf))


def _independence(name: str, flags: npt.NDArray[np.bool_], reds: Ints, what: str) -> FairnessCheck:
    stats = scipy_stats()
    if not flags.any() or flags.all():
        return not_applicable(name, f"no settled round {what}" if not flags.any() else f"every settled round {what}")
    classes = _CLASSES[reds]
    table = np.array([np.bincount(classes[flags], minlength=3), np.bincount(classes[~flags], minlength=3)])
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    if expected.min() < 5:
        why = f"expected cell count {expected.min():.1f} < 5 ({int(flags.sum())} settled rounds {what})"
        return not_applicable(name, why)
    res = stats.chi2_contingency(table, correction=False)
    return FairnessCheck(
        name,
        float(res.statistic),
        int(res.dof),
        float(res.pvalue),
        f"{int(flags.sum())} settled rounds {what}",
        name,
    )


def _check(result: BatchResult) -> FairnessCheck:
    p = float(result.p[0])
    if math.isnan(p):
        return not_applicable(result.name, result.notes[0] or result.why, result.kind, result.tokens)
    df = int(result.df[0]) if result.has_df else None
    return FairnessCheck(result.name, float(result.statistic[0]), df, p, result.notes[0], result.kind, result.tokens)


def judge(tests: list[FairnessCheck], alpha: float = ALPHA) -> list[FairnessCheck]:
    """Give each test its catalogue weight and apply the weighted Holm step-down at ``alpha``; returns the tests
    in their original order with step, threshold, adjusted p-value, decision and ``blocked_by`` set.

    Raises:
        ValueError: a test whose kind is not in :data:`CATALOGUE` (the message names the allowed kinds), or an
            ``alpha`` not strictly between 0 and 1.
    """
    weighted: list[FairnessCheck] = []
    for t in tests:
        kind = t.kind or t.name
        if kind not in WEIGHTS:
            raise ValueError(f"test {t.name}: kind {kind!r} is not one of {', '.join(WEIGHTS)}")
        weighted.append(replace(t, kind=kind, weight=WEIGHTS[kind]))
    steps = weighted_holm([(t.name, t.p_value, t.weight) for t in weighted], alpha)
    out = []
    for t in weighted:
        s = steps.get(t.name)
        out.append(
            t
            if s is None
            else replace(
                t,
                step=s.step,
                threshold=s.threshold,
                adjusted_p=s.adjusted_p,
                rejected=s.rejected,
                blocked_by=s.blocked_by,
            )
        )
    return out


def fairness_report(stream: OutcomeArrays, alpha: float = ALPHA) -> FairnessReport:
    """Run every test of :data:`CATALOGUE` on ``stream`` and judge them together at ``alpha``.

    Raises:
        ValueError: ``alpha`` not strictly between 0 and 1.
    """
    settled = stream.settled
    reds = stream.reds[settled]
    patterns = stream.patterns[settled] if stream.identified else None
    batch = family(reds.reshape(1, -1), None if patterns is None else patterns.reshape(1, -1))
    tests = [_check(b) for b in batch]
    tests.append(_independence("reshake_independence", stream.reshakes[settled] > 0, reds, "was re-shaken"))
    voided = ~settled
    after_void = np.concatenate([[False], voided[:-1]])[settled] if len(voided) else np.zeros(0, dtype=bool)
    tests.append(_independence("void_independence", after_void, reds, "follows a void/cancelled round"))
    return FairnessReport(len(stream.reds), int(settled.sum()), int(voided.sum()), tuple(judge(tests, alpha)), alpha)
