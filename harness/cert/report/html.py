"""Allure results: the clause matrix as an allure result, and what the built-in page reads from a results folder.

:func:`write_matrix_result` puts the clause traceability matrix into an ``allure-results`` folder as one more test
result ("Clause traceability matrix", failed when a clause is uncovered or failing) with the matrix as an HTML
attachment, so that every allure report of the run shows it. The built-in report page
(:mod:`harness.cert.report.page`) reads results with :func:`_load` and shares the style sheet :data:`_CSS`.
"""

from __future__ import annotations

import html
import json
import time
import uuid
from pathlib import Path
from typing import Any

from harness.cert.report.clauses import Matrix

MATRIX_NAME = "Clause traceability matrix"


def matrix_html(matrix: Matrix) -> str:
    """The matrix as an HTML table: clause, each scenario and its outcome; uncovered clauses marked."""
    rows = []
    for clause, results in matrix.rows.items():
        if not results:
            rows.append(f"<tr class='uncovered'><td>{html.escape(clause)}</td><td>UNCOVERED</td><td></td></tr>")
        for r in results:
            rows.append(
                f"<tr class='{html.escape(r.outcome)}'><td>{html.escape(clause)}</td>"
                f"<td>{html.escape(r.title)}</td><td>{html.escape(r.outcome)}</td></tr>"
            )
    head = f"<p>{html.escape(matrix.summary())}</p>"
    return head + "<table><tr><th>clause</th><th>scenario</th><th>result</th></tr>" + "".join(rows) + "</table>"


def write_matrix_result(folder: Path, matrix: Matrix) -> None:
    """Add the matrix to ``folder`` (allure-results) as a result with an HTML attachment."""
    folder.mkdir(parents=True, exist_ok=True)
    source = f"{uuid.uuid4()}-attachment.html"
    page = f"<html><head><meta charset='utf-8'><style>{_CSS}</style></head><body>{matrix_html(matrix)}</body></html>"
    (folder / source).write_text(page, encoding="utf-8")
    now = int(time.time() * 1000)
    bad = bool(matrix.uncovered) or matrix.failed > 0
    result = {
        "uuid": str(uuid.uuid4()),
        "historyId": "xocdia-clause-matrix",
        "name": MATRIX_NAME,
        "fullName": "certification.clause_matrix",
        "status": "failed" if bad else "passed",
        "statusDetails": {"message": matrix.summary()},
        "stage": "finished",
        "start": now,
        "stop": now,
        "labels": [{"name": "suite", "value": "certification"}, {"name": "feature", "value": "Traceability"}],
        "attachments": [{"name": MATRIX_NAME, "source": source, "type": "text/html"}],
        "steps": [],
    }
    (folder / f"{result['uuid']}-result.json").write_text(json.dumps(result), encoding="utf-8")


def _load(folder: Path) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    results: list[dict[str, Any]] = []
    extra: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*-result.json")):
        results.append(json.loads(path.read_text(encoding="utf-8")))
    for path in sorted(folder.glob("*-container.json")):
        container = json.loads(path.read_text(encoding="utf-8"))
        fixtures = container.get("befores", []) + container.get("afters", [])
        for child in container.get("children", []):
            extra.setdefault(child, []).extend(fixtures)
    return results, extra


_CSS = (
    "body{font-family:sans-serif;margin:1em}section{border:1px solid #ccc;margin:.5em 0;padding:.3em .8em}"
    ".failed,.broken,.uncovered{background:#fde8e8}.passed{background:#eefbea}.skipped{background:#f4f4f4}"
    "pre{white-space:pre-wrap;font-size:12px}table{border-collapse:collapse}"
    "td,th{border:1px solid #bbb;padding:2px 6px}"
    ".labels{color:#555;font-size:12px}"
)
