"""The built-in report page: Gherkin titles grouped by feature, anchors the clause matrix links to, filters'
data, inlined plots, the clause counts and the renderer named."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cert.report.build import main as build
from harness.cert.report.clauses import rule_clauses
from harness.cert.report.page import render_page

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8ffff3f0005fe02fea7d6a3e30000000049454e44ae426082"
)  # a 1x1 image


def _result(folder: Path, uuid: str, name: str, story: str, feature: str, status: str, labels: list[str]) -> None:
    result = {
        "uuid": uuid,
        "name": name,
        "status": status,
        "labels": [{"name": "story", "value": story}, {"name": "feature", "value": feature}]
        + [{"name": k, "value": v} for k, v in (label.split("=", 1) for label in labels)],
        "steps": [{"name": "Given a table", "status": status, "steps": [], "attachments": []}],
        "attachments": [{"name": "fairness plot", "source": f"{uuid}-plot.png", "type": "image/png"}],
    }
    (folder / f"{uuid}-plot.png").write_bytes(PNG)
    (folder / f"{uuid}-result.json").write_text(json.dumps(result), encoding="utf-8")


def test_the_page_a_lab_navigates(tmp_path: Path) -> None:
    results = tmp_path / "allure-results"
    results.mkdir()
    (results / "environment.properties").write_text("bench = in-process\nseed = 7\n", encoding="utf-8")
    _result(results, "a1", "test_touch[1]", "The bowl touches a token", "Special handling", "passed",
            ["clause=SH-5", "gli=2.9.2"])  # fmt: skip
    _result(results, "b2", "test_pay[2]", "Odd pays 0.96 to 1", "Payouts", "failed", ["clause=PAY-9"])
    page = render_page(results, tmp_path / "out", "built-in renderer (--fallback asked for it)").read_text()
    assert "The bowl touches a token" in page and "test_touch[1]" not in page  # Gherkin names, not test names
    assert page.index("<h2>Payouts</h2>") < page.index("<h2>Special handling</h2>")  # grouped by feature
    assert "id='r-a1'" in page and "href='#r-a1'" in page  # the matrix links to the scenario
    assert "data:image/png;base64," in page and "not inlined" not in page
    listed = len(rule_clauses())
    assert f"rules clauses with scenarios: 2 of {listed}; GLI references in scenarios' tags: 1" in page
    assert page.count("UNCOVERED") == listed - 2  # every other clause of RULES.md is listed, marked uncovered
    assert "built by the built-in renderer (--fallback asked for it)" in page
    assert re.search(r"data-status='failed' data-clauses='\[&quot;PAY-9&quot;\]' data-bench='in-process'", page)
    assert "<input id='q' type='search'" in page and "<option>SH-5</option>" in page


def test_build_names_the_renderer_and_why(tmp_path: Path) -> None:
    results = tmp_path / "allure-results"
    results.mkdir()
    _result(results, "a1", "t", "A scenario", "F", "passed", ["clause=SH-5"])
    assert build([str(results), str(tmp_path / "out"), "--fallback"]) == 0
    assert "built by the built-in renderer (--fallback asked for it)" in (tmp_path / "out" / "index.html").read_text()


def _scenario(
    folder: Path,
    uuid: str,
    story: str,
    status: str,
    steps: list[str],
    *,
    clauses: tuple[str, ...] = (),
    message: str = "",
    trace: str = "",
    description: str = "",
) -> None:
    """One allure result of a scenario; ``trace`` an inlined text attachment (a serial trace)."""
    result: dict[str, object] = {
        "uuid": uuid,
        "name": f"test_{uuid}",
        "status": status,
        "description": description,
        "statusDetails": {"message": message} if message else {},
        "labels": [{"name": "story", "value": story}, {"name": "feature", "value": "Special handling"}]
        + [{"name": "clause", "value": c} for c in clauses],
        "steps": [{"name": s, "status": "passed", "steps": [], "attachments": []} for s in steps],
        "attachments": [{"name": "serial trace", "source": f"{uuid}-trace.txt", "type": "text/plain"}] if trace else [],
    }
    if trace:
        (folder / f"{uuid}-trace.txt").write_text(trace, encoding="utf-8")
    (folder / f"{uuid}-result.json").write_text(json.dumps(result), encoding="utf-8")


TRACE = "12.3 bowl tx TOUCH bowl touched token 2\n"  # every card's trace says "touched"


def _run_folder(tmp_path: Path, with_matrix: bool) -> Path:
    results = tmp_path / "allure-results"
    results.mkdir()
    feature = tmp_path / "features" / "special.feature"
    feature.parent.mkdir()
    feature.write_text(
        "Feature: Special handling\n\n  @clause:SH-5\n  Scenario: The bowl is lifted cleanly\n    Given a table\n\n"
        "  @clause:SH-5\n  Scenario Outline: A <item> is dropped\n    Given a table\n",
        encoding="utf-8",
    )
    where = f"{feature}: "
    table = ["Given a table"]
    _scenario(results, "u1", "The bowl is lifted cleanly", "passed", table, clauses=("SH-5",), trace=TRACE,
              description=where + "The bowl is lifted cleanly")  # fmt: skip
    # "touched" in u2's name and in a step of u3
    _scenario(results, "u2", "A bowl touched a token", "passed", table, clauses=("SH-5",), trace=TRACE)
    _scenario(results, "u3", "A re-shake", "passed", ["When the dealer touched the bowl"], clauses=("SH-3",),
              trace=TRACE)  # fmt: skip
    _scenario(results, "u4", "A plate is dropped", "failed", table, clauses=("SH-2",), trace=TRACE,
              message="AssertionError: [SH-2] the round was voided, not re-shaken",
              description=where + "A plate is dropped")  # fmt: skip
    skip = "Skipped: not applicable on this bench: the server is not the harness's"
    _scenario(results, "u5", "A server that is killed", "skipped", table, clauses=("SH-2",), trace=TRACE, message=skip)
    if with_matrix:
        doc = {
            "clauses": {
                "SH-2": [
                    {"scenario": "A plate is dropped", "nodeid": "s.py::test_u4", "outcome": "failed"},
                    {"scenario": "A server that is killed", "nodeid": "s.py::test_u5", "outcome": "not-applicable"},
                ],
                "SH-5": [
                    {"scenario": "The bowl is lifted cleanly", "nodeid": "s.py::test_u1", "outcome": "passed"},
                    {"scenario": "A bowl touched a token", "nodeid": "s.py::test_u2", "outcome": "passed"},
                ],
            },
            "results": {"SH-2": {"result": "FAIL"}, "SH-5": {"result": "PASS"}},
            "failures": [
                {
                    "scenario": "A plate is dropped",
                    "nodeid": "s.py::test_u4",
                    "where": "features/special.feature:8",
                    "failed_clauses": ["SH-2"],
                }
            ],
        }
        (results / "clause-matrix.json").write_text(json.dumps(doc), encoding="utf-8")
    return results


def _matrix_row(page: str, clause: str) -> tuple[str, str, str, str]:
    m = re.search(
        rf"<tr data-clause='{clause}' data-passed='(\d+)' data-failed='(\d+)' data-not-applicable='(\d+)'>"
        r"<td>[^<]*</td><td><b class='\w+'>([^<]*)</b></td>"
        r"<td class='n'>\1</td><td class='n'>\2</td><td class='n'>\3</td>",
        page,
    )
    assert m, f"no matrix row with its counts shown for {clause}"
    return m[1], m[2], m[3], m[4]


def _searched(page: str) -> dict[str, str]:
    return dict(re.findall(r"id='r-(\w+)'[^>]*data-text='([^']*)'", page))


def test_the_matrix_counts_each_clauses_scenarios_from_the_matrix_file(tmp_path: Path) -> None:
    page = render_page(_run_folder(tmp_path, with_matrix=True), tmp_path / "out").read_text()
    assert _matrix_row(page, "SH-2") == ("0", "1", "1", "FAIL")
    assert _matrix_row(page, "SH-5") == ("2", "0", "0", "PASS")
    assert _matrix_row(page, "SH-1") == ("0", "0", "0", "UNCOVERED")
    assert "<th>passed</th><th>failed</th><th>not applicable</th>" in page
    card = page[page.index("id='r-u4'") :]
    named = (
        r"[^>]*><summary>.*?<p class='where' data-where='features/special.feature:8' data-failed-clause='SH-2'>"
        r"<code>features/special.feature:8</code> · failed on SH-2</p>"
    )
    assert re.match(named, card)  # in the card's summary: seen without opening it
    assert page.count("class='where'") == 1  # only the failing card


def test_without_the_matrix_file_counts_come_from_the_results_and_the_place_from_the_feature(tmp_path: Path) -> None:
    page = render_page(_run_folder(tmp_path, with_matrix=False), tmp_path / "out").read_text()
    assert _matrix_row(page, "SH-2") == ("0", "1", "1", "")  # the skip named not applicable; no result without it
    assert _matrix_row(page, "SH-5") == ("2", "0", "0", "")
    feature = str(tmp_path / "features" / "special.feature")
    assert f"<code>{feature}:8</code> · failed on SH-2" in page  # the outline's line, its <item> matched


def test_search_looks_in_names_steps_tags_and_messages_never_the_traces(tmp_path: Path) -> None:
    page = render_page(_run_folder(tmp_path, with_matrix=True), tmp_path / "out").read_text()
    text = _searched(page)
    assert sorted(u for u, t in text.items() if "touched" in t) == ["u2", "u3"]  # name, step: not the traces
    assert sorted(u for u, t in text.items() if "re-shaken" in t) == ["u4"]  # the failure message
    assert sorted(u for u, t in text.items() if "sh-5" in t) == ["u1", "u2"]  # the tags
    assert [u for u, t in text.items() if "special.feature:8" in t] == ["u4"]  # the place
    assert re.findall(r"data-name='([^']*touched[^']*)'", page) == ["a bowl touched a token"]
    assert "<select id='scope'" in page and "<option value='all'>" in page


def test_the_offline_report_fetches_nothing(tmp_path: Path) -> None:
    page = render_page(_run_folder(tmp_path, with_matrix=True), tmp_path / "out").read_text()
    assert "googletagmanager" not in page
    assert not re.findall(r"""(?:src|href|action)\s*=\s*['"]?\s*(?:https?:)?//""", page, re.I)
    assert not re.findall(r"""url\(\s*['"]?\s*(?:https?:)?//|@import""", page, re.I)


def test_search_and_its_scope_in_a_browser(tmp_path: Path) -> None:
    """The built page in headless Chromium, opened from disk: what the search shows for each scope, and that it
    requests nothing but the file itself."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    chromium = os.environ.get("XOCDIA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(chromium, os.X_OK):
        pytest.skip(f"no Chromium at {chromium} (apt-get install chromium, or set XOCDIA_CHROMIUM)")
    index = render_page(_run_folder(tmp_path, with_matrix=True), tmp_path / "out")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(index.as_uri())

        def shown() -> list[str]:
            visible = "cs => cs.filter(c => c.style.display !== 'none').map(c => c.id)"
            return sorted(page.eval_on_selector_all(".card", visible))

        page.fill("#q", "touched")
        assert shown() == ["r-u2", "r-u3"]
        assert page.inner_text("#shown") == "2 of 5 shown"
        page.select_option("#scope", "name")
        assert shown() == ["r-u2"]
        page.select_option("#scope", "all")
        assert shown() == ["r-u1", "r-u2", "r-u3", "r-u4", "r-u5"]  # the traces too
        page.select_option("#scope", "text")
        page.fill("#q", "special.feature:8")
        assert shown() == ["r-u4"]
        browser.close()
    assert requests == [index.as_uri()]


# A stand-in for ``npx --yes allure@3 generate --config CFG RESULTS``: writes, where the config says, a page that
# lists the results' names, parent suites and suites as Allure would file them, the config's groupBy, and tries the
# network the way Allure's analytics tag does (a script element from googletagmanager.com, a fetch).
FAKE_NPX = """#!{python}
import json, pathlib, sys
args = sys.argv[1:]
config = args[args.index("--config") + 1]
doc = json.loads(pathlib.Path(config).read_text().removeprefix("export default ").rstrip().rstrip(";"))
rows = []
for path in sorted(pathlib.Path(args[-1]).glob("*-result.json")):
    r = json.loads(path.read_text())
    labels = {{lb["name"]: lb["value"] for lb in r["labels"]}}
    rows.append(f"<li>{{labels.get('parentSuite')}} / {{labels.get('suite')}} / {{r['name']}}</li>")
out = pathlib.Path(doc["output"])
out.mkdir(parents=True)
group = json.dumps(doc["plugins"]["awesome"]["options"]["groupBy"])
tag = '<script async src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>'
tries = ("<script>const s=document.createElement('script');s.src='https://www.googletagmanager.com/gtm.js';"
         "document.head.appendChild(s);fetch('https://www.google-analytics.com/g/collect').catch(()=>{{}});</script>")
(out / "index.html").write_text(f"<!doctype html><html><head>{{tag}}<title>allure</title></head><body>"
                                f"<p id='group'>{{group}}</p><ul>{{''.join(rows)}}</ul>{{tries}}</body></html>")
"""


def test_the_allure_route_files_by_feature_and_scenario_and_stays_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "allure-results"
    results.mkdir()
    _result(results, "a1", "test_touch[1]", "The bowl touches a token", "Special handling", "passed", ["clause=SH-5"])
    tools = tmp_path / "bin"
    tools.mkdir()
    npx = tools / "npx"
    npx.write_text(FAKE_NPX.format(python=sys.executable), encoding="utf-8")
    npx.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    assert build([str(results), str(tmp_path / "out")]) == 0
    index = tmp_path / "out" / "index.html"
    page = index.read_text(encoding="utf-8")
    assert "<li>Special handling / The bowl touches a token / The bowl touches a token</li>" in page
    assert "test_touch" not in page and "suite.py" not in page
    assert '<p id=\'group\'>["parentSuite", "suite"]</p>' in page
    assert "gtag/js" not in page  # the tag that loads from the network is gone
    assert page.index("Content-Security-Policy") < page.index("<title>")  # first in the head
    assert capsys.readouterr().out.endswith("(allure 3 (npm), single file, offline)\n")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    chromium = os.environ.get("XOCDIA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(chromium, os.X_OK):
        pytest.skip(f"no Chromium at {chromium} (apt-get install chromium, or set XOCDIA_CHROMIUM)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        tab = browser.new_page()
        sent: list[str] = []  # requests that reached the network layer (routed there, then aborted)

        def abort(route: Any) -> None:
            sent.append(route.request.url)
            route.abort()

        tab.route("http*://**/*", abort)
        refused: list[tuple[str, str | None]] = []
        tab.on("requestfailed", lambda r: refused.append((r.url, r.failure)))
        tab.goto(index.as_uri())
        tab.wait_for_timeout(500)  # time for the inline script's attempts
        browser.close()
    assert sent == []  # nothing left the page
    # the script element stopped by the page's own policy (the fetch is refused before it becomes a request)
    assert refused == [("https://www.googletagmanager.com/gtm.js", "csp")]
