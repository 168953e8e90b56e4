"""The verdicts an evidence pack records (``verdicts.json``): per scenario and per clause, from the run's clause
matrix (``clause-matrix.json``, :mod:`harness.cert.report.clauses`).

``scenarios``: one entry per scenario (by pytest node id, sorted): its title, outcome (``passed``, ``failed``,
``not applicable``, ...), its clauses, and per clause whether a check of it ran; the reason when not applicable;
the clauses whose check failed when it failed. ``clauses``: each clause's result (``PASS``, ``FAIL``,
``NOT DECIDED``, ``UNCOVERED``, ...) with its reason. ``verdict``: ``PASS`` when certify's exit status was 0, else
``FAIL``; ``exit_status`` beside it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

VERDICTS_FILE = "verdicts.json"


def verdicts(matrix: dict[str, Any] | None, exit_status: int) -> dict[str, Any]:
    """The ``verdicts.json`` document of a run whose clause matrix is ``matrix`` (None: no scenario ran)."""
    scenarios: dict[str, dict[str, Any]] = {}
    doc: dict[str, Any] = matrix or {}
    for clause, rows in doc.get("clauses", {}).items():
        for row in rows:
            entry = scenarios.setdefault(
                row["nodeid"], {"scenario": row["scenario"], "outcome": row["outcome"], "clauses": {}}
            )
            entry["clauses"][clause] = "checked" if row.get("checked") else "not checked"
            if row.get("reason"):
                entry["reason"] = row["reason"]
    for failure in doc.get("failures", []):
        failed = scenarios.get(failure["nodeid"])
        if failed is not None:
            failed["failed_clauses"] = list(failure.get("failed_clauses", []))
            failed["where"] = failure.get("where", "")
    for row in doc.get("not_applicable", []):
        skipped = scenarios.get(row["nodeid"])
        if skipped is not None:
            skipped["reason"] = row.get("reason", "")
    return {
        "verdict": "PASS" if exit_status == 0 else "FAIL",
        "exit_status": exit_status,
        "scenarios": dict(sorted(scenarios.items())),
        "clauses": doc.get("results", {}),
    }


def counts(doc: dict[str, Any]) -> dict[str, dict[str, int]]:
    """How many scenarios ended each way, how many rule clauses (the catalogues' clause ids) have each result, and
    how many GLI references (``GLI 2.8.2``: a standard's section the scenarios are tagged with, not a clause of the
    catalogues) have each, from a ``verdicts.json`` document."""
    outcomes = Counter(str(s.get("outcome")) for s in doc.get("scenarios", {}).values())
    clauses = doc.get("clauses", {})
    results = Counter(str(c.get("result")) for k, c in clauses.items() if not k.startswith("GLI "))
    gli = Counter(str(c.get("result")) for k, c in clauses.items() if k.startswith("GLI "))
    return {
        "scenarios": dict(sorted(outcomes.items())),
        "clauses": dict(sorted(results.items())),
        "gli_references": dict(sorted(gli.items())),
    }
