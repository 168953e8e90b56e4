"""``xocdia-hil run``: the main job on a bench: a run of rounds with the simulator's random crowd betting through
the game server's adapter, live progress, and a summary that ends with the independent oracle's verdict.

``make run`` runs it on the local HIL bench (reference server subprocess, pty device lines, HTTP/WS players).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import replace
from typing import Any

from harness.bench.config import Bench, load_bench
from harness.bench.rig import BenchTimeout, Rig
from harness.cert.steps.context import format_money
from harness.cli.common import CliError, Progress, add_dialect_option, non_negative_int, positive_int
from harness.errors import AdapterError
from harness.files import load_profile
from harness.records import RoundEventKind

WALLET = 1_000_000  # opening balance of every crowd player (minor units)
VISITS = 5  # wallets opened per seat: p01.1 .. p01.5 (a seat's later visitors have no wallet and are refused)


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
    p.add_argument("--profile", default="", help="table profile (default: the bench's); the server's timings follow it")
    add_dialect_option(p)
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
    return replace(bench, profile=name, timing=timing)


def run(args: argparse.Namespace) -> int:
    bench = load_bench(args.bench, args.dialect)
    if args.profile:
        bench = _with_profile(bench, args.profile)
    players = {f"p{seat:02d}.{visit}": WALLET for seat in range(1, args.players + 1) for visit in range(1, VISITS + 1)}
    print(
        f"bench {bench.name}: {args.rounds} rounds, {args.players} seats, profile {bench.profile}, "
        f"seed {bench.seed if args.seed is None else args.seed}"
    )
    try:
        rig = Rig.build(bench, players, crowd=args.players, seed=args.seed)
    except (AdapterError, ValueError) as exc:  # ProfileError, ScriptError, an adapter that does not load
        raise CliError(f"cannot start bench {bench.name}: {exc}") from None
    progress = Progress(args.rounds, "rounds", force=sys.stderr.isatty())
    ends: Counter[str] = Counter()
    with rig:
        try:
            for done in range(1, args.rounds + 1):
                rid = rig.open_round()
                end = rig.play_to_end(rid)
                ends[end.kind if end.kind == RoundEventKind.SETTLED else f"{end.kind} {end.clause}"] += 1
                progress.update(done)
                if not progress.enabled:  # no terminal (CI logs): one line per round instead of the bar
                    print(
                        f"round {done}/{args.rounds}: {end.kind} {end.faces or end.clause}", file=sys.stderr, flush=True
                    )
            rig.run_for(0.2)  # let the last acknowledgements travel
            progress.close()
            verdict = rig.verdict()
            sent = [s.reply for s in rig.sent]
            accepted = [r for r in sent if r.accepted]
            staked = sum(r.stake for r in accepted)
            refused = Counter(r.code for r in sent if not r.accepted)
            returned = sum(row.returned for p in players for row in rig.adapter.bet_record(p))
        except (AdapterError, BenchTimeout) as exc:
            progress.close()
            print(f"xocdia-hil run: stopped: {exc}", file=sys.stderr)
            return 1
    print(f"rounds: {args.rounds} ({', '.join(f'{k}: {v}' for k, v in sorted(ends.items()))})")
    print(f"bets: {len(sent)} sent, {len(accepted)} accepted" + (f", refused {dict(refused)}" if refused else ""))
    print(f"staked {format_money(staked)}, returned {format_money(returned)}")
    print(verdict.summary())
    return 0 if verdict.passed else 1
