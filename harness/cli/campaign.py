"""``xocdia-hil campaign``: sweep one fault schedule over many seeds and aggregate the verdicts.

    xocdia-hil campaign --bench in-process --schedule fixtures/faults/chaos.yaml --seeds 1-200 --workers 2
    xocdia-hil campaign ... --scheduler tcp://10.0.0.5:8786      # a Dask distributed cluster
    xocdia-hil campaign ... --dialect xocdia-bus                  # the table speaking another device dialect

Prints a live progress line, then pass/fail counts, rounds/s, and each failing seed with its violations; writes
a manifest per failing seed under ``--out`` (replay one with ``xocdia-hil inject --replay``). Exit 1 when any
seed has a violation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path
from typing import Any

from harness.bench.config import load_bench
from harness.bench.tap import rig_taps
from harness.cli.common import CliError, Progress, add_dialect_option, positive_int
from harness.errors import require_extra
from harness.faults.campaign import DaskExecutor, Executor, LocalExecutor, SeedOutcome, parse_seeds, run_campaign
from harness.faults.manifest import check_writable_folder, git_revision, package_versions, write_manifest
from harness.faults.prepare import prepare_bench
from harness.faults.schedule import load_schedule
from harness.feed import FeedKind
from harness.live.session import FeedSession, add_feed_options


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("campaign", help="sweep a fault schedule over many seeds (process pool or Dask)")
    p.add_argument("--bench", required=True, help="bench name (fixtures/benches) or file")
    p.add_argument(
        "--schedule", required=True, help="fault schedule: a shipped name (xocdia-hil fixtures) or a YAML file"
    )
    p.add_argument("--seeds", required=True, help="seeds: N, N-M or a comma list (e.g. 1-1000)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, default=1, help="local worker processes (default 1)")
    where.add_argument("--scheduler", help="Dask scheduler address, tcp://HOST:PORT")
    p.add_argument("--out", type=Path, default=Path("campaign-failures"), help="manifests of failing seeds")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    add_dialect_option(p)
    add_feed_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    seeds = parse_seeds(args.seeds)
    schedule = load_schedule(args.schedule)
    prepare_bench(load_bench(args.bench, args.dialect), 0)  # refuses a production bench before any work is sent out
    check_writable_folder(args.out, f"--out {args.out}")  # the failing seeds' manifests are written at the end
    if args.scheduler and not str(args.scheduler).startswith("tcp://"):
        raise CliError(f"--scheduler: expected tcp://HOST:PORT, got {args.scheduler!r}")
    if args.scheduler:
        require_extra("dask", {"distributed": "dask[distributed]"}, "xocdia-hil campaign --scheduler")
    if (args.record or args.live) and (args.scheduler or args.workers > 1):
        raise CliError("--record and --live follow the seeds run in this process: use --workers 1")
    executor: Executor = DaskExecutor(args.scheduler) if args.scheduler else LocalExecutor(args.workers)
    progress = Progress(len(seeds), "campaign")
    failed = 0

    session = FeedSession(args.record, args.live, "campaign", hold=args.hold)
    feed = session.feed
    current = [seeds[0] if seeds else 0]

    def seen(outcome: SeedOutcome, done: int) -> None:
        nonlocal failed
        failed += not outcome.passed
        progress.update(done)
        if feed is not None:
            name = f"seed {outcome.seed}"
            feed.publish_last(FeedKind.VERDICT, scenario=name, ok=outcome.passed, outcome=str(outcome.outcome))
            if done < len(seeds):
                current[0] = seeds[done]

    start = time.perf_counter()
    text = schedule.to_yaml()
    with session:
        taps = rig_taps(feed, lambda: f"seed {current[0]}", args.pace) if feed is not None else contextlib.nullcontext()
        try:
            with taps:
                summary = run_campaign(executor, args.bench, text, seeds, seen, args.dialect)
        except OSError as exc:
            raise CliError(f"cannot reach the workers: {exc}") from None
        finally:
            progress.close()
        session.end(f"campaign: {len(seeds)} seeds, {len(summary.failing)} failed")
    wall = time.perf_counter() - start
    ran = len(seeds) - len(summary.refused)
    if args.json:
        print(json.dumps({
            "seeds": len(seeds), "passed": ran - len(summary.failing), "failed": [o.seed for o in summary.failing],
            "aborted": {str(o.seed): o.aborted for o in summary.aborted},
            "refused": [o.seed for o in summary.refused], "rounds": summary.rounds, "seconds": round(wall, 3),
        }, indent=2))  # fmt: skip
        return 1 if summary.failing or summary.refused else 0
    refused = f", {len(summary.refused)} refused" if summary.refused else ""
    print(f"campaign: {len(seeds)} seeds, {ran - len(summary.failing)} passed, {len(summary.failing)} failed, "
          f"{len(summary.aborted)} aborted (liveness){refused} — {summary.rounds} rounds in {wall:.1f} s "
          f"({summary.rounds / max(wall, 1e-9):.0f} rounds/s)")  # fmt: skip
    for o in summary.aborted:
        print(f"  aborted seed {o.seed}: {o.aborted}")
    revision, packages = git_revision(), package_versions()
    for o in summary.failing:
        path = args.out / f"seed-{o.seed}.json"
        write_manifest(path, {
            "seed": o.seed, "bench": args.bench, "dialect": args.dialect,
            "schedule": {"source": schedule.source, "sha256": schedule.digest(), "yaml": text},
            "git_revision": revision, "packages": packages, "history_hash": o.history_hash,
            "rounds_played": o.rounds, "aborted": o.aborted, "passed": False, "violations": list(o.violations),
        })  # fmt: skip
        print(f"  FAIL seed {o.seed} (manifest {path}):")
        for v in o.violations[:5]:
            print(f"    - {v}")
    if summary.refused:
        more = ", ..." if len(summary.refused) > 10 else ""
        seeds_text = ", ".join(str(o.seed) for o in summary.refused[:10]) + more
        raise CliError(
            f"refused: {len(summary.refused)} seeds did not run (seeds {seeds_text}): {summary.refused[0].refused}; "
            "leave the fault kinds this bench cannot apply out of the schedule (docs/faults.md)"
        )
    return 1 if summary.failing else 0
