"""``xocdia-hil run``: the main job on a bench: a run of rounds with the simulator's random crowd betting through
the game server's adapter, live progress, and a summary that ends with the independent oracle's verdict.

``make run`` runs it on the local HIL bench (reference server subprocess, pty device lines, HTTP/WS players).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.bench.config import Bench, load_bench
from harness.bench.rig import BenchTimeout, Rig
from harness.bench.tap import tap_rig
from harness.cert.steps.context import format_money
from harness.cli.common import CliError, Progress, add_dialect_option, non_negative_int, positive_int
from harness.errors import AdapterError
from harness.files import load_profile, load_script, parse_yaml
from harness.live.session import FeedSession, add_feed_options
from harness.records import RoundEventKind
from simulator.script import ScriptError

WALLET = 1_000_000  # opening balance of every crowd player (minor units)
VISITS = 5  # wallets opened per seat, p01.1 .. p01.5: its regulars; a seat's 6th player is p01.1 back (seat_wallet)


MAX_SEATS = 100  # each seat is a WebSocket connection and VISITS wallets on the server: keep a run within fd limits


def seat_count(text: str) -> int:
    """argparse type: 0..MAX_SEATS seats."""
    value = non_negative_int(text)
    if value > MAX_SEATS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_SEATS} seats, got {value}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("run", help="play rounds with a random crowd on a bench and judge them")
    p.add_argument("--bench", default="local-hil", help="bench file or shipped name (default local-hil)")
    p.add_argument("--rounds", type=positive_int, default=30, help="rounds to play (default 30)")
    p.add_argument(
        "--players", type=seat_count, default=4, help=f"seats of the random crowd, 0-{MAX_SEATS} (default 4)"
    )
    p.add_argument("--seed", type=non_negative_int, default=None, help="root seed (default: the bench's)")
    p.add_argument(
        "--profile",
        default="",
        help="table profile (default: the bench's); the server's timings follow another profile than the bench's",
    )
    p.add_argument("--script", default="", help="incident script YAML (forced incidents on chosen rounds)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    add_dialect_option(p)
    add_feed_options(p)
    p.set_defaults(func=run)


def _with_profile(bench: Bench, name: str) -> Bench:
    """The bench with another table profile; the server's timings follow the profile's table (betting period,
    round gap) with waits long enough for its dealer. Raises ProfileError for an unknown or invalid profile."""
    table = load_profile(name).table
    timing = replace(
        bench.timing,
        betting_s=table.betting_period,
        round_gap_s=table.round_gap,
        result_timeout_s=max(bench.timing.result_timeout_s, 4 * table.betting_period),
        step_timeout_s=max(bench.timing.step_timeout_s, 10 * table.betting_period + 2 * table.pause_timeout),
    )
    waits = bench.table.result_timeout_s  # the table configuration's (None: for ever) is what the server is given
    result = None if waits is None else max(waits, 4 * table.betting_period)
    return replace(bench, profile=name, timing=timing, table=replace(bench.table, result_timeout_s=result))


def run(args: argparse.Namespace) -> int:
    bench = load_bench(args.bench, args.dialect)
    if args.profile and args.profile != bench.profile:  # the bench file's timing is already made for its profile
        bench = _with_profile(bench, args.profile)
    players = {f"p{seat:02d}.{visit}": WALLET for seat in range(1, args.players + 1) for visit in range(1, VISITS + 1)}
    script = _script(args.script)
    head = (
        f"bench {bench.name}: {args.rounds} rounds, {args.players} seats, profile {bench.profile}, "
        f"seed {bench.seed if args.seed is None else args.seed}"
    )
    if not args.json:
        print(head)
    with FeedSession(args.record, args.live, f"run on {bench.name}", hold=args.hold, rounds=args.rounds) as session:
        status = _play(args, bench, players, script, session)
    return status


def _script(path: str) -> list[dict[str, Any]] | None:
    """The incident script's steps (validated). Raises ScriptError naming the file and step."""
    if not path:
        return None
    load_script(path)  # the steps' checks, with messages naming the file
    data = parse_yaml(Path(path).read_text(encoding="utf-8"), f"cannot read script {path}", ScriptError)
    return list(data or [])


def _play(
    args: argparse.Namespace,
    bench: Bench,
    players: dict[str, int],
    script: list[dict[str, Any]] | None,
    session: FeedSession,
) -> int:
    try:
        rig = Rig.build(bench, players, script=script, crowd=args.players, seed=args.seed, wallets_per_seat=VISITS)
    except (AdapterError, ValueError) as exc:  # ProfileError, ScriptError, an adapter that does not load
        raise CliError(f"cannot start bench {bench.name}: {exc}") from None
    tap = tap_rig(rig, session.feed, f"{args.rounds} rounds", args.pace) if session.feed is not None else None
    if tap is None:  # judged round by round; a tap reads the rig's bets and actions, so its run is judged whole
        rig.stream_judging()
    progress = Progress(args.rounds, "rounds", force=sys.stderr.isatty())
    ends: Counter[str] = Counter()
    with rig:
        try:
            for done in range(1, args.rounds + 1):
                rid = rig.open_round()
                end = rig.play_to_end(rid)
                ends[end.kind if end.kind == RoundEventKind.SETTLED else f"{end.kind} {end.clause}"] += 1
                rig.judge_ended()
                progress.update(done)
                if not progress.enabled:  # no terminal (CI logs): one line per round instead of the bar
                    print(
                        f"round {done}/{args.rounds}: {end.kind} {end.faces or end.clause}", file=sys.stderr, flush=True
                    )
            rig.run_for(0.2)  # let the last acknowledgements travel
            progress.close()
            verdict = rig.verdict()
            tally = rig.crowd_tally
            problems = tally.problems()
            outcome = f"run: FAIL ({'; '.join(problems)})" if problems else ""
            if tap is not None:
                tap.finish(verdict, outcome or verdict.summary().splitlines()[0])
            staked, returned = rig.money()
        except (AdapterError, BenchTimeout) as exc:
            progress.close()
            if tap is not None:
                tap.finish(summary=f"stopped: {exc}")
            print(f"xocdia-hil run: stopped: {exc}", file=sys.stderr)
            return 1
    if args.json:
        summary = {
            "bench": bench.name,
            "rounds": args.rounds,
            "ends": dict(sorted(ends.items())),
            "bets": tally.to_json(),
            "staked": staked,
            "returned": returned,
            "oracle": {
                "outcome": str(verdict.outcome),
                "passed": verdict.passed,
                "rounds_checked": verdict.rounds_checked,
                "bets_checked": verdict.bets_checked,
                "differences": [str(d) for d in verdict.differences],
            },
            "outcome": "FAIL" if problems or not verdict.passed else "PASS",
            "problems": problems,
        }
        print(json.dumps(summary, indent=2))
        return 0 if verdict.passed and not problems else 1
    print(f"rounds: {args.rounds} ({', '.join(f'{k}: {v}' for k, v in sorted(ends.items()))})")
    refused = f", refused {dict(sorted(tally.refused.items()))}" if tally.refused else ""
    failed = f", failed {dict(sorted(tally.failed.items()))}" if tally.failed else ""
    print(f"bets: {tally.sent} sent, {tally.accepted} accepted{refused}{failed}")
    print(f"staked {format_money(staked)}, returned {format_money(returned)}")
    print(verdict.summary())
    if outcome:
        print(outcome)
    return 0 if verdict.passed and not problems else 1
