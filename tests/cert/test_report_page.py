"""The built-in report page: Gherkin titles grouped by feature, anchors the clause matrix links to, filters'
data, inlined plots, the clause counts and the renderer named."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.cert.report.build import main as build
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
    assert "rules clauses with scenarios: 2 of 48; GLI references exercised: 1" in page
    assert page.count("UNCOVERED") == 46  # every other clause of RULES.md is listed, marked uncovered
    assert "built by the built-in renderer (--fallback asked for it)" in page
    assert re.search(r"data-status='failed' data-clauses='\[&quot;PAY-9&quot;\]' data-bench='in-process'", page)
    assert "<input id='q' type='search'" in page and "<option>SH-5</option>" in page


def test_build_names_the_renderer_and_why(tmp_path: Path) -> None:
    results = tmp_path / "allure-results"
    results.mkdir()
    _result(results, "a1", "t", "A scenario", "F", "passed", ["clause=SH-5"])
    assert build([str(results), str(tmp_path / "out"), "--fallback"]) == 0
    assert "built by the built-in renderer (--fallback asked for it)" in (tmp_path / "out" / "index.html").read_text()
