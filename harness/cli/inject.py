"""``xocdia-hil inject``: run one fault schedule against a bench and print the checkers' verdicts.

    xocdia-hil inject --bench in-process --schedule fixtures/faults/chaos.yaml --seed 7
    xocdia-hil inject --replay runs/inject-7.json
    xocdia-hil inject --bench in-process --schedule fixtures/faults/chaos.yaml --explore minimal.yaml

``--explore OUT``: instead of one run, a hypothesis exploration of schedules made of the schedule's fault kinds
(its explicit and random ones) with its rounds and players; a checker failure is shrunk to a minimal schedule
written to OUT (exit 1), none found is exit 0.

Prints a live progress line (stderr), then the faults applied, one verdict per checker and the history hash;
writes a manifest (``--manifest``, default ``faults-manifest-SEED.json``; on ``--replay M.json``, ``M.replay.json``
beside it: a replay never writes over the manifest it reads). Exit 0 when every checker passes,
1 on any violation (or, on ``--replay`` of an in-process run, a history hash that differs from the manifest's),
2 for bad input (bench not a fault target, invalid schedule, unreadable manifest).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.bench.config import load_bench
from harness.bench.tap import rig_taps
from harness.cli.common import CliError, Progress, add_dialect_option, non_negative_int, positive_int
from harness.errors import AdapterError
from harness.faults.injector import run_schedule
from harness.faults.manifest import check_writable_folder, manifest_data, read_manifest, write_manifest
from harness.faults.prepare import InjectionRefused, prepare_bench
from harness.faults.result import RunResult
from harness.faults.schedule import load_schedule
from harness.faults.schedule_model import Schedule
from harness.faults.shrink import explore
from harness.feed import FeedKind
from harness.live.session import FeedSession, add_feed_options
from harness.records import OpFunction, OpType


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("inject", help="run a fault schedule against a bench and check the ledger")
    p.add_argument("--bench", help="bench name (fixtures/benches) or file")
    p.add_argument("--schedule", help="fault schedule: a shipped name (xocdia-hil fixtures) or a YAML file")
    p.add_argument("--seed", type=non_negative_int, help="root seed (default: the schedule's)")
    p.add_argument("--replay", metavar="MANIFEST", help="rerun the run a manifest describes")
    p.add_argument("--manifest", type=Path, help="where to write the manifest (default faults-manifest-SEED.json)")
    p.add_argument("--explore", type=Path, metavar="OUT", help="explore and shrink schedules; write the minimal one")
    p.add_argument("--examples", type=positive_int, default=50, help="schedules --explore tries (default 50)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_dialect_option(p)
    add_feed_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    expected_hash = ""
    if args.replay:
        replay = read_manifest(args.replay)
        bench_ref, schedule, seed, expected_hash = replay.bench, replay.schedule, replay.seed, replay.history_hash
        args.dialect = args.dialect or replay.dialect
    else:
        if not args.bench or not args.schedule:
            raise CliError("inject needs --bench and --schedule (or --replay MANIFEST)")
        bench_ref = args.bench
        schedule = load_schedule(args.schedule)
        seed = schedule.seed if args.seed is None else args.seed
        if args.explore:
            return _explore(bench_ref, schedule, args.explore, args.examples, args.dialect)
    out = _manifest_path(args.manifest, args.replay, seed)
    check_writable_folder(out.parent, f"--manifest {out}")
    title = f"inject seed {seed}"
    with FeedSession(args.record, args.live, title, hold=args.hold, rounds=schedule.rounds) as session:
        result = _execute(bench_ref, schedule, seed, args.dialect, session, args.pace)
    if args.json:
        write_manifest(out, manifest_data(result, schedule, bench_ref, args.dialect))
        print(json.dumps(_json(result, out), indent=2))
        return 0 if result.passed else 1
    _print(result)
    write_manifest(out, manifest_data(result, schedule, bench_ref, args.dialect))
    print(f"manifest: {out}")
    if expected_hash:
        same = expected_hash == result.history_hash
        print(f"replay: history hash {'matches' if same else 'DIFFERS from'} the manifest's ({expected_hash[:16]})")
        if not same and not load_bench(bench_ref, args.dialect).realtime:
            return 1
        if not same:
            print("replay: (a real-time bench is not byte-reproducible; the verdict decides)")
    return 0 if result.passed else 1


def _manifest_path(given: Path | None, replayed: str | None, seed: int) -> Path:
    """Where this run's manifest goes: ``given``; else, on a replay, beside the manifest replayed
    (``NAME.replay.json``); else ``faults-manifest-SEED.json``. A replay never writes over the manifest it reads.

    Raises:
        CliError: ``given`` is the manifest being replayed.
    """
    if replayed is None:
        return given or Path(f"faults-manifest-{seed}.json")
    source = Path(replayed)
    if given is None:
        return source.with_name(f"{source.stem}.replay{source.suffix or '.json'}")
    if given.resolve() == source.resolve() or (given.exists() and given.samefile(source)):
        raise CliError(f"--manifest {given}: is the manifest being replayed; name another file")
    return given


def _execute(
    bench_ref: str,
    schedule: Schedule,
    seed: int,
    dialect: str | None = None,
    session: FeedSession | None = None,
    pace: float = 0.0,
) -> RunResult:
    bench = load_bench(bench_ref, dialect)
    progress = Progress(schedule.rounds, f"inject seed {seed}")

    def tick(done: int, total: int, aborted: str) -> None:
        progress.update(done)

    try:
        if session is None or session.feed is None:
            return run_schedule(bench, schedule, seed, progress=tick)
        feed = session.feed
        with rig_taps(feed, lambda: f"seed {seed}", pace):
            result = run_schedule(bench, schedule, seed, progress=tick)
        violations = [{"round": v.round_id, "bet": v.bet_id, "clause": v.checker, "what": v.what} for v in
                      result.report.violations]  # fmt: skip
        verdict = "PASS" if result.passed else "FAIL"
        summary = f"checkers: {verdict}: {result.rounds_played} rounds" + (
            f", aborted: {result.aborted}" if result.aborted else ""
        )
        feed.publish_last(FeedKind.VERDICT, final=True, ok=result.passed, summary=summary, differences=violations)
        session.end(summary)
        return result
    except InjectionRefused:
        raise  # the boundary reports it as it is: refused: ...
    except (AdapterError, ValueError) as exc:  # what went wrong on the bench, named after it
        raise CliError(f"bench {bench_ref}: {exc}") from None
    finally:
        progress.close()


def _explore(bench_ref: str, schedule: Schedule, out: Path, examples: int, dialect: str | None = None) -> int:
    kinds = sorted({f.kind for f in schedule.faults} | set(schedule.random.kinds if schedule.random else ()))
    if not kinds:
        raise CliError(f"{schedule.source}: --explore needs fault kinds (faults or random.kinds) to explore")
    check_writable_folder(out.parent, f"--explore {out}")  # written after the exploration
    bench = load_bench(bench_ref, dialect)
    prepare_bench(bench, schedule.seed)
    found = explore(bench, schedule, tuple(kinds), out, max_examples=examples)
    print(f"explored {found.runs} runs of schedules made of {', '.join(kinds)}")
    if found.minimal is None or found.replay is None:
        print("no checker failure found")
        return 0
    print(f"minimal failing schedule ({len(found.minimal.faults)} faults) written to {out}:")
    for f in found.minimal.faults:
        print(f"  fault {f.describe()}")
    print("its replay:")
    print("\n".join(found.replay.report.lines()))
    return 1


def _json(result: RunResult, manifest: Path) -> dict[str, Any]:
    """The run's result as JSON: seed, rounds, faults applied, bets attempted, checkers, verdict, history hash."""
    applied = [op.detail for op in result.history if op.f == OpFunction.FAULT]
    attempted = sum(1 for op in result.history if op.f == OpFunction.BET and op.type == OpType.INVOKE)
    return {
        "seed": result.seed,
        "rounds": result.rounds_played,
        "faults": applied,
        "bets_attempted": attempted,
        "aborted": result.aborted,
        "checkers": result.report.lines(),
        "passed": result.passed,
        "history_hash": result.history_hash,
        "manifest": str(manifest),
    }


def _print(result: RunResult) -> None:
    applied = [op.detail for op in result.history if op.f == OpFunction.FAULT]
    attempted = sum(1 for op in result.history if op.f == OpFunction.BET and op.type == OpType.INVOKE)
    print(f"seed {result.seed}: {result.rounds_played} rounds, {len(applied)} faults applied, "
          f"{attempted} bets attempted")  # fmt: skip
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
