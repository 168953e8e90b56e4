"""Build the offline HTML report from an allure-results folder (``make report``).

Route 1: the npm package ``allure`` (Allure 3), run with ``npx`` and a config that asks its ``awesome`` plugin
for a single self-contained ``index.html`` (opens from disk, no server). Route 2 (fallback, when Node/npx or the
package cannot be had, e.g. offline without an npm cache): :func:`harness.cert.report.page.render_page`.

    python -m harness.cert.report.build RESULTS OUT [--fallback]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.cert.report.page import render_page

ALLURE_PACKAGE = "allure@3"
NPX_TIMEOUT_S = 300


def build_with_allure(results: Path, out: Path) -> Path | None:
    """Run Allure 3 through npx into a fresh folder and copy its single-file ``index.html`` to ``out``; returns
    ``out/index.html``, or None when that route is not available."""
    npx = shutil.which("npx")
    if npx is None:
        return None
    with tempfile.TemporaryDirectory(prefix="xocdia-allure-") as tmp:
        html_dir = Path(tmp) / "html"
        config = Path(tmp) / "allurerc.mjs"
        options = {"singleFile": True, "reportName": "xocdia-hil certification (built by Allure 3 from npm)"}
        doc = {"name": "xocdia-hil", "output": str(html_dir), "plugins": {"awesome": {"options": options}}}
        config.write_text(f"export default {json.dumps(doc)};\n", encoding="utf-8")
        cmd = [npx, "--yes", ALLURE_PACKAGE, "generate", "--config", str(config), str(results.resolve())]
        try:
            done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=NPX_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        # Allure 3 writes the awesome report at the top or, depending on the version, in a plugin subfolder
        built = next((p for p in (html_dir / "index.html", html_dir / "awesome" / "index.html") if p.exists()), None)
        if done.returncode != 0 or built is None:
            return None
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, out / "index.html")
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
    route = "allure 3 (npm), single file"
    if index is None:
        why = "--fallback asked for it" if args.fallback else "the npm allure package could not be run"
        route = f"built-in renderer ({why})"
        index = render_page(args.results, args.out, route)
    print(f"report: {index} ({route})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
