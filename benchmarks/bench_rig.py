"""Whole-stack throughput on the in-process bench: rounds/s of the rig (model, five devices, both codecs, server
engine, crowd forwarding) against the table model alone, measured in the same run.

The rig plays rounds as ``xocdia-hil run --bench in-process --players 10`` does: ``Rig.build`` on the in-process
bench with a random crowd of 10 seats, then ``open_round`` / ``play_to_end`` per round, every crowd bet forwarded
to the server engine. The limit is the model alone: a simulator ``Table`` with the same profile, seed and seats,
its own fixed-schedule lamp, in virtual time, for as many rounds (what ``bench_simulator.py`` times).

Profile: the in-process bench's own, ``certification`` (no random incidents, compressed timings), for both the rig
and the model alone, so the ratio compares like with like; ``bench_simulator.py`` uses ``standard`` for its model
figure, which the in-process bench does not run, so its absolute rates are not comparable with this one's model.
Every visitor of every seat gets a wallet (``xocdia-hil run`` opens 5 a seat and refuses later visitors), so each
bet the model sends reaches the engine. Only the rounds are timed (not building the rig or the table). The rig runs
as shipped: its rounds last as long as the bench's server timing says (``betting_s`` 1.0 sim s, where the model's own
lamp gives the profile's 0.25 s), which is free for the model but not for the stack's fixed-step polls; and the model
alone runs with the cyclic GC paused (``Table.run`` does that), the rig with it on (``xocdia-hil run`` does not).

Targets: ``rig_over_model`` (model rounds/s over rig rounds/s: how many times costlier the whole stack is than the
model alone) <= 8, and the rig at >= 2,000 rounds/s on one core. Best of K repeats.

    .venv/bin/python benchmarks/bench_rig.py [--rounds N] [--players N] [--repeat K] [--seed S]
                                             [--profile-out FILE] [--json] [--record] [--live]

``--record`` also plays the rig with its bench event feed written as JSON Lines to a temporary file (what
``xocdia-hil run --record FILE`` does) and ``--live`` with the feed kept and served on a live page that one
reader (another process) follows over its event stream (``run --live``). Each is reported as a ratio of the same
run without it (targets ``record_over_plain`` >= 0.8; ``live_over_plain`` is reported), by CPU time of this
process over the rounds (``time.process_time``: the live page's server thread counts, the reader does not), so
that what else the machine runs does not enter the figure as waiting: the plain, recorded and served runs are
played in turn, K times, each after a full garbage collection and in a rotated order, and the ratio is that of the
least CPU time each took (on a loaded machine a run's CPU time only grows: caches shared with other work, a
virtual CPU held back by its host). The median of the K ratios of runs played side by side and the ratio of the
best wall times are printed beside it.

``--json`` prints only ``{"rig_rounds_per_s": ..., "rig_cpu_rounds_per_s": ..., "model_rounds_per_s": ...,
"rig_over_model": ..., "rig_over_floor": ..., "rig_direct_over_floor": ..., "api_and_ledger_us_per_round": ...,
"floor_us_per_round": ..., "load": ...}`` (and ``record_over_plain``, ``live_over_plain`` when asked for);
``rig_over_floor`` (the rig as shipped), ``rig_direct_over_floor`` (the rig with the server as the floor counts it:
``api: direct``, ``ledger: memory``), the HTTP API's and durable ledger's share (the first rig less the second) and
the floor are ``bench_rig_floor.py``'s, run in this
process after the rig's runs with the same rounds, seats, seed and repeats (the rig and the floor's parts timed in
that one run, wall clock, best of K: what the bench's plumbing costs over the work no bench can skip; both null,
with ``floor_error`` saying why, when the floor's run fails);
``rig_cpu_rounds_per_s`` is the rounds over the least CPU time (``time.process_time``) of the plain runs, the
figure the 2,000 rounds/s target is judged by on a shared machine, printed beside the wall-clock rate.
``--profile-out FILE`` also plays the rig once more under cProfile (not timed) and writes its pstats to FILE
(``python -m pstats FILE``, then ``sort cumulative`` and ``stats 20``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from harness.bench.config import Bench, load_bench
from harness.bench.rig import Rig
from harness.bench.tap import tap_rig
from harness.feed import Feed, JsonlSink
from harness.files import load_profile
from harness.live.server import LiveServer
from harness.records import RoundEventKind
from simulator import Table
from simulator.events import BetSent

BENCH = "in-process"
WALLET = 1_000_000  # opening balance of every visitor (minor units), as in ``xocdia-hil run``
RIG_TARGET = 2000.0  # rounds/s
RATIO_TARGET = 8.0  # model rounds/s over rig rounds/s
RECORD_TARGET = 0.8  # rig rounds/s with --record over rig rounds/s without (best CPU times)
# The live page's reader: another process that reads the event stream to its end (its CPU is not this process's).
READER = (
    "import sys, urllib.request\n"
    "with urllib.request.urlopen(sys.argv[1] + 'feed', timeout=120) as s:\n"
    "    while s.read(65536):\n"
    "        pass\n"
)


@dataclass(frozen=True)
class RigRun:
    seconds: float  # wall time of the rounds
    cpu: float  # CPU time of this process over the rounds (every thread)
    settled: int  # rounds the server settled (the others ended otherwise: cancelled, voided)
    bets: int  # bets the rig sent to the server
    accepted: int


def wallets(seats: int, rounds: int) -> dict[str, int]:
    """A wallet for every visitor the crowd can seat: ``p<seat>.<visit>``, at most one new visit per seat a round."""
    return {f"p{seat:02d}.{visit}": WALLET for seat in range(1, seats + 1) for visit in range(1, rounds + 2)}


def rig_run(
    bench: Bench,
    rounds: int,
    players: int,
    seed: int,
    profiler: cProfile.Profile | None = None,
    feed: Feed | None = None,
) -> RigRun:
    """Play ``rounds`` rounds on a fresh rig with a random crowd of ``players`` seats; only the rounds are timed
    (and profiled), after a full garbage collection. With ``feed``, the rig is tapped onto it (publishing, and
    finishing the tap, are timed)."""
    with Rig.build(bench, wallets(players, rounds), crowd=players, seed=seed) as rig:
        tap = tap_rig(rig, feed) if feed is not None else None
        settled = 0
        gc.collect()
        if profiler is not None:
            profiler.enable()
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(rounds):
            rid = rig.open_round()
            end = rig.play_to_end(rid)
            settled += end.kind == RoundEventKind.SETTLED
        if tap is not None:
            tap.finish()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        if profiler is not None:
            profiler.disable()
        accepted = sum(1 for s in rig.sent if s.reply.accepted)
        return RigRun(elapsed, cpu, settled, len(rig.sent), accepted)


@contextlib.contextmanager
def recording() -> Iterator[Feed]:
    """A feed written as JSON Lines to a temporary file (``run --record``), nothing kept in memory."""
    with tempfile.TemporaryDirectory(prefix="bench-rig-") as tmp, open(os.path.join(tmp, "run.jsonl"), "w") as out:
        feed = Feed(keep=False)
        sink = JsonlSink(out)
        feed.writers.append(sink)
        yield feed
        sink.close()


@contextlib.contextmanager
def serving() -> Iterator[Feed]:
    """A feed kept and served on a live page on 127.0.0.1 (``run --live``), one reader (another process) following
    its stream to the end."""
    feed = Feed()
    server = LiveServer(feed, "127.0.0.1", 0)
    url = server.start()
    reader = subprocess.Popen([sys.executable, "-c", READER, url])
    try:
        yield feed
    finally:
        server.stop()
        try:
            reader.wait(timeout=10)
        except subprocess.TimeoutExpired:
            reader.kill()
            reader.wait()


def model_run(profile_name: str, rounds: int, players: int, seed: int) -> tuple[float, int]:
    """Seconds for the model alone to play ``rounds`` rounds (virtual time, its own lamp), bets it sent."""
    table = Table(load_profile(profile_name), seed=seed, players=players)
    start = time.perf_counter()
    table.run(rounds)
    elapsed = time.perf_counter() - start
    return elapsed, sum(1 for e in table.log.events if isinstance(e, BetSent))


@dataclass(frozen=True)
class FeedRatio:
    """A feed's cost as rounds/s with it over rounds/s without it: by the best CPU times, by the median of the
    repetitions' side-by-side CPU ratios, and by the best wall times."""

    cpu_best: float
    cpu_median: float
    cpu_all: tuple[float, ...]
    wall_best: float


def feed_ratio(plain: list[RigRun], fed: list[RigRun]) -> FeedRatio:
    """The ratio of ``plain`` runs to ``fed`` runs played side by side (same index, same repetition)."""
    pairs = tuple(p.cpu / f.cpu for p, f in zip(plain, fed, strict=True))
    best = min(p.cpu for p in plain) / min(f.cpu for f in fed)
    wall = min(p.seconds for p in plain) / min(f.seconds for f in fed)
    return FeedRatio(best, statistics.median(pairs), pairs, wall)


def rig_arguments(description: str) -> argparse.ArgumentParser:
    """A parser with the options every rig benchmark takes: ``--rounds``, ``--players``, ``--repeat``, ``--seed``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--players", type=int, default=10, help="seats of the random crowd")
    parser.add_argument("--repeat", type=int, default=3, help="best of K")
    parser.add_argument("--seed", type=int, default=None, help="root seed (default: the bench's)")
    return parser


def parse_rig_arguments(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, Bench, int]:
    """The parsed options, the in-process bench and the root seed (``--seed``, else the bench's). Exits 2 (argparse's
    usage error) when ``--rounds``, ``--repeat`` or ``--players`` is below 1."""
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1 or args.players < 1:
        parser.error("--rounds, --repeat and --players must be >= 1")
    bench = load_bench(BENCH)
    return args, bench, bench.seed if args.seed is None else args.seed


def floor_figures(rounds: int, players: int, seed: int, repeat: int) -> dict[str, Any]:
    """``bench_rig_floor.py --json``'s figures for the same rounds, seats, seed and repeats, measured in this
    process: its ``rig_over_floor`` is the rig's best time a round over the floor's (the sum of its parts), both
    taken in that one run. When the floor's run fails (its recording, its replay check), both figures are None and
    ``floor_error`` says why."""
    import bench_rig_floor  # this folder is on sys.path; it imports this module, so not at the top

    argv = ["bench_rig_floor.py", "--rounds", str(rounds), "--players", str(players), "--repeat", str(repeat)]
    out = io.StringIO()
    saved = sys.argv
    sys.argv = [*argv, "--seed", str(seed), "--json"]
    try:
        with contextlib.redirect_stdout(out):
            bench_rig_floor.main()
    except (Exception, SystemExit) as exc:  # the floor's own checks exit; its recording may fail on a bench change
        keys = ("rig_over_floor", "rig_direct_over_floor", "api_and_ledger_us_per_round", "floor_us_per_round")
        return {**dict.fromkeys(keys), "floor_error": f"{type(exc).__name__}: {exc}"}
    finally:
        sys.argv = saved
    figures: dict[str, Any] = json.loads(out.getvalue())
    return figures


def main() -> None:
    parser = rig_arguments((__doc__ or "").splitlines()[0])
    parser.add_argument("--profile-out", default=None, help="write a cProfile (pstats) of one more rig run here")
    parser.add_argument("--json", action="store_true", help="print only the figures as JSON")
    parser.add_argument("--record", action="store_true", help="also time the rig writing its feed (run --record)")
    parser.add_argument("--live", action="store_true", help="also time the rig serving its live page (run --live)")
    args, bench, seed = parse_rig_arguments(parser)

    def plain() -> RigRun:
        return rig_run(bench, args.rounds, args.players, seed)

    def fed(feeding: Callable[[], contextlib.AbstractContextManager[Feed]]) -> Callable[[], RigRun]:
        def play() -> RigRun:
            with feeding() as feed:
                return rig_run(bench, args.rounds, args.players, seed, feed=feed)

        return play

    modes: dict[str, Callable[[], RigRun]] = {"plain": plain}
    if args.record:
        modes["record"] = fed(recording)
    if args.live:
        modes["live"] = fed(serving)
    runs: dict[str, list[RigRun]] = {name: [] for name in modes}
    best_model = float("inf")
    model_bets = 0
    names = list(modes)
    for k in range(args.repeat):
        for name in names[k % len(names) :] + names[: k % len(names)]:  # rotated: no mode always runs first
            runs[name].append(modes[name]())
        elapsed, model_bets = model_run(bench.profile, args.rounds, args.players, seed)
        best_model = min(best_model, elapsed)
    if args.profile_out:
        profiler = cProfile.Profile()
        rig_run(bench, args.rounds, args.players, seed, profiler)
        profiler.dump_stats(args.profile_out)

    best_rig = min(r.seconds for r in runs["plain"])
    best_cpu = min(r.cpu for r in runs["plain"])
    rig = runs["plain"][-1]
    rig_rate = args.rounds / best_rig
    cpu_rate = args.rounds / best_cpu
    model_rate = args.rounds / best_model
    ratio = model_rate / rig_rate
    ratios = {f"{name}_over_plain": feed_ratio(runs["plain"], runs[name]) for name in names[1:]}
    if args.json:
        floor = floor_figures(args.rounds, args.players, seed, args.repeat)
        figures = {
            "rig_rounds_per_s": rig_rate,
            "rig_cpu_rounds_per_s": cpu_rate,
            "model_rounds_per_s": model_rate,
            "rig_over_model": ratio,
            "rig_over_floor": floor["rig_over_floor"],
            "rig_direct_over_floor": floor["rig_direct_over_floor"],
            "api_and_ledger_us_per_round": floor["api_and_ledger_us_per_round"],
            "floor_us_per_round": floor["floor_us_per_round"],
            **({"floor_error": floor["floor_error"]} if "floor_error" in floor else {}),
            "load": os.getloadavg()[0],
        }
        print(json.dumps(figures | {key: r.cpu_best for key, r in ratios.items()}))
        return
    n = args.rounds
    rig_us, model_us = best_rig / n * 1e6, best_model / n * 1e6
    head = f"bench={bench.name} profile={bench.profile} players={args.players} rounds={n} seed={seed}"
    print(f"{head} (best of {args.repeat}; load average {os.getloadavg()[0]:.2f})")
    print(f"  rig                     {rig_rate:10,.0f} rounds/s   ({best_rig:.3f} s, {rig_us:,.0f} us/round)")
    cpu_us = best_cpu / n * 1e6
    print(f"  rig, by CPU time        {cpu_rate:10,.0f} rounds/s   ({best_cpu:.3f} s CPU, {cpu_us:,.0f} us/round)")
    print(f"  model alone             {model_rate:10,.0f} rounds/s   ({best_model:.3f} s, {model_us:,.1f} us/round)")
    accepted = f"{rig.accepted / n:.1f} accepted; {rig.settled} of {n} rounds settled"
    print(f"  rig bets                {rig.bets / n:8.1f} a round sent, {accepted}")
    print(f"  model bets              {model_bets / n:8.1f} a round")
    verdict = f"target <= {RATIO_TARGET:.0f}x: " + ("ok" if ratio <= RATIO_TARGET else "ABOVE TARGET")
    print(f"  rig_over_model          {ratio:8.2f}x   (model rounds/s / rig rounds/s; {verdict})")
    verdict = "ok" if rig_rate >= RIG_TARGET else "BELOW TARGET"
    print(f"  rig vs target           {rig_rate / RIG_TARGET:8.2f}x of {RIG_TARGET:,.0f} rounds/s ({verdict})")
    verdict = "ok" if cpu_rate >= RIG_TARGET else "BELOW TARGET"
    target = f"{RIG_TARGET:,.0f} rounds per CPU second"
    print(f"  rig CPU vs target       {cpu_rate / RIG_TARGET:8.2f}x of {target} ({verdict})")
    for key, r in ratios.items():
        what = "--record" if key.startswith("record") else "--live, one reader"
        verdict = ""
        if key == "record_over_plain":
            verdict = f"; target >= {RECORD_TARGET}: " + ("ok" if r.cpu_best >= RECORD_TARGET else "BELOW TARGET")
        print(f"  {key:<23} {r.cpu_best:8.2f}x   (rig rounds/s with {what} / without, best CPU times{verdict})")
        pairs = ", ".join(f"{x:.2f}" for x in r.cpu_all)
        print(f"  {'':<23} {'':9}   (side by side: median {r.cpu_median:.2f} of {pairs}; best wall: {r.wall_best:.2f})")
    if args.profile_out:
        print(f"  cProfile of one more rig run: {args.profile_out}")


if __name__ == "__main__":
    main()
