"""Allure results → reports: the clause matrix as an allure result, and a self-contained HTML fallback.

:func:`write_matrix_result` puts the clause traceability matrix into an ``allure-results`` folder as one more test
result ("Clause traceability matrix", failed when a clause is uncovered or failing) with the matrix as an HTML
attachment, so that every allure report of the run shows it.

:func:`render` is the fallback when the npm ``allure`` package cannot be run: one HTML file, no scripts, no
external resources (opens offline), listing every result with its labels, steps and attachments (the serial
traces, timelines and oracle verdicts attached in fixture teardowns included), the matrix first.
"""

from __future__ import annotations

import html
import json
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.cert.report.clauses import Matrix

MATRIX_NAME = "Clause traceability matrix"
_TEXT_TYPES = ("text/plain", "application/json", "text/csv", "text/html")


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


def _attachments(folder: Path, items: Iterable[dict[str, Any]]) -> str:
    out = []
    for a in items:
        path = folder / str(a.get("source", ""))
        name = html.escape(str(a.get("name", "attachment")))
        kind = str(a.get("type", ""))
        if not path.is_file():
            continue
        if kind == "text/html":
            out.append(f"<details><summary>{name}</summary>{path.read_text(encoding='utf-8')}</details>")
        elif kind in _TEXT_TYPES or path.suffix in (".txt", ".json", ".csv"):
            body = html.escape(path.read_text(encoding="utf-8", errors="replace"))
            out.append(f"<details><summary>{name}</summary><pre>{body}</pre></details>")
        else:
            out.append(f"<p>{name} ({html.escape(kind)}, not inlined)</p>")
    return "".join(out)


def _steps(folder: Path, steps: Iterable[dict[str, Any]]) -> str:
    items = []
    for s in steps:
        status = html.escape(str(s.get("status", "")))
        inner = _steps(folder, s.get("steps", [])) + _attachments(folder, s.get("attachments", []))
        items.append(f"<li class='{status}'>{html.escape(str(s.get('name', '')))} — {status}{inner}</li>")
    return f"<ol>{''.join(items)}</ol>" if items else ""


def render(folder: Path, out: Path) -> Path:
    """Write ``out/index.html`` from the allure results in ``folder``; returns its path.

    Raises:
        FileNotFoundError: ``folder`` has no allure results.
    """
    results, fixtures = _load(folder)
    if not results:
        raise FileNotFoundError(f"no allure results in {folder}")
    results.sort(key=lambda r: (r.get("name") != MATRIX_NAME, r.get("status") == "passed", r.get("name", "")))
    counts: dict[str, int] = {}
    sections = []
    for r in results:
        status = str(r.get("status", "unknown"))
        counts[status] = counts.get(status, 0) + 1
        labels = ", ".join(
            f"{html.escape(str(lb['name']))}={html.escape(str(lb['value']))}"
            for lb in r.get("labels", [])
            if lb.get("name") in ("clause", "gli", "severity", "feature", "suite")
        )
        message = html.escape(str((r.get("statusDetails") or {}).get("message", "")))
        teardown = [a for f in fixtures.get(str(r.get("uuid")), []) for a in f.get("attachments", [])]
        body = _steps(folder, r.get("steps", [])) + _attachments(folder, [*r.get("attachments", []), *teardown])
        sections.append(
            f"<section class='{html.escape(status)}'><h3>{html.escape(str(r.get('name', '')))} — {status}</h3>"
            f"<p class='labels'>{labels}</p>{f'<pre>{message}</pre>' if message else ''}{body}</section>"
        )
    env = folder / "environment.properties"
    env_html = f"<pre>{html.escape(env.read_text(encoding='utf-8'))}</pre>" if env.exists() else ""
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>xocdia-hil report</title><style>{_CSS}</style>"
        f"</head><body><h1>xocdia-hil test report</h1><p>{summary}</p>{env_html}{''.join(sections)}</body></html>"
    )
    out.mkdir(parents=True, exist_ok=True)
    target = out / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


_CSS = (
    "body{font-family:sans-serif;margin:1em}section{border:1px solid #ccc;margin:.5em 0;padding:.3em .8em}"
    ".failed,.broken,.uncovered{background:#fde8e8}.passed{background:#eefbea}.skipped{background:#f4f4f4}"
    "pre{white-space:pre-wrap;font-size:12px}table{border-collapse:collapse}"
    "td,th{border:1px solid #bbb;padding:2px 6px}"
    ".labels{color:#555;font-size:12px}"
)
