"""The built-in report: one offline HTML page a lab can navigate, from an allure-results folder.

Scenarios are titled with their Gherkin names (the ``story`` label the plugin sets; a test that is not a scenario
keeps its test name) and grouped by feature; every result has an anchor (``#r-UUID``), its status, clauses, GLI
references and bench as data attributes, and the page has a search box and filters (status, clause, bench) run by
a few lines of inline script (no external resources: it opens from disk, offline). The clause matrix comes first,
each clause linking to its scenarios. PNG and SVG attachments (the audit's plots) are inlined. The header counts
the rules clauses and the GLI references separately, and says which renderer built the page and why.
"""

from __future__ import annotations

import base64
import html
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.cert.report.clauses import rule_clauses
from harness.cert.report.html import _CSS, MATRIX_NAME, _load

_TEXT_TYPES = ("text/plain", "application/json", "text/csv")
_IMAGES = ("image/png", "image/svg+xml", "image/jpeg")


def _labels(result: Mapping[str, Any], name: str) -> list[str]:
    return [str(lb.get("value", "")) for lb in result.get("labels", []) if lb.get("name") == name]


def _title(result: Mapping[str, Any]) -> str:
    """The scenario's Gherkin name (``story``), else the result's name."""
    story = _labels(result, "story")
    return story[0] if story else str(result.get("name", ""))


def _attachments(folder: Path, items: Iterable[Mapping[str, Any]]) -> str:
    out = []
    for a in items:
        path = folder / str(a.get("source", ""))
        name = html.escape(str(a.get("name", "attachment")))
        kind = str(a.get("type", ""))
        if not path.is_file():
            continue
        if kind == "text/html":
            out.append(f"<details><summary>{name}</summary>{path.read_text(encoding='utf-8')}</details>")
        elif kind in _IMAGES or path.suffix in (".png", ".svg", ".jpg"):
            mime = kind or "image/png"
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            out.append(
                f"<figure><img alt='{name}' src='data:{mime};base64,{data}'><figcaption>{name}</figcaption></figure>"
            )
        elif kind in _TEXT_TYPES or path.suffix in (".txt", ".json", ".csv"):
            body = html.escape(path.read_text(encoding="utf-8", errors="replace"))
            out.append(f"<details><summary>{name}</summary><pre>{body}</pre></details>")
        else:
            out.append(f"<p>{name} ({html.escape(kind)})</p>")
    return "".join(out)


def _steps(folder: Path, steps: Iterable[Mapping[str, Any]]) -> str:
    items = []
    for s in steps:
        status = html.escape(str(s.get("status", "")))
        inner = _steps(folder, s.get("steps", [])) + _attachments(folder, s.get("attachments", []))
        items.append(f"<li class='{status}'>{html.escape(str(s.get('name', '')))} — {status}{inner}</li>")
    return f"<ol>{''.join(items)}</ol>" if items else ""


def _bench(folder: Path) -> str:
    env = folder / "environment.properties"
    if env.exists():
        for line in env.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "bench":
                return value.strip()
    return ""


def render_page(folder: Path, out: Path, renderer: str = "built-in renderer") -> Path:
    """Write ``out/index.html`` from the allure results in ``folder``; ``renderer`` says which renderer built it
    and why (shown in the header). Returns the page's path.

    Raises:
        FileNotFoundError: ``folder`` has no allure results.
    """
    results, fixtures = _load(folder)
    if not results:
        raise FileNotFoundError(f"no allure results in {folder}")
    bench = _bench(folder)
    matrix = next((r for r in results if r.get("name") == MATRIX_NAME), None)
    results = [r for r in results if r is not matrix]
    by_feature: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_clause: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    gli: set[str] = set()
    for r in results:
        feature = (_labels(r, "feature") or _labels(r, "suite") or ["other"])[0]
        by_feature[feature].append(r)
        counts[str(r.get("status", "unknown"))] += 1
        for clause in [*_labels(r, "clause"), *(f"GLI {g}" for g in _labels(r, "gli"))]:
            by_clause[clause].append((str(r.get("uuid")), _title(r), str(r.get("status", ""))))
        gli.update(f"GLI {g}" for g in _labels(r, "gli"))
    sections = []
    for feature in sorted(by_feature):
        cards = [_card(folder, r, fixtures, bench) for r in sorted(by_feature[feature], key=_title)]
        sections.append(f"<section class='feature'><h2>{html.escape(feature)}</h2>{''.join(cards)}</section>")
    listed = rule_clauses()  # every clause of RULES.md, in its order: one with no scenario shows as UNCOVERED
    rules = listed + sorted(c for c in by_clause if not c.startswith("GLI ") and c not in listed)
    clause_options = "".join(f"<option>{html.escape(c)}</option>" for c in rules + sorted(gli))
    status_options = "".join(f"<option>{html.escape(s)}</option>" for s in sorted(counts))
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    matrix_message = str(((matrix or {}).get("statusDetails") or {}).get("message", ""))
    head = (
        f"<h1>xocdia-hil report</h1><p class='meta'>{len(results)} results ({summary}); bench {html.escape(bench)}; "
        f"rules clauses with scenarios: {sum(1 for c in rules if by_clause.get(c))} of {len(listed)}; "
        f"GLI references exercised: {len(gli)}; "
        f"built by the {html.escape(renderer)}</p>"
        f"<p class='meta'>{html.escape(matrix_message)}</p>"
        "<div id='filters'><input id='q' type='search' placeholder='search scenarios, steps, clauses'>"
        f"<select id='status'><option value=''>any status</option>{status_options}</select>"
        f"<select id='clause'><option value=''>any clause</option>{clause_options}</select>"
        f"<select id='bench'><option value=''>any bench</option><option>{html.escape(bench)}</option></select>"
        "<span id='shown'></span></div>"
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>xocdia-hil report</title>"
        f"<style>{_CSS}{_PAGE_CSS}</style></head><body>{head}{_matrix(by_clause, rules, gli)}"
        f"{''.join(sections)}<script>{_SCRIPT}</script></body></html>"
    )
    out.mkdir(parents=True, exist_ok=True)
    target = out / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


def _card(folder: Path, r: Mapping[str, Any], fixtures: Mapping[str, list[dict[str, Any]]], bench: str) -> str:
    status = str(r.get("status", "unknown"))
    clauses, refs = _labels(r, "clause"), _labels(r, "gli")
    tags = " ".join([*clauses, *(f"GLI {g}" for g in refs)])
    message = html.escape(str((r.get("statusDetails") or {}).get("message", "")))
    teardown = [a for f in fixtures.get(str(r.get("uuid")), []) for a in f.get("attachments", [])]
    body = _steps(folder, r.get("steps", [])) + _attachments(folder, [*r.get("attachments", []), *teardown])
    data = json.dumps(clauses + [f"GLI {g}" for g in refs])
    return (
        f"<details class='card {html.escape(status)}' id='r-{html.escape(str(r.get('uuid')))}' "
        f"data-status='{html.escape(status)}' data-clauses='{html.escape(data)}' data-bench='{html.escape(bench)}'>"
        f"<summary><b>{html.escape(_title(r))}</b> — {html.escape(status)} <span class='labels'>{html.escape(tags)}"
        f"</span></summary>{f'<pre>{message}</pre>' if message else ''}{body}</details>"
    )


def _matrix(by_clause: Mapping[str, list[tuple[str, str, str]]], rules: list[str], gli: set[str]) -> str:
    rows = []
    for clause in [*rules, *sorted(gli)]:
        links = ", ".join(
            f"<a class='{html.escape(s)}' href='#r-{html.escape(u)}'>{html.escape(t)}</a>"
            for u, t, s in by_clause[clause]
        )
        if not links:  # a clause no scenario exercised: said, not left as an empty cell
            links = "<b class='failed'>UNCOVERED</b>"
        rows.append(f"<tr><td>{html.escape(clause)}</td><td>{links}</td></tr>")
    return (
        f"<details><summary><b>Clause traceability matrix</b> ({len(rules)} rules clauses, {len(gli)} GLI references)"
        f"</summary><table><tr><th>clause</th><th>scenarios</th></tr>{''.join(rows)}</table></details>"
    )


_PAGE_CSS = (
    "#filters{position:sticky;top:0;background:#fff;padding:.4em 0;display:flex;gap:.5em;border-bottom:1px solid #ccc}"
    "#q{flex:1}.card{border:1px solid #ccc;margin:.3em 0;padding:.2em .6em}.meta{color:#444}"
    "a.failed,a.broken,b.failed{color:#b00}a.passed{color:#070}img{max-width:100%}"
)
_SCRIPT = """
const q=document.getElementById('q'),st=document.getElementById('status'),cl=document.getElementById('clause'),
bn=document.getElementById('bench'),cards=[...document.querySelectorAll('.card')];
function apply(){const t=q.value.toLowerCase();let n=0;
for(const c of cards){const ok=(!st.value||c.dataset.status===st.value)
&&(!cl.value||JSON.parse(c.dataset.clauses).includes(cl.value))&&(!bn.value||c.dataset.bench===bn.value)
&&(!t||c.textContent.toLowerCase().includes(t));c.style.display=ok?'':'none';n+=ok;}
document.getElementById('shown').textContent=n+' of '+cards.length+' shown';}
for(const e of [q,st,cl,bn])e.addEventListener('input',apply);apply();
for(const a of document.querySelectorAll('a[href^="#r-"]'))a.addEventListener('click',()=>{
const d=document.getElementById(a.getAttribute('href').slice(1));if(d){d.open=true;}});
"""
