"""The built-in report: one offline HTML page a lab can navigate, from an allure-results folder.

Scenarios are titled with their Gherkin names (the ``story`` label the plugin sets; a test that is not a scenario
keeps its test name) and grouped by feature; every result has an anchor (``#r-UUID``), its status, clauses, GLI
references and bench as data attributes, and the page has a search box and filters (status, clause, bench) run by
a few lines of inline script (no external resources: it opens from disk, offline). The clause matrix comes first,
each clause with its result and its scenarios' passed / failed / not-applicable counts, linking to its scenarios.
A failing card names its scenario's ``.feature`` file and line and the clause it failed on. PNG and SVG
attachments (the audit's plots) are inlined. The header counts the rules clauses and the GLI references
separately, and says which renderer built the page and why.

The search box matches, by default, a card's scenario name, steps, tags (clauses, GLI references), feature file and
failure message, never its attachments (the inlined serial traces); its scope switch narrows that to the names or
widens it to everything on the card.

The clause results, the counts and the failures' places come from ``clause-matrix.json`` in the results folder
(the certification plugin writes it there) when it is present; without it the counts are those of the allure
statuses of each clause's scenarios, the place is found in the feature file the result's description names, and
the failed clause is the ``[CLAUSE]`` its failure message starts with.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cert.report.clauses import rule_clauses
from harness.cert.report.html import _CSS, MATRIX_NAME, _load

_TEXT_TYPES = ("text/plain", "application/json", "text/csv")
_IMAGES = ("image/png", "image/svg+xml", "image/jpeg")
MATRIX_JSON = "clause-matrix.json"
NOT_APPLICABLE_PREFIX = "not applicable on this bench"  # the skip message of a scenario the bench cannot run
_CLAUSE_IN_MESSAGE = re.compile(r"\[([A-Z]+-\d+[a-z]?)\]")
_SCENARIO_LINE = re.compile(r"^\s*(Scenario Outline|Scenario Template|Scenario|Example)\s*:\s*(.*?)\s*$")
_FAILED = ("failed", "broken")
OFFLINE_POLICY = (  # the Content-Security-Policy of an offline report: inline and data:/blob: content, no network
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' data: blob:; style-src 'unsafe-inline' data: blob:; "
    "img-src data: blob:; font-src data: blob:; media-src data: blob:; connect-src data: blob:; frame-src data: blob:"
)


@dataclass(frozen=True, slots=True)
class ClauseCounts:
    """One clause's scenarios by outcome, and the clause's result when the matrix file gave one."""

    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    result: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Failure:
    """Where a failed scenario is (``file.feature:line``, empty when unknown) and the clauses it failed on."""

    where: str = ""
    clauses: tuple[str, ...] = ()


def _matrix_doc(folder: Path) -> dict[str, Any]:
    """``clause-matrix.json`` of ``folder`` as a dict; empty when absent or not a JSON object."""
    path = folder / MATRIX_JSON
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _test_part(nodeid: str) -> str:
    """``path.py::test_x[p]`` → ``test_x[p]`` (allure's ``name`` of the same test)."""
    return nodeid.split("::")[-1]


def _where_in_feature(result: Mapping[str, Any]) -> str:
    """``file.feature:line`` of the scenario, found in the feature file the allure description names
    (``/path/x.feature: Scenario name``); empty when the file or the scenario cannot be found."""
    description = str(result.get("description", ""))
    path_text, sep, _ = description.partition(".feature:")
    if not sep:
        return ""
    path = Path(path_text + ".feature")
    title = _title(result)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    for number, line in enumerate(lines, 1):
        m = _SCENARIO_LINE.match(line)
        if m is None:
            continue
        pattern = "".join(".*?" if part.startswith("<") else re.escape(part) for part in re.split(r"(<[^>]+>)", m[2]))
        if re.fullmatch(pattern, title):
            return f"{_shown_path(path)}:{number}"
    return ""


def _shown_path(path: Path) -> str:
    """The path relative to the working directory when under it, else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _failures(doc: Mapping[str, Any], results: Iterable[Mapping[str, Any]]) -> dict[str, Failure]:
    """Each failed or broken result's place and failed clauses, by the result's uuid (module docstring)."""
    by_test: dict[str, Mapping[str, Any]] = {}
    by_title: dict[str, Mapping[str, Any]] = {}
    for f in doc.get("failures", []) or []:
        if isinstance(f, dict):
            by_test.setdefault(_test_part(str(f.get("nodeid", ""))), f)
            by_title.setdefault(str(f.get("scenario", "")), f)
    out: dict[str, Failure] = {}
    for r in results:
        if str(r.get("status", "")) not in _FAILED:
            continue
        known = by_test.get(str(r.get("name", ""))) or by_title.get(_title(r)) or {}
        where = str(known.get("where", "")) or _where_in_feature(r)
        clauses = tuple(str(c) for c in known.get("failed_clauses", []) or [])
        if not clauses:
            message = str((r.get("statusDetails") or {}).get("message", ""))
            clauses = tuple(dict.fromkeys(_CLAUSE_IN_MESSAGE.findall(message)))[:1]
        out[str(r.get("uuid"))] = Failure(where, clauses)
    return out


def _outcome(result: Mapping[str, Any]) -> str:
    """passed, failed (failed or broken), not-applicable (skipped as not applicable to the bench), or skipped."""
    status = str(result.get("status", ""))
    if status in _FAILED:
        return "failed"
    message = str((result.get("statusDetails") or {}).get("message", ""))
    if status == "skipped" and NOT_APPLICABLE_PREFIX in message:
        return "not-applicable"
    return status


def _counts(
    doc: Mapping[str, Any], by_clause: Mapping[str, list[tuple[str, str, str]]], outcomes: Mapping[str, str]
) -> dict[str, ClauseCounts]:
    """Each clause's counts and result: from the matrix file's rows where it lists the clause, else from the allure
    outcomes (``outcomes``: uuid → :func:`_outcome`) of the results labelled with it."""
    rows = doc.get("clauses", {}) if isinstance(doc.get("clauses"), dict) else {}
    verdicts = doc.get("results", {}) if isinstance(doc.get("results"), dict) else {}
    out: dict[str, ClauseCounts] = {}
    for clause in {*rows, *by_clause}:
        if clause in rows:
            seen = [str(x.get("outcome", "")) for x in rows[clause] if isinstance(x, dict)]
        else:
            seen = [outcomes.get(uuid, "") for uuid, _, _ in by_clause[clause]]
        verdict = verdicts.get(clause) if isinstance(verdicts.get(clause), dict) else {}
        out[clause] = ClauseCounts(
            seen.count("passed"),
            seen.count("failed"),
            seen.count("not-applicable"),
            str((verdict or {}).get("result", "")),
            str((verdict or {}).get("reason", "")),
        )
    return out


def _step_names(steps: Iterable[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for s in steps:
        names.append(str(s.get("name", "")))
        names += _step_names(s.get("steps", []))
    return names


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
    doc = _matrix_doc(folder)
    failures = _failures(doc, results)
    counts_by_clause = _counts(doc, by_clause, {str(r.get("uuid")): _outcome(r) for r in results})
    sections = []
    for feature in sorted(by_feature):
        cards = [_card(folder, r, fixtures, bench, failures) for r in sorted(by_feature[feature], key=_title)]
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
        f"GLI references in scenarios' tags: {len(gli)}; "
        f"built by the {html.escape(renderer)}</p>"
        f"<p class='meta'>{html.escape(matrix_message)}</p>"
        "<div id='filters'><input id='q' type='search' placeholder='search names, steps, tags, messages'>"
        "<select id='scope' title='what the search looks in'>"
        "<option value='text'>names, steps, tags, messages</option><option value='name'>scenario names only</option>"
        "<option value='all'>everything, attachments too</option></select>"
        f"<select id='status'><option value=''>any status</option>{status_options}</select>"
        f"<select id='clause'><option value=''>any clause</option>{clause_options}</select>"
        f"<select id='bench'><option value=''>any bench</option><option>{html.escape(bench)}</option></select>"
        "<span id='shown'></span></div>"
    )
    page = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{OFFLINE_POLICY}\"><title>xocdia-hil report</title>"
        f"<style>{_CSS}{_PAGE_CSS}</style></head><body>{head}{_matrix(by_clause, rules, gli, counts_by_clause)}"
        f"{''.join(sections)}<script>{_SCRIPT}</script></body></html>"
    )
    out.mkdir(parents=True, exist_ok=True)
    target = out / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


def _card(
    folder: Path,
    r: Mapping[str, Any],
    fixtures: Mapping[str, list[dict[str, Any]]],
    bench: str,
    failures: Mapping[str, Failure],
) -> str:
    """One result as a ``details`` card. ``data-name`` and ``data-text`` (lower case) hold what the search looks
    in: the name, and the name, steps, tags, place, failed clauses and message; never the attachments."""
    status = str(r.get("status", "unknown"))
    uuid = str(r.get("uuid"))
    clauses, refs = _labels(r, "clause"), _labels(r, "gli")
    tags = " ".join([*clauses, *(f"GLI {g}" for g in refs)])
    raw_message = str((r.get("statusDetails") or {}).get("message", ""))
    message = html.escape(raw_message)
    teardown = [a for f in fixtures.get(uuid, []) for a in f.get("attachments", [])]
    body = _steps(folder, r.get("steps", [])) + _attachments(folder, [*r.get("attachments", []), *teardown])
    data = json.dumps(clauses + [f"GLI {g}" for g in refs])
    failure = failures.get(uuid)
    place = ""
    if failure is not None:
        on = ", ".join(failure.clauses) or "no clause check (an error outside the checks)"
        place = (
            f"<p class='where' data-where='{html.escape(failure.where)}' "
            f"data-failed-clause='{html.escape(','.join(failure.clauses))}'>"
            f"<code>{html.escape(failure.where or 'feature file not known')}</code> · failed on {html.escape(on)}</p>"
        )
    title = _title(r)
    searched = [title, *_step_names(r.get("steps", [])), tags, raw_message, *_labels(r, "tag")]
    if failure is not None:
        searched += [failure.where, *failure.clauses]
    return (
        f"<details class='card {html.escape(status)}' id='r-{html.escape(uuid)}' "
        f"data-status='{html.escape(status)}' data-clauses='{html.escape(data)}' data-bench='{html.escape(bench)}' "
        f"data-name='{html.escape(title.lower())}' data-text='{html.escape(chr(10).join(searched).lower())}'>"
        f"<summary><b>{html.escape(title)}</b> — {html.escape(status)} <span class='labels'>{html.escape(tags)}"
        f"</span>{place}</summary>{f'<pre>{message}</pre>' if message else ''}{body}</details>"
    )


def _matrix(
    by_clause: Mapping[str, list[tuple[str, str, str]]],
    rules: list[str],
    gli: set[str],
    counts: Mapping[str, ClauseCounts],
) -> str:
    """The clause matrix: per clause its result, its scenarios passed / failed / not applicable, and links to
    them; a clause no scenario exercised is marked UNCOVERED."""
    rows = []
    for clause in [*rules, *sorted(gli)]:
        links = ", ".join(
            f"<a class='{html.escape(s)}' href='#r-{html.escape(u)}'>{html.escape(t)}</a>"
            for u, t, s in by_clause[clause]
        )
        c = counts.get(clause, ClauseCounts())
        result = c.result
        if not links and result in ("", "UNCOVERED"):  # no scenario exercised it: said, not left as an empty cell
            result = "UNCOVERED"
        shown = f"{result}: {c.reason}" if c.reason else result
        css = {"FAIL": "failed", "UNCOVERED": "failed", "PASS": "passed"}.get(result, "other")
        rows.append(
            f"<tr data-clause='{html.escape(clause)}' data-passed='{c.passed}' data-failed='{c.failed}' "
            f"data-not-applicable='{c.not_applicable}'><td>{html.escape(clause)}</td>"
            f"<td><b class='{css}'>{html.escape(shown)}</b></td>"
            f"<td class='n'>{c.passed}</td><td class='n'>{c.failed}</td><td class='n'>{c.not_applicable}</td>"
            f"<td>{links}</td></tr>"
        )
    return (
        f"<details id='matrix'><summary><b>Clause traceability matrix</b> ({len(rules)} rules clauses, "
        f"{len(gli)} GLI references)</summary><table><tr><th>clause</th><th>result</th><th>passed</th>"
        f"<th>failed</th><th>not applicable</th><th>scenarios</th></tr>{''.join(rows)}</table></details>"
    )


_PAGE_CSS = (
    "#filters{position:sticky;top:0;background:#fff;padding:.4em 0;display:flex;gap:.5em;border-bottom:1px solid #ccc}"
    "#q{flex:1}.card{border:1px solid #ccc;margin:.3em 0;padding:.2em .6em}.meta{color:#444}"
    "a.failed,a.broken,b.failed{color:#b00}a.passed,b.passed{color:#070}b.other{color:#555}img{max-width:100%}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}.where{margin:.2em 0;font-size:13px;color:#700}"
)
_SCRIPT = """
const q=document.getElementById('q'),sc=document.getElementById('scope'),st=document.getElementById('status'),
cl=document.getElementById('clause'),bn=document.getElementById('bench'),cards=[...document.querySelectorAll('.card')];
function hay(c){return sc.value==='name'?c.dataset.name:sc.value==='all'?c.textContent.toLowerCase():c.dataset.text;}
function apply(){const t=q.value.toLowerCase();let n=0;
for(const c of cards){const ok=(!st.value||c.dataset.status===st.value)
&&(!cl.value||JSON.parse(c.dataset.clauses).includes(cl.value))&&(!bn.value||c.dataset.bench===bn.value)
&&(!t||hay(c).includes(t));c.style.display=ok?'':'none';n+=ok;}
document.getElementById('shown').textContent=n+' of '+cards.length+' shown';}
for(const e of [q,sc,st,cl,bn])e.addEventListener('input',apply);apply();
for(const a of document.querySelectorAll('a[href^="#r-"]'))a.addEventListener('click',()=>{
const d=document.getElementById(a.getAttribute('href').slice(1));if(d){d.open=true;}});
"""
