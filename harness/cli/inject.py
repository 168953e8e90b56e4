"""``xocdia-hil inject``: run one fault schedule against a bench and print the checkers' verdicts.

    xocdia-hil inject --bench in-process --schedule fixtures/faults/chaos.yaml --seed 7
    xocdia-hil inject --replay runs/inject-7.json

Prints a live progress line (stderr), then the faults applied, one verdict per checker and the history hash;
writes a manifest (``--manifest``, default ``faults-manifest-SEED.json``). Exit 0 when every checker passes,
1 on any violation (or, on ``--replay`` of an in-process run, a history hash that differs from the manifest's),
2 for bad input (bench not a fault target, invalid schedule, unreadable manifest).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harness.adapters.base import AdapterError
from harness.bench.config import BenchError, load_bench
from harness.cli.common import CliError, Progress, non_negative_int
from harness.faults.injector import InjectionRefused, RunResult, run_schedule
from harness.faults.manifest import manifest_data, read_manifest, write_manifest
from harness.faults.schedule import Schedule, ScheduleError, load_schedule


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("inject", help="run a fault schedule against a bench and check the ledger")
    p.add_argument("--bench", help="bench name (fixtures/benches) or file")
    p.add_argument("--schedule", help="fault schedule YAML (fixtures/faults)")
    p.add_argument("--seed", type=non_negative_int, help="root seed (default: the schedule's)")
    p.add_argument("--replay", metavar="MANIFEST", help="rerun the run a manifest describes")
    p.add_argument("--manifest", type=Path, help="where to write the manifest (default faults-manifest-SEED.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    expected_hash = ""
    if args.replay:
        try:
            replay = read_manifest(args.replay)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        bench_ref, schedule, seed, expected_hash = replay.bench, replay.schedule, replay.seed, replay.history_hash
    else:
        if not args.bench or not args.schedule:
            raise CliError("inject needs --bench and --schedule (or --replay MANIFEST)")
        bench_ref = args.bench
        try:
            schedule = load_schedule(args.schedule)
        except ScheduleError as exc:
            raise CliError(str(exc)) from None
        seed = schedule.seed if args.seed is None else args.seed
    result = _execute(bench_ref, schedule, seed)
    _print(result)
    out = args.manifest or Path(f"faults-manifest-{seed}.json")
    write_manifest(out, manifest_data(result, schedule, bench_ref))
    print(f"manifest: {out}")
    if expected_hash:
        same = expected_hash == result.history_hash
        print(f"replay: history hash {'matches' if same else 'DIFFERS from'} the manifest's ({expected_hash[:16]})")
        if not same and not load_bench(bench_ref).realtime:
            return 1
        if not same:
            print("replay: (a real-time bench is not byte-reproducible; the verdict decides)")
    return 0 if result.passed else 1


def _execute(bench_ref: str, schedule: Schedule, seed: int) -> RunResult:
    try:
        bench = load_bench(bench_ref)
    except BenchError as exc:
        raise CliError(str(exc)) from None
    progress = Progress(schedule.rounds, f"inject seed {seed}")

    def tick(done: int, total: int, aborted: str) -> None:
        progress.update(done)

    try:
        return run_schedule(bench, schedule, seed, progress=tick)
    except InjectionRefused as exc:
        raise CliError(f"refused: {exc}") from None
    except (AdapterError, BenchError, ValueError) as exc:
        raise CliError(f"bench {bench_ref}: {exc}") from None
    finally:
        progress.close()


def _print(result: RunResult) -> None:
    applied = [op.detail for op in result.history if op.f == "fault"]
    print(f"seed {result.seed}: {result.rounds_played} rounds, {len(applied)} faults applied, "
          f"{sum(1 for op in result.history if op.f == 'bet' and op.type == 'invoke')} bets attempted")  # fmt: skip
    for line in applied:
        print(f"  fault {line}")
    if result.aborted:
        print(f"aborted: {result.aborted}")
    if result.final is None:
        print("final read: not taken — the run cannot be judged")
    print("checkers:")
    print("\n".join(result.report.lines()))
    print(f"verdict: {'PASS' if result.passed else 'FAIL'}")
    print(f"history hash: {result.history_hash}")
    sys.stdout.flush()
