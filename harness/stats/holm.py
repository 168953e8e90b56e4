"""Weighted Holm step-down: one family-wise error budget over every test of an audit.

Each applicable test i has a p-value pᵢ and a weight wᵢ > 0 (fixed in the catalogue before any data is seen).
Sort the tests by pᵢ / wᵢ. At step j (1-based), with W_j the total weight of the tests ranked j-th and later, the
j-th test is rejected when p ≤ α · w / W_j; the procedure stops at the first test that is not rejected, and
every later test is kept. With equal weights this is Holm (1979); with any weights and any dependence between
the tests, the chance of one or more false rejections is at most α (Holm 1979, the weighted form).

The adjusted p-value of the j-th test is max over k ≤ j of min(1, p₍ₖ₎ · W_k / w₍ₖ₎): a test is rejected exactly
when its adjusted p-value is ≤ α, which makes the decision readable at any other level too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HolmStep:
    """The decision on one test: its step (1 = tested first), threshold, adjusted p-value and whether it was
    rejected. ``blocked_by`` names the test at which the step-down stopped, when this one was reached no more."""

    step: int
    threshold: float
    adjusted_p: float
    rejected: bool
    blocked_by: str | None


def weighted_holm(tests: list[tuple[str, float | None, float]], alpha: float) -> dict[str, HolmStep]:
    """Judge ``tests`` (name, p-value or ``None`` for not applicable, weight) together at ``alpha``.

    Returns one :class:`HolmStep` per applicable test, keyed by name; not-applicable tests are left out of the
    family (they neither spend nor share the budget).

    Raises:
        ValueError: ``alpha`` not strictly between 0 and 1, a weight <= 0, a p-value outside 0..1, or two tests
            with one name.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    names = [name for name, _, _ in tests]
    if len(set(names)) != len(names):
        raise ValueError(f"test names must be unique, got {names}")
    for name, p, weight in tests:
        if weight <= 0:
            raise ValueError(f"test {name}: weight must be > 0, got {weight}")
        if p is not None and not 0 <= p <= 1:
            raise ValueError(f"test {name}: p-value must be in 0..1, got {p}")
    ranked = sorted(((p / w, name, p, w) for name, p, w in tests if p is not None), key=lambda item: (item[0], item[1]))
    suffix = [sum(w for _, _, _, w in ranked[j:]) for j in range(len(ranked))]
    out: dict[str, HolmStep] = {}
    stopped_at: str | None = None
    running_max = 0.0
    for step, ((_, name, p, w), weight_left) in enumerate(zip(ranked, suffix, strict=True), start=1):
        threshold = alpha * w / weight_left
        running_max = max(running_max, min(1.0, p * weight_left / w))
        if stopped_at is None and p > threshold:
            stopped_at = name
        rejected = stopped_at is None
        blocked = None if rejected or stopped_at == name else stopped_at
        out[name] = HolmStep(step, threshold, running_max, rejected, blocked)
    return out
