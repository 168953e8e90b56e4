"""Checks that ran, each naming the one clause it decides: what coverage and failures are counted from.

A :class:`Check` is one evaluation of one rule clause on something the bench observed (a round, a bet, a
document), passed or failed. A :class:`CheckLog` keeps a scenario's (or a run's) checks in the order they ran;
:meth:`CheckLog.require` records a check and raises :class:`ClauseFailure` when it failed, so a step's assertion
names its clause and the matrix can tell "this clause's check failed" from "this scenario failed on another
clause". A clause counts as covered only through a check recorded here, never through a tag.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Check:
    """One evaluation of ``clause``: ``what`` was checked, whether it held, and (failed) what was seen."""

    clause: str
    what: str
    passed: bool
    detail: str = ""


class ClauseFailure(AssertionError):
    """A check of ``clause`` failed. ``consequences`` are the further failures it explains (listed under it, not
    as findings of their own); ``seen`` what the failing step saw, when the judge named the root cause for it. An
    :class:`AssertionError`, so pytest reports it as a failed assertion."""

    def __init__(self, clause: str, message: str, consequences: Sequence[str] = (), seen: str = "") -> None:
        self.clause = clause
        self.message = message
        self.consequences = tuple(consequences)
        self.seen = seen
        lines = [f"[{clause}] {message}"]
        lines += [f"    the step saw: {seen}"] if seen else []
        lines += [f"    consequence: {c}" for c in self.consequences]
        super().__init__("\n".join(lines))


class CheckLog:
    """The checks of one scenario or run, in the order they ran. Not thread-safe: one scenario, one log."""

    def __init__(self) -> None:
        self._checks: list[Check] = []

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(self._checks)

    def record(self, clause: str, what: str, passed: bool, detail: str = "") -> Check:
        """Append one check and return it. Raises ValueError on an empty clause (a check must name its rule)."""
        if not clause:
            raise ValueError(f"a check must name its clause: {what!r}")
        check = Check(clause, what, passed, detail)
        self._checks.append(check)
        return check

    def extend(self, checks: Iterable[Check]) -> None:
        """Append checks made elsewhere (the judge's), in their order."""
        for check in checks:
            self.record(check.clause, check.what, check.passed, check.detail)

    def require(self, clause: str, ok: bool, what: str, detail: str = "") -> None:
        """Record a check of ``clause`` on ``what``; return when it held.

        Raises:
            ClauseFailure: ``ok`` is false (the message is ``what``, then ``detail`` when given).
        """
        self.record(clause, what, ok, detail)
        if not ok:
            raise ClauseFailure(clause, f"{what}: {detail}" if detail else what)

    def ran(self) -> list[str]:
        """Every clause with at least one check, in the order first checked."""
        return list(dict.fromkeys(c.clause for c in self._checks))

    def failed(self) -> list[str]:
        """Every clause with at least one failed check, in the order first failed."""
        return list(dict.fromkeys(c.clause for c in self._checks if not c.passed))
