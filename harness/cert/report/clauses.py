"""Clause IDs and the clause traceability matrix.

The clause list is read from the catalogues (:data:`CATALOGUES`): the rules catalogue ``fixtures/rules/RULES.md`` (a
copy of the shared ``rules/RULES.md``), then the kit's access-control catalogue ``fixtures/rules/ACCESS.md``; every
table row whose first cell is an ID like ``SH-3``, ``SH-4a`` or ``ACC-1``. The matrix maps each
clause to the scenarios tagged with it (``@clause:SH-3``) or whose checks evaluated it, and gives each clause one
result, from the checks that ran, never from tags alone:

- ``FAIL``: a check *of this clause* failed in some scenario (the root cause that scenario names);
- ``NOT DECIDED``: otherwise, a scenario tagged with it failed on another clause's check (or outside any clause
  check) before any check of this clause ran there; the reason names the scenario and what it failed on;
- ``PASS``: otherwise, a check of it ran and held;
- ``NOT APPLICABLE``: every scenario of it was not applicable to the bench;
- ``UNCHECKED``: scenarios are tagged with it, but no check of it ran anywhere.

A catalogue clause is *covered* only when a check of it ran (passed or failed) in a scenario that ran; the others
are ``uncovered``. Tag expressions (``--tags``) select scenarios by their tags.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import InputError
from harness.files import FIXTURES
from harness.table_config import FIELDS, TableConfig, non_default

RULES_PATH = FIXTURES / "rules" / "RULES.md"
ACCESS_PATH = FIXTURES / "rules" / "ACCESS.md"
#: Every clause catalogue, in the order their clauses are listed (coverage counts the clauses of all of them).
CATALOGUES: tuple[Path, ...] = (RULES_PATH, ACCESS_PATH)
#: How certify's output names the catalogues.
CATALOGUE_NAMES = " and ".join(path.name for path in CATALOGUES)
_ROW = re.compile(r"^\|\s*([A-Z]+-\d+[a-z]?)\s*\|")
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def _lines(path: Path | None) -> list[str]:
    """The lines of ``path``, or of every catalogue in :data:`CATALOGUES` order when None."""
    paths = CATALOGUES if path is None else (path,)
    return [line for p in paths for line in p.read_text(encoding="utf-8").splitlines()]


def rule_clauses(path: Path | None = None) -> list[str]:
    """Every clause ID of the catalogue ``path`` (None: of every catalogue, :data:`CATALOGUES`), in document order.

    Raises:
        OSError: a file cannot be read.
    """
    out: list[str] = []
    for line in _lines(path):
        m = _ROW.match(line)
        if m and m.group(1) not in out:
            out.append(m.group(1))
    return out


def rule_texts(path: Path | None = None) -> dict[str, str]:
    """Each clause ID of the catalogue ``path`` (None: of every catalogue) with its rule's text (the row's other
    cells, joined by " | "; markdown emphasis and code marks kept as written).

    Raises:
        OSError: a file cannot be read.
    """
    out: dict[str, str] = {}
    for line in _lines(path):
        m = _ROW.match(line)
        if m and m.group(1) not in out:
            cells = [c.strip() for c in line.strip().strip("|").split("|")[1:]]
            out[m.group(1)] = " | ".join(c for c in cells if c)
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
    checked: tuple[str, ...] = ()  # clauses a check of which ran in the scenario
    failed_clauses: tuple[str, ...] = ()  # clauses whose check failed: the root cause the scenario names
    where: str = ""  # feature file and line of the scenario
    server: str = ""  # "reached": the scenario's rig was built; "unreached": building it failed; "": none needed

    @property
    def ran(self) -> bool:
        """The scenario ran on the bench (passed or failed), rather than being not applicable or skipped."""
        return self.outcome in ("passed", "failed")


NOT_APPLICABLE = "not-applicable"
FAIL, NOT_DECIDED, PASS, NOT_APPLICABLE_RESULT, UNCHECKED, UNCOVERED = (
    "FAIL",
    "NOT DECIDED",
    "PASS",
    "NOT APPLICABLE",
    "UNCHECKED",
    "UNCOVERED",
)


def clause_result(clause: str, results: Iterable[ScenarioResult]) -> tuple[str, str]:
    """The clause's one result over its scenarios, and the reason for ``NOT DECIDED`` (module docstring)."""
    rows = list(results)
    if not rows:
        return UNCOVERED, ""
    if any(clause in r.failed_clauses for r in rows):
        return FAIL, ""
    undecided = [r for r in rows if r.outcome == "failed" and clause in r.clauses and clause not in r.checked]
    if undecided:
        r = undecided[0]
        on = ", ".join(r.failed_clauses) or "an error outside any clause check"
        return NOT_DECIDED, f"{r.title} ({r.where or r.nodeid}) failed on {on}"
    if any(r.ran and clause in r.checked for r in rows):
        return PASS, ""
    if all(r.outcome == NOT_APPLICABLE for r in rows):
        return NOT_APPLICABLE_RESULT, ""
    return UNCHECKED, "tagged, but no check of it ran"


@dataclass(frozen=True, slots=True)
class Matrix:
    """clause → scenario results; ``uncovered``: catalogue clauses without a scenario; ``unexercised``: catalogue
    clauses whose every scenario was not applicable to the bench (listed, not failed)."""

    rows: Mapping[str, tuple[ScenarioResult, ...]]
    uncovered: tuple[str, ...]
    failed: int
    passed: int
    unexercised: tuple[str, ...] = ()
    reached: bool = True  # some scenario reached the server, or none needed it
    table: TableConfig | None = None  # the bench's table configuration the scenarios followed, when known

    def table_rows(self) -> list[dict[str, object]]:
        """The table configuration, one row per field in :data:`~harness.table_config.FIELDS` order: its name, value
        and whether that is the default; empty when the configuration is not known."""
        if self.table is None:
            return []
        changed = non_default(self.table)
        return [
            {"field": f.name, "value": getattr(self.table, f.name), "default": f.name not in changed} for f in FIELDS
        ]

    def result(self, clause: str) -> tuple[str, str]:
        """The clause's result and its reason (:func:`clause_result`)."""
        return clause_result(clause, self.rows.get(clause, ()))

    @property
    def failures(self) -> tuple[ScenarioResult, ...]:
        """The failed scenarios, each once, in matrix order."""
        seen: dict[str, ScenarioResult] = {}
        for results in self.rows.values():
            for r in results:
                if r.outcome == "failed":
                    seen.setdefault(r.nodeid, r)
        return tuple(seen.values())

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
                    "checked": clause in r.checked,
                    **({"reason": r.reason} if r.reason else {}),
                }
                for r in results
            ]
            for clause, results in self.rows.items()
        }
        verdicts = {}
        for clause in self.rows:
            result, reason = self.result(clause)
            verdicts[clause] = {"result": result, **({"reason": reason} if reason else {})}
        doc = {
            "clauses": rows,
            "results": verdicts,
            "failures": [
                {
                    "scenario": r.title,
                    "nodeid": r.nodeid,
                    "where": r.where,
                    "failed_clauses": list(r.failed_clauses),
                    "clauses": list(r.clauses),
                }
                for r in self.failures
            ],
            "uncovered": list(self.uncovered),
            "unexercised": list(self.unexercised),
            "not_applicable": [
                {"scenario": r.title, "nodeid": r.nodeid, "clauses": list(r.clauses), "reason": r.reason}
                for r in self.not_applicable
            ],
            "passed": self.passed,
            "failed": self.failed,
            "reached": self.reached,
        }
        if self.table is not None:
            doc["table"] = self.table_rows()
        return json.dumps(doc, indent=2)

    def to_markdown(self) -> str:
        lines = [
            "| clause | scenarios | checked in | passed | failed | not applicable | result |",
            "|---|---|---|---|---|---|---|",
        ]
        for clause, results in self.rows.items():
            ok = sum(r.outcome == "passed" for r in results)
            bad = sum(r.outcome == "failed" for r in results)
            na = sum(r.outcome == NOT_APPLICABLE for r in results)
            checked = sum(r.ran and clause in r.checked for r in results)
            verdict, reason = self.result(clause)
            shown = f"{verdict}: {reason}" if reason else verdict
            lines.append(f"| {clause} | {len(results)} | {checked} | {ok} | {bad} | {na} | {shown} |")
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
        if self.table is not None:
            lines += [
                "",
                "## Table configuration",
                "",
                "The bench's choices on what the rules leave open (docs/table-configuration.md).",
                "",
                "| field | value | default |",
                "|---|---|---|",
            ]
            for row in self.table_rows():
                value = "null" if row["value"] is None else row["value"]
                lines.append(f"| {row['field']} | {value} | {'yes' if row['default'] else 'no'} |")
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        rules = [c for c in self.rows if not c.startswith("GLI ")]
        covered = sum(1 for c in rules if self.result(c)[0] in (PASS, FAIL, NOT_DECIDED) and c not in self.uncovered)
        gli = sum(1 for c, r in self.rows.items() if c.startswith("GLI ") and any(x.ran for x in r))
        text = (
            f"rules clauses covered: {covered}/{len(rules)}; GLI references exercised: {gli}; "
            f"scenarios passed {self.passed}, failed {self.failed}"
        )
        if self.uncovered:
            text += "\nuncovered: " + ", ".join(self.uncovered)
        return text


def build_matrix(clauses: Iterable[str], results: Iterable[ScenarioResult], table: TableConfig | None = None) -> Matrix:
    """Group scenario results by clause: catalogue clauses first, then any other tagged clause, then the GLI
    clauses (``GLI 4.16``) scenarios certify. Only catalogue clauses can be uncovered. ``table``: the bench's table
    configuration, listed in the matrix (:meth:`Matrix.table_rows`)."""
    ordered = list(clauses)
    rows: dict[str, list[ScenarioResult]] = {c: [] for c in ordered}
    all_results = list(results)
    for result in all_results:
        named = (*result.clauses, *(f"GLI {g}" for g in result.gli), *result.checked, *result.failed_clauses)
        for clause in dict.fromkeys(named):
            rows.setdefault(clause, []).append(result)
    checked = {c for r in all_results if r.ran for c in (*r.checked, *r.failed_clauses)}
    unexercised = tuple(
        c for c in ordered if rows[c] and c not in checked and all(r.outcome == NOT_APPLICABLE for r in rows[c])
    )
    uncovered = tuple(c for c in ordered if c not in checked and c not in unexercised)
    failed = sum(r.outcome == "failed" for r in all_results)
    passed = sum(r.outcome == "passed" for r in all_results)
    servers = {r.server for r in all_results}
    reached = "reached" in servers or "unreached" not in servers
    return Matrix({c: tuple(r) for c, r in rows.items()}, uncovered, failed, passed, unexercised, reached, table)


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
