"""One statistical test's result, as every test of the audit's family reports it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FairnessCheck:
    """One test of the family. ``p_value`` is None when the test is not applicable (left out of the family).

    ``weight`` is the test's share of the family-wise budget (from the catalogue); ``tokens`` the tokens it
    looks at (empty: the round as a whole). ``step``, ``threshold``, ``adjusted_p``, ``rejected`` and
    ``blocked_by`` are filled in by the weighted Holm step-down (``blocked_by``: the test at which the step-down
    stopped before reaching this one).
    """

    name: str
    statistic: float | None
    df: int | None
    p_value: float | None
    note: str
    kind: str = ""
    tokens: tuple[int, ...] = ()
    weight: float = 1.0
    step: int | None = None
    threshold: float | None = None
    adjusted_p: float | None = None
    rejected: bool = False
    blocked_by: str | None = None

    @property
    def applicable(self) -> bool:
        return self.p_value is not None

    @property
    def below_threshold_not_rejected(self) -> bool:
        """The raw p-value is under this test's own threshold, but the step-down stopped before it."""
        return (
            self.p_value is not None
            and self.threshold is not None
            and self.p_value <= self.threshold
            and not self.rejected
        )


def not_applicable(name: str, why: str, kind: str = "", tokens: tuple[int, ...] = ()) -> FairnessCheck:
    """A test that could not be run on this stream; ``why`` says what it needs."""
    return FairnessCheck(name, None, None, None, f"not applicable: {why}", kind or name, tokens)
