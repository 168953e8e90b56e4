"""Build the offline HTML report from an allure-results folder (``make report``).

Route 1: the npm package ``allure`` (Allure 3), run with ``npx`` and a config that asks its ``awesome`` plugin
for a single self-contained ``index.html`` (opens from disk, no server). Route 2 (fallback, when Node/npx or the
package cannot be had, e.g. offline without an npm cache): :func:`harness.cert.report.page.render_page`.

On route 1 Allure reads a copy of the results in which each scenario's result is named by its Gherkin scenario
(the ``story`` label) and filed under its feature (``parentSuite``: the feature; ``suite``: the scenario; the
pytest module and function labels dropped), and the awesome plugin groups by feature and scenario. The page Allure
writes is made offline: its ``<script>`` and ``<link>`` elements that load from the network are removed and a
Content-Security-Policy that allows only inline and ``data:``/``blob:`` content is put first in its head, so that
no script in it (an analytics tag) can reach the network.

    python -m harness.cert.report.build RESULTS OUT [--fallback]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness.cert.report.page import OFFLINE_POLICY, render_page

ALLURE_PACKAGE = "allure@3"
NPX_TIMEOUT_S = 300
GROUP_BY = ["parentSuite", "suite"]  # feature, then scenario (see _scenario_result)
_NETWORK_ELEMENT = re.compile(
    r"""<script\b[^>]*\bsrc\s*=\s*["']?\s*(?:https?:)?//[^>]*>.*?</script\s*>"""
    r"""|<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?//[^>]*>""",
    re.IGNORECASE | re.DOTALL,
)
_HEAD = re.compile(r"<head\b[^>]*>", re.IGNORECASE)
_MODULE_LABELS = {"parentSuite", "suite", "subSuite", "package", "testClass", "testMethod"}


def _scenario_result(result: dict[str, Any]) -> dict[str, Any]:
    """A result as Allure should file it: named by its scenario (``story``) under its feature (module docstring);
    a result that is not a scenario (no ``story`` label) is returned as it is."""
    labels = result.get("labels", [])
    story = next((str(lb.get("value", "")) for lb in labels if lb.get("name") == "story"), "")
    if not story:
        return result
    feature = next((str(lb.get("value", "")) for lb in labels if lb.get("name") == "feature"), "") or "other"
    kept = [lb for lb in labels if lb.get("name") not in _MODULE_LABELS]
    named = [{"name": "parentSuite", "value": feature}, {"name": "suite", "value": story}]
    return {
        **result,
        "name": story,
        "fullName": f"{feature}: {story}",
        "titlePath": [feature],
        "labels": kept + named,
    }


def _scenario_results(results: Path, into: Path) -> None:
    """Copy the results folder into ``into``, each ``*-result.json`` through :func:`_scenario_result`."""
    into.mkdir(parents=True, exist_ok=True)
    for path in results.iterdir():
        if not path.is_file():
            continue
        if path.name.endswith("-result.json"):
            doc = json.loads(path.read_text(encoding="utf-8"))
            (into / path.name).write_text(json.dumps(_scenario_result(doc)), encoding="utf-8")
        else:
            shutil.copyfile(path, into / path.name)


def offline(page: str) -> str:
    """``page`` with its network-loading ``<script src>``/``<link href>`` elements removed and
    :data:`OFFLINE_POLICY` as the first element of its head (a page without a head gets one).

    Raises:
        ValueError: the page has no ``<html>`` or ``<head>`` to put the policy in.
    """
    page = _NETWORK_ELEMENT.sub("", page)
    meta = f'<meta http-equiv="Content-Security-Policy" content="{OFFLINE_POLICY}">'
    head = _HEAD.search(page)
    if head is not None:
        return page[: head.end()] + meta + page[head.end() :]
    html_tag = re.search(r"<html\b[^>]*>", page, re.IGNORECASE)
    if html_tag is None:
        raise ValueError("the allure page has neither <head> nor <html>: no place for its offline policy")
    return page[: html_tag.end()] + f"<head>{meta}</head>" + page[html_tag.end() :]


def build_with_allure(results: Path, out: Path) -> Path | None:
    """Run Allure 3 through npx on the results filed by scenario (:func:`_scenario_result`) into a fresh folder and
    write its single-file ``index.html``, made :func:`offline`, to ``out``; returns ``out/index.html``, or None when
    that route is not available (no npx, Allure failed or wrote no page, or a page with no head to make offline)."""
    npx = shutil.which("npx")
    if npx is None:
        return None
    with tempfile.TemporaryDirectory(prefix="xocdia-allure-") as tmp:
        html_dir = Path(tmp) / "html"
        config = Path(tmp) / "allurerc.mjs"
        scenarios = Path(tmp) / "results"
        _scenario_results(results, scenarios)
        options = {
            "singleFile": True,
            "reportName": "xocdia-hil certification (built by Allure 3 from npm)",
            "groupBy": GROUP_BY,
        }
        doc = {"name": "xocdia-hil", "output": str(html_dir), "plugins": {"awesome": {"options": options}}}
        config.write_text(f"export default {json.dumps(doc)};\n", encoding="utf-8")
        cmd = [npx, "--yes", ALLURE_PACKAGE, "generate", "--config", str(config), str(scenarios)]
        try:
            done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=NPX_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        # Allure 3 writes the awesome report at the top or, depending on the version, in a plugin subfolder
        built = next((p for p in (html_dir / "index.html", html_dir / "awesome" / "index.html") if p.exists()), None)
        if done.returncode != 0 or built is None:
            return None
        try:
            page = offline(built.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        out.mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text(page, encoding="utf-8")
    return out / "index.html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.cert.report.build", description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--fallback", action="store_true", help="use the built-in renderer only")
    args = parser.parse_args(argv)
    if not any(args.results.glob("*-result.json")):
        print(f"report: error: no allure results in {args.results}", file=sys.stderr)
        return 2
    index = None if args.fallback else build_with_allure(args.results, args.out)
    route = "allure 3 (npm), single file, offline"
    if index is None:
        why = "--fallback asked for it" if args.fallback else "the npm allure package could not be run"
        route = f"built-in renderer ({why})"
        index = render_page(args.results, args.out, route)
    print(f"report: {index} ({route})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
