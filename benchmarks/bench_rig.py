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
reader follows over its event stream (``run --live``); each is reported as rig rounds/s with it over rig rounds/s
without it, same run (targets ``record_over_plain`` >= 0.8; ``live_over_plain`` is reported).

``--json`` prints only ``{"rig_rounds_per_s": ..., "model_rounds_per_s": ..., "rig_over_model": ...}``.
``--profile-out FILE`` also plays the rig once more under cProfile (not timed) and writes its pstats to FILE
(``python -m pstats FILE``, then ``sort cumulative`` and ``stats 20``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

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
RECORD_TARGET = 0.8  # rig rounds/s with --record over rig rounds/s without


@dataclass(frozen=True)
class RigRun:
    seconds: float
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
    (and profiled). With ``feed``, the rig is tapped onto it (publishing, and finishing the tap, are timed)."""
    with Rig.build(bench, wallets(players, rounds), crowd=players, seed=seed) as rig:
        tap = tap_rig(rig, feed) if feed is not None else None
        settled = 0
        if profiler is not None:
            profiler.enable()
        start = time.perf_counter()
        for _ in range(rounds):
            rid = rig.open_round()
            end = rig.play_to_end(rid)
            settled += end.kind == RoundEventKind.SETTLED
        if tap is not None:
            tap.finish()
        elapsed = time.perf_counter() - start
        if profiler is not None:
            profiler.disable()
        accepted = sum(1 for s in rig.sent if s.reply.accepted)
        return RigRun(elapsed, settled, len(rig.sent), accepted)


@contextlib.contextmanager
def recording() -> Iterator[Feed]:
    """A feed written as JSON Lines to a temporary file (``run --record``), nothing kept in memory."""
    with tempfile.TemporaryDirectory(prefix="bench-rig-") as tmp, open(os.path.join(tmp, "run.jsonl"), "w") as out:
        feed = Feed(keep=False)
        sink = JsonlSink(out)
        feed.sinks.append(sink)
        yield feed
        sink.close()


@contextlib.contextmanager
def serving() -> Iterator[Feed]:
    """A feed kept and served on a live page on 127.0.0.1 (``run --live``), one reader following its stream."""
    feed = Feed()
    server = LiveServer(feed, "127.0.0.1", 0)
    url = server.start()

    def follow() -> None:
        with contextlib.suppress(OSError), urllib.request.urlopen(url + "feed", timeout=60) as stream:
            while stream.read(65536):
                pass

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    try:
        yield feed
    finally:
        server.stop()
        reader.join(timeout=5)


def model_run(profile_name: str, rounds: int, players: int, seed: int) -> tuple[float, int]:
    """Seconds for the model alone to play ``rounds`` rounds (virtual time, its own lamp), bets it sent."""
    table = Table(load_profile(profile_name), seed=seed, players=players)
    start = time.perf_counter()
    table.run(rounds)
    elapsed = time.perf_counter() - start
    return elapsed, sum(1 for e in table.log.events if isinstance(e, BetSent))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--players", type=int, default=10, help="seats of the random crowd")
    parser.add_argument("--repeat", type=int, default=3, help="best of K")
    parser.add_argument("--seed", type=int, default=None, help="root seed (default: the bench's)")
    parser.add_argument("--profile-out", default=None, help="write a cProfile (pstats) of one more rig run here")
    parser.add_argument("--json", action="store_true", help="print only the figures as JSON")
    parser.add_argument("--record", action="store_true", help="also time the rig writing its feed (run --record)")
    parser.add_argument("--live", action="store_true", help="also time the rig serving its live page (run --live)")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1 or args.players < 1:
        parser.error("--rounds, --repeat and --players must be >= 1")
    bench = load_bench(BENCH)
    seed = bench.seed if args.seed is None else args.seed

    best_rig = best_model = float("inf")
    rig = RigRun(0.0, 0, 0, 0)
    model_bets = 0
    best_record = best_live = float("inf")
    for _ in range(args.repeat):
        rig = rig_run(bench, args.rounds, args.players, seed)
        best_rig = min(best_rig, rig.seconds)
        elapsed, model_bets = model_run(bench.profile, args.rounds, args.players, seed)
        best_model = min(best_model, elapsed)
        if args.record:
            with recording() as feed:
                best_record = min(best_record, rig_run(bench, args.rounds, args.players, seed, feed=feed).seconds)
        if args.live:
            with serving() as feed:
                best_live = min(best_live, rig_run(bench, args.rounds, args.players, seed, feed=feed).seconds)
    if args.profile_out:
        profiler = cProfile.Profile()
        rig_run(bench, args.rounds, args.players, seed, profiler)
        profiler.dump_stats(args.profile_out)

    rig_rate = args.rounds / best_rig
    model_rate = args.rounds / best_model
    ratio = model_rate / rig_rate
    feeds = {}
    if args.record:
        feeds["record_over_plain"] = best_rig / best_record
    if args.live:
        feeds["live_over_plain"] = best_rig / best_live
    if args.json:
        figures = {"rig_rounds_per_s": rig_rate, "model_rounds_per_s": model_rate, "rig_over_model": ratio}
        print(json.dumps(figures | feeds))
        return
    n = args.rounds
    rig_us, model_us = best_rig / n * 1e6, best_model / n * 1e6
    head = f"bench={bench.name} profile={bench.profile} players={args.players} rounds={n} seed={seed}"
    print(f"{head} (best of {args.repeat})")
    print(f"  rig                     {rig_rate:10,.0f} rounds/s   ({best_rig:.3f} s, {rig_us:,.0f} us/round)")
    print(f"  model alone             {model_rate:10,.0f} rounds/s   ({best_model:.3f} s, {model_us:,.1f} us/round)")
    accepted = f"{rig.accepted / n:.1f} accepted; {rig.settled} of {n} rounds settled"
    print(f"  rig bets                {rig.bets / n:8.1f} a round sent, {accepted}")
    print(f"  model bets              {model_bets / n:8.1f} a round")
    verdict = f"target <= {RATIO_TARGET:.0f}x: " + ("ok" if ratio <= RATIO_TARGET else "ABOVE TARGET")
    print(f"  rig_over_model          {ratio:8.2f}x   (model rounds/s / rig rounds/s; {verdict})")
    verdict = "ok" if rig_rate >= RIG_TARGET else "BELOW TARGET"
    print(f"  rig vs target           {rig_rate / RIG_TARGET:8.2f}x of {RIG_TARGET:,.0f} rounds/s ({verdict})")
    if "record_over_plain" in feeds:
        got = feeds["record_over_plain"]
        verdict = f"target >= {RECORD_TARGET}: " + ("ok" if got >= RECORD_TARGET else "BELOW TARGET")
        print(f"  record_over_plain       {got:8.2f}x   (rig rounds/s with --record / without; {verdict})")
    if "live_over_plain" in feeds:
        got = feeds["live_over_plain"]
        print(f"  live_over_plain         {got:8.2f}x   (rig rounds/s with --live, one reader / without)")
    if args.profile_out:
        print(f"  cProfile of one more rig run: {args.profile_out}")


if __name__ == "__main__":
    main()
