"""What the judge reports: a :class:`Difference` (one way the server disagrees with the rules, naming the clause
whose check failed) and a :class:`Finding` (a root-cause difference with the differences it explains)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Difference:
    """One way the server disagrees with the rules. ``round`` is the server's round id ("" for a player-level
    difference), ``bet`` the server's bet id ("" when no single bet is concerned)."""

    round: str
    bet: str
    clause: str
    what: str
    expected: str
    actual: str

    def __str__(self) -> str:
        where = f"round {self.round}" if self.round else "account"
        if self.bet:
            where += f" bet {self.bet}"
        return f"{where} [{self.clause}]: {self.what}: expected {self.expected}, server {self.actual}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One root cause: the difference whose clause's check failed first, and the differences it explains (a wrong
    outcome explains every bet of the round paid on it; a wrong bet explains its player's balance)."""

    root: Difference
    consequences: tuple[Difference, ...] = ()

    @property
    def clause(self) -> str:
        return self.root.clause

    def lines(self) -> list[str]:
        return [str(self.root), *(f"    consequence: {d}" for d in self.consequences)]
