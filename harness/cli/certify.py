"""``xocdia-hil certify``: run the certification suite (pytest + the xocdia plugin) on a bench, print the clause
coverage, and exit non-zero on any failed scenario or (for a full run) any clause of RULES.md left uncovered.

The report folder receives ``allure-results/`` (every step, the serial traces, the oracle's verdicts),
``clause-matrix.json``, ``clause-matrix.md`` and ``index.html``, the offline HTML report of the run (the built-in
renderer, :func:`harness.cert.report.page.render_page`; ``make report`` can build Allure 3's instead).

Before any scenario runs it prints the installed suite version and, where the workspace pins an older one
(``xocdia-hil.yaml``), one warning per changelog entry since the pin that touches the run
(:func:`harness.cert.suite_version.suite_notice`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import harness.cert.steps
from harness.bench.adapters.loader import load_adapter
from harness.bench.config import Bench, load_bench
from harness.cert.gherkin_lint import lint_folders
from harness.cert.report.clauses import CATALOGUE_NAMES, matches, rule_clauses, rule_texts
from harness.cert.report.page import render_page
from harness.cert.suite_version import SuiteVersion, installed_version, read_pin, suite_changes, suite_notice
from harness.cli.bench import balances_needed, check_bench
from harness.cli.common import CliError, add_dialect_option, non_negative_int
from harness.cli.evidence import add_certify_options, pack_lines, pack_writer
from harness.errors import require_extra
from harness.evidence.pack import PackWriter, RunFacts
from harness.feed import Feed
from harness.files import FEATURES
from harness.live.server import LiveServer, parse_address
from harness.live.session import RecordError, add_feed_options
from harness.live.tail import FileTail

SUITE = Path(harness.cert.steps.__file__).resolve().parent / "suite.py"  # not imported: it binds scenarios
# pytest plugins the suite never uses, kept out of every certify process: no cache folder written into the lab's
# directory; schemathesis, hypothesis and anyio (where installed) import hypothesis or asyncio at start-up, about
# 2.5 s in each worker
QUIET_PLUGINS = tuple(
    arg for name in ("cacheprovider", "schemathesis", "hypothesispytest", "anyio") for arg in ("-p", f"no:{name}")
)
#: What the certify extra installs: importable module -> distribution.
CERTIFY_EXTRA = {
    "pytest": "pytest",
    "pytest_bdd": "pytest-bdd",
    "allure": "allure-pytest",
    "xdist": "pytest-xdist",
    "pytest_timeout": "pytest-timeout",
    "hypothesis": "hypothesis",  # the exploration's state machine (features/exploration.feature)
}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("certify", help="run the Gherkin certification suite against a bench")
    p.add_argument("--bench", default="in-process", help="bench file or shipped name (default in-process)")
    p.add_argument("--tags", default="", help="only scenarios matching, e.g. 'clause:SH-3 or gli:4.16'")
    p.add_argument(
        "--report",
        default="allure-report",
        help="folder for the HTML report (index.html), allure results and clause matrix (default allure-report)",
    )
    p.add_argument(
        "--features",
        action="append",
        default=[],
        help="folder of .feature files, repeatable; 'shipped' is the shipped suite (default: the shipped suite alone)",
    )
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=None,
        help="pytest-xdist workers (0: in this process; default 2, or 0 on a bench attached by URL)",
    )
    p.add_argument(
        "--scenario-timeout",
        type=float,
        default=None,
        metavar="S",
        help="wall seconds a scenario may take before it fails by timeout (0: no limit; default 300)",
    )
    p.add_argument(
        "--explore",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="random tables each exploration scenario plays, judged by the whole judge (default: the scenario's own)",
    )
    p.add_argument("--seed", type=non_negative_int, default=None, help="root seed of the exploration (with --explore)")
    p.add_argument("--json", action="store_true", help="print the clause coverage and results as one JSON object")
    p.add_argument(
        "--no-bench-check",
        action="store_true",
        help="run the scenarios without first checking the bench (xocdia-hil bench check): server, lines, accounts",
    )
    p.add_argument(
        "--changes",
        metavar="SINCE",
        default=None,
        help="print the suite changelog's entries after version SINCE (e.g. 1.1), marking those that touch the"
        " selected scenarios (--tags, --features), and run nothing",
    )
    add_dialect_option(p)
    add_feed_options(p, pace=False)
    add_certify_options(p)
    p.set_defaults(func=run)


def feature_folders(names: list[str]) -> list[Path]:
    """The folders of ``--features`` (absolute, in order, each once); ``shipped`` is the shipped suite.

    Raises:
        CliError: a folder with no ``.feature`` file in it (one line naming it).
    """
    folders: list[Path] = []
    for name in names:
        folder = FEATURES if name == "shipped" else Path(name).resolve()
        if folder != FEATURES and not any(folder.rglob("*.feature")):
            raise CliError(f"--features {name}: no .feature files there (a folder, or 'shipped' for the shipped suite)")
        if folder not in folders:
            folders.append(folder)
    return folders


def run(args: argparse.Namespace) -> int:
    if args.changes is not None:
        return _changes(args)
    require_extra("certify", CERTIFY_EXTRA, "xocdia-hil certify")
    bench = load_bench(args.bench, args.dialect)
    load_adapter(bench.server.adapter, bench.server.adapter_options())  # fail once, here, not in every scenario
    matches(args.tags, ())  # a tag expression that does not parse is an InputError
    folders = feature_folders(args.features)
    evidence = pack_writer(args, bench.path)  # a pack folder in use, a key that does not load: refused here
    # a server down, a line missing, a balance the account pool lacks: one line each, not a failure per scenario
    if not args.no_bench_check:
        needs = balances_needed(folders or [FEATURES], args.tags, bench.name) if bench.accounts is not None else None
        checked = check_bench(bench, needs=needs)
        if not checked.ready:
            for problem in checked.problems:
                print(f"xocdia-hil certify: {problem}", file=sys.stderr)
            print(
                f"xocdia-hil certify: bench {bench.name} is not ready (xocdia-hil bench check); nothing was run",
                file=sys.stderr,
            )
            return 2
    workers = _workers(args.workers, bench)
    features = None if not args.features or FEATURES in folders else folders  # None: the full suite runs
    own = [folder for folder in folders if folder != FEATURES]
    for line in suite_notice(read_pin(Path.cwd()), own, args.tags, shipped=features is None):
        print(f"xocdia-hil certify: {line}", file=sys.stderr if args.json else sys.stdout, flush=True)
    report = Path(args.report)
    # a run that stops early never leaves an old summary or page behind
    for stale in ("clause-matrix.json", "clause-matrix.md", "index.html"):
        with contextlib.suppress(OSError):
            (report / stale).unlink(missing_ok=True)
    refused = lint_folders(folders or [FEATURES], rule_clauses())
    if refused:
        for error in refused:
            print(f"xocdia-hil certify: {error}", file=sys.stderr)
        print(f"xocdia-hil certify: {len(refused)} problems in the feature files; nothing was run", file=sys.stderr)
        return 2
    report = Path(args.report)
    try:
        report.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--report {report}: cannot create the folder ({exc.strerror})") from None
    results = report / "allure-results"
    cmd = [sys.executable, "-m", "pytest", str(SUITE), "-q", *QUIET_PLUGINS, "--bench", args.bench]
    cmd += ["--clause-matrix", str(report), "--alluredir", str(results), "--clean-alluredir"]
    if args.tags:
        cmd += ["--tags", args.tags]
    if args.dialect:
        cmd += ["--dialect", args.dialect]
    if workers:
        cmd += ["-n", str(workers), "--dist", "worksteal"]  # an idle worker takes queued scenarios from a busy one
    if args.explore is not None:
        cmd += ["--explore", str(args.explore)]
    if args.seed is not None:
        cmd += ["--explore-seed", str(args.seed)]
    if args.scenario_timeout is not None:
        cmd += ["--scenario-timeout", str(args.scenario_timeout)]
    elif args.explore is not None:
        cmd += ["--scenario-timeout", "0"]  # an exploration of N tables takes as long as N tables take
    env = dict(os.environ)
    env.setdefault("COLUMNS", "240")  # room on pytest's FAILED lines for the failure's first line: its [clause]
    if args.features:
        env["XOCDIA_FEATURES"] = os.pathsep.join(str(folder) for folder in folders)
    if evidence is not None:
        evidence.start(RunFacts(bench, folders, args.tags, workers, args.seed))
    code = _pytest(cmd, env, args, evidence)
    matrix_path = report / "clause-matrix.json"
    if not matrix_path.exists():
        print("xocdia-hil certify: no scenario ran (nothing matched, or pytest failed before running)")
        _finish_pack(evidence, report, None, code or 1, sys.stdout)
        return code or 1
    matrix = json.loads(matrix_path.read_text(encoding="utf-8"))
    html = _html_report(results, report)
    rules = rule_clauses()
    unexercised = matrix.get("unexercised", [])
    uncovered = matrix["uncovered"]
    reached = matrix.get("reached", True)
    covered = sum(1 for c in rules if c not in uncovered and c not in unexercised)
    if not reached:
        unexercised, covered = rules, 0  # no scenario reached the server: nothing of the game was judged
    verdicts = matrix.get("results", {})
    failing = {c: r["result"] for c, r in verdicts.items() if r["result"] in ("FAIL", "NOT DECIDED")}
    full = not args.tags and features is None  # a partial run lists uncovered clauses without failing on them
    status = code or (1 if not reached or (uncovered and full) else 0)
    if args.json:
        summary = {
            "clauses": {
                "covered": covered,
                "of": len(rules),
                "uncovered": uncovered,
                "unexercised": unexercised,
                "failed": [c for c, r in failing.items() if r == "FAIL"],
                "not_decided": [c for c, r in failing.items() if r == "NOT DECIDED"],
            },
            "scenarios": {
                "passed": matrix["passed"],
                "failed": matrix["failed"],
                "not_applicable": len(matrix.get("not_applicable", [])),
            },
            "failures": matrix.get("failures", []),
            "clause_matrix": str(report / "clause-matrix.md"),
            "report": str(html) if html else None,
            "suite": str(installed_version()),
            "table_configuration": {r["field"]: r["value"] for r in matrix.get("table", []) if not r["default"]},
            "passed": status == 0,
        }
        if evidence is not None:
            summary["evidence"] = _finish_pack(evidence, report, matrix, status, sys.stderr)
        print(json.dumps(summary, indent=2))
        return status
    _print_failures(matrix.get("failures", []))
    changed = [f"{r['field']}={r['value']}" for r in matrix.get("table", []) if not r["default"]]
    print(
        f"clause coverage: {covered}/{len(rules)} clauses of {CATALOGUE_NAMES} checked; "
        f"scenarios passed {matrix['passed']}, failed {matrix['failed']}"
        + (f"; table configuration not the default: {', '.join(changed)}" if changed else "")
    )
    print(f"clause matrix: {report / 'clause-matrix.md'}")
    if html:
        print(f"report: {html}")
    failed = [c for c, r in failing.items() if r == "FAIL"]
    if failed:
        print("clauses FAILED: " + ", ".join(failed))
    undecided = [c for c, r in failing.items() if r == "NOT DECIDED"]
    if undecided:
        print("clauses not decided (their scenarios failed on another clause): " + ", ".join(undecided))
    if uncovered and reached:
        print("uncovered clauses (no check of them ran): " + ", ".join(uncovered))
    not_applicable = matrix.get("not_applicable", [])
    if not_applicable:
        print(f"not applicable on this bench: {len(not_applicable)} scenarios (reasons in the clause matrix)")
    if not reached:
        print("the bench's server was never reached: every clause is unexercised")
    elif unexercised:
        print("clauses not exercised on this bench: " + ", ".join(unexercised))
    _finish_pack(evidence, report, matrix, status, sys.stdout)
    return status


def _finish_pack(evidence: PackWriter | None, report: Path, matrix: Any, status: int, out: Any) -> Any:
    """Finish the run's evidence pack (none without ``--evidence``) and print what it is to ``out``; returns its
    JSON summary for ``--json`` (None without a pack)."""
    if evidence is None:
        return None
    result = evidence.finish(report, matrix, status)
    for line in pack_lines(result):
        print(line, file=out, flush=True)
    return {
        "folder": str(result.folder),
        "report_id": result.report_id,
        "signed": result.signed,
        "identification_changes": list(result.changes),
    }


def _changes(args: argparse.Namespace) -> int:
    """``--changes SINCE``: the changelog entries after SINCE, nothing run; exit 0."""
    since = SuiteVersion.parse(args.changes, "--changes")
    folders = feature_folders(args.features)
    own = [folder for folder in folders if folder != FEATURES]
    shipped = not args.features or FEATURES in folders
    for line in suite_changes(since, own, args.tags, shipped=shipped):
        print(line)
    return 0


def _html_report(results: Path, report: Path) -> Path | None:
    """Write ``report/index.html`` from the run's allure results with the built-in renderer (offline, no Node);
    returns its path, or None (with one line on stderr saying why) when there are no results to render or the
    folder cannot be written. Never raises: the run's verdict stands without its page."""
    try:
        return render_page(results, report, "built-in renderer (xocdia-hil certify)")
    except (FileNotFoundError, OSError) as exc:
        print(f"xocdia-hil certify: no HTML report written: {exc}", file=sys.stderr)
        return None


def _print_failures(failures: list[dict[str, Any]]) -> None:
    """One block per failed scenario: its title, feature file and line, and the clause(s) whose check failed,
    each with the rule's text; a failure outside any clause check says so."""
    texts = rule_texts()
    for failure in failures:
        clauses = failure.get("failed_clauses") or []
        print(f"FAILED {failure['scenario']} ({failure.get('where') or failure['nodeid']})")
        for clause in clauses:
            print(f"  [{clause}] {texts.get(clause, f'(not a clause of {CATALOGUE_NAMES})')}")
        if not clauses:
            print("  (failed outside any clause check: see pytest's report above)")


def _workers(asked: int | None, bench: Bench) -> int:
    """The xdist workers to run: ``asked``, else 2, or 0 on a bench whose server or device lines are attached by
    URL (every scenario there shares one server and one set of lines, so they run one after another).

    Raises:
        CliError: two or more workers asked for on such a bench (one line, :meth:`Bench.workers_refusal`).
    """
    if asked is None:
        return 0 if bench.attached_by_url else 2
    refusal = bench.workers_refusal("--workers", asked)
    if refusal:
        raise CliError(refusal)
    return asked


def _pytest(cmd: list[str], env: dict[str, str], args: argparse.Namespace, evidence: PackWriter | None = None) -> int:
    """Run pytest (its output to stderr with ``--json``); with ``--record``/``--live``/``--evidence`` its workers
    append every scenario's feed to the record file (a temporary one without ``--record``), which the live page
    follows and the evidence pack chains as it grows."""
    out = sys.stderr if args.json else None
    if not args.record and not args.live and evidence is None:
        return subprocess.call(cmd, env=env, stdout=out)
    with tempfile.TemporaryDirectory(prefix="xocdia-certify-") as tmp:
        path = Path(args.record) if args.record else Path(tmp) / "feed.jsonl"
        try:
            path.write_text("", encoding="utf-8")
        except OSError as exc:
            raise RecordError(f"--record {path}: cannot write ({exc.strerror})") from None
        server = tail = None
        if args.live:
            feed = Feed()
            server = LiveServer(feed, *parse_address(args.live), title="certify")
            print(f"live page: {server.start()}", file=sys.stderr, flush=True)
            tail = FileTail(path, feed)
            tail.start()
        chain = evidence.follow(path) if evidence is not None else None
        try:
            return subprocess.call([*cmd, "--feed", str(path)], env=env, stdout=out)
        finally:
            if chain is not None:
                chain.stop()
            if tail is not None and server is not None:
                tail.stop()
                if args.hold:
                    server.feed.close()
                    print(f"live page: {server.url} (serving until Ctrl-C)", file=sys.stderr, flush=True)
                    with contextlib.suppress(KeyboardInterrupt):
                        threading.Event().wait()
                server.stop()
            if args.record:
                print(f"feed: {path}", file=sys.stderr, flush=True)
