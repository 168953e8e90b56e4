"""``xocdia-hil certify``: run the certification suite (pytest + the xocdia plugin) on a bench, print the clause
coverage, and exit non-zero on any failed scenario or (for a full run) any clause of RULES.md left uncovered.

The report folder receives ``allure-results/`` (every step, the serial traces, the oracle's verdicts),
``clause-matrix.json`` and ``clause-matrix.md``; ``make report`` turns the results into offline HTML.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import harness.cert.steps
from harness.bench.adapters.loader import load_adapter
from harness.bench.config import load_bench
from harness.cert.report.clauses import matches, rule_clauses
from harness.cli.common import CliError, add_dialect_option, non_negative_int
from harness.errors import require_extra

SUITE = Path(harness.cert.steps.__file__).resolve().parent / "suite.py"  # not imported: it binds scenarios
#: What the certify extra installs: importable module -> distribution.
CERTIFY_EXTRA = {"pytest": "pytest", "pytest_bdd": "pytest-bdd", "allure": "allure-pytest", "xdist": "pytest-xdist"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("certify", help="run the Gherkin certification suite against a bench")
    p.add_argument("--bench", default="in-process", help="bench file or shipped name (default in-process)")
    p.add_argument("--tags", default="", help="only scenarios matching, e.g. 'clause:SH-3 or gli:4.16'")
    p.add_argument("--report", default="allure-report", help="folder for results and the clause matrix")
    p.add_argument("--features", default="", help="folder of .feature files (default: the shipped features/)")
    p.add_argument("--workers", type=non_negative_int, default=2, help="pytest-xdist workers (0: in this process)")
    add_dialect_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_extra("certify", CERTIFY_EXTRA, "xocdia-hil certify")
    bench = load_bench(args.bench, args.dialect)
    load_adapter(bench.server.adapter, bench.server.options)  # fail once, here, not in every scenario
    matches(args.tags, ())  # a tag expression that does not parse is an InputError
    features = Path(args.features) if args.features else None
    if features is not None and not any(features.rglob("*.feature")):
        raise CliError(f"--features {args.features}: no .feature files there")
    report = Path(args.report)
    try:
        report.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--report {report}: cannot create the folder ({exc.strerror})") from None
    results = report / "allure-results"
    cmd = [sys.executable, "-m", "pytest", str(SUITE), "-q", "-p", "no:cacheprovider", "--bench", args.bench]
    cmd += ["--clause-matrix", str(report), "--alluredir", str(results), "--clean-alluredir"]
    if args.tags:
        cmd += ["--tags", args.tags]
    if args.dialect:
        cmd += ["--dialect", args.dialect]
    if args.workers:
        cmd += ["-n", str(args.workers)]
    env = dict(os.environ)
    if features is not None:
        env["XOCDIA_FEATURES"] = str(features.resolve())
    code = subprocess.call(cmd, env=env)
    matrix_path = report / "clause-matrix.json"
    if not matrix_path.exists():
        print("xocdia-hil certify: no scenario ran (nothing matched, or pytest failed before running)")
        return code or 1
    matrix = json.loads(matrix_path.read_text(encoding="utf-8"))
    rules = rule_clauses()
    covered = sum(1 for c in rules if matrix["clauses"].get(c))
    print(
        f"clause coverage: {covered}/{len(rules)} clauses of RULES.md; "
        f"scenarios passed {matrix['passed']}, failed {matrix['failed']}"
    )
    print(f"clause matrix: {report / 'clause-matrix.md'}")
    uncovered = matrix["uncovered"]
    if uncovered:
        print("uncovered clauses: " + ", ".join(uncovered))
    if code != 0:
        return code
    if uncovered and not args.tags and features is None:
        return 1
    return 0
