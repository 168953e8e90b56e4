"""Clause IDs and the clause traceability matrix.

The clause list is read from the rules catalogue (``fixtures/rules/RULES.md``, a copy of the shared
``rules/RULES.md``): every table row whose first cell is an ID like ``SH-3`` or ``SH-4a``. The matrix maps each
clause to the scenarios tagged with it (``@clause:SH-3``) and their results, and lists the clauses no scenario
covers. Tag expressions (``--tags``) select scenarios by their tags.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import InputError
from harness.files import FIXTURES

RULES_PATH = FIXTURES / "rules" / "RULES.md"
_ROW = re.compile(r"^\|\s*([A-Z]+-\d+[a-z]?)\s*\|")
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def rule_clauses(path: Path = RULES_PATH) -> list[str]:
    """Every clause ID of the catalogue, in document order.

    Raises:
        OSError: the file cannot be read.
    """
    out: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """One run scenario: its pytest id, title, clause and GLI tags, and outcome (passed, failed, skipped, or
    ``not-applicable``: the bench cannot do what the scenario needs, ``reason`` says what)."""

    nodeid: str
    title: str
    clauses: tuple[str, ...]
    gli: tuple[str, ...]
    outcome: str
    reason: str = ""


NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True, slots=True)
class Matrix:
    """clause → scenario results; ``uncovered``: catalogue clauses without a scenario; ``unexercised``: catalogue
    clauses whose every scenario was not applicable to the bench (listed, not failed)."""

    rows: Mapping[str, tuple[ScenarioResult, ...]]
    uncovered: tuple[str, ...]
    failed: int
    passed: int
    unexercised: tuple[str, ...] = ()

    @property
    def not_applicable(self) -> tuple[ScenarioResult, ...]:
        """The scenarios not applicable to the bench, each once, in matrix order."""
        seen: dict[str, ScenarioResult] = {}
        for results in self.rows.values():
            for r in results:
                if r.outcome == NOT_APPLICABLE:
                    seen.setdefault(r.nodeid, r)
        return tuple(seen.values())

    def to_json(self) -> str:
        rows = {
            clause: [
                {
                    "scenario": r.title,
                    "nodeid": r.nodeid,
                    "outcome": r.outcome,
                    **({"reason": r.reason} if r.reason else {}),
                }
                for r in results
            ]
            for clause, results in self.rows.items()
        }
        doc = {
            "clauses": rows,
            "uncovered": list(self.uncovered),
            "unexercised": list(self.unexercised),
            "not_applicable": [
                {"scenario": r.title, "nodeid": r.nodeid, "clauses": list(r.clauses), "reason": r.reason}
                for r in self.not_applicable
            ],
            "passed": self.passed,
            "failed": self.failed,
        }
        return json.dumps(doc, indent=2)

    def to_markdown(self) -> str:
        lines = ["| clause | scenarios | passed | failed | not applicable | result |", "|---|---|---|---|---|---|"]
        for clause, results in self.rows.items():
            ok = sum(r.outcome == "passed" for r in results)
            bad = sum(r.outcome == "failed" for r in results)
            na = sum(r.outcome == NOT_APPLICABLE for r in results)
            verdict = (
                "UNCOVERED"
                if not results
                else ("FAIL" if bad else ("NOT APPLICABLE" if na == len(results) else "PASS"))
            )
            lines.append(f"| {clause} | {len(results)} | {ok} | {bad} | {na} | {verdict} |")
        if self.uncovered:
            lines.append("")
            lines.append("Uncovered clauses: " + ", ".join(self.uncovered))
        if self.unexercised:
            lines.append("")
            lines.append(
                "Clauses not exercised on this bench (every scenario not applicable): " + ", ".join(self.unexercised)
            )
        if self.not_applicable:
            lines += ["", "Scenarios not applicable to this bench:", ""]
            lines += [f"- {r.title} ({', '.join(r.clauses) or 'no clause'}): {r.reason}" for r in self.not_applicable]
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        rules = [c for c in self.rows if not c.startswith("GLI ")]
        covered = sum(1 for c in rules if self.rows[c])
        gli = sum(1 for c, r in self.rows.items() if c.startswith("GLI ") and r)
        text = (
            f"rules clauses covered: {covered}/{len(rules)}; GLI references exercised: {gli}; "
            f"scenarios passed {self.passed}, failed {self.failed}"
        )
        if self.uncovered:
            text += "\nuncovered: " + ", ".join(self.uncovered)
        return text


def build_matrix(clauses: Iterable[str], results: Iterable[ScenarioResult]) -> Matrix:
    """Group scenario results by clause: catalogue clauses first, then any other tagged clause, then the GLI
    clauses (``GLI 4.16``) scenarios certify. Only catalogue clauses can be uncovered."""
    ordered = list(clauses)
    rows: dict[str, list[ScenarioResult]] = {c: [] for c in ordered}
    all_results = list(results)
    for result in all_results:
        for clause in (*result.clauses, *(f"GLI {g}" for g in result.gli)):
            rows.setdefault(clause, []).append(result)
    uncovered = tuple(c for c in ordered if not rows[c])
    unexercised = tuple(c for c in ordered if rows[c] and all(r.outcome == NOT_APPLICABLE for r in rows[c]))
    failed = sum(r.outcome == "failed" for r in all_results)
    passed = sum(r.outcome == "passed" for r in all_results)
    return Matrix({c: tuple(r) for c, r in rows.items()}, uncovered, failed, passed, unexercised)


def matches(expression: str, tags: Iterable[str]) -> bool:
    """Whether a scenario with ``tags`` matches a tag expression: tags (``clause:SH-3``, ``@gli:4.16``) combined
    with ``and``, ``or``, ``not`` and parentheses. An empty expression matches everything.

    Raises:
        InputError: an expression that does not parse (the message quotes it).
    """
    if not expression.strip():
        return True
    have = {t.lstrip("@") for t in tags}
    parts: list[str] = []
    for token in _TOKEN.findall(expression):
        if token in ("and", "or", "not", "(", ")"):
            parts.append(token)
        else:
            parts.append(str(token.lstrip("@") in have))
    try:
        return bool(eval(" ".join(parts), {"__builtins__": {}}, {}))  # only True/False/and/or/not/()
    except SyntaxError:
        raise InputError(f"invalid tag expression {expression!r}: use tags with and, or, not, ( )") from None
