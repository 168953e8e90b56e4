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
                                             [--profile-out FILE] [--json]

``--json`` prints only ``{"rig_rounds_per_s": ..., "model_rounds_per_s": ..., "rig_over_model": ...}``.
``--profile-out FILE`` also plays the rig once more under cProfile (not timed) and writes its pstats to FILE
(``python -m pstats FILE``, then ``sort cumulative`` and ``stats 20``).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import time
from dataclasses import dataclass

from harness.bench.config import Bench, load_bench
from harness.bench.rig import Rig
from harness.files import load_profile
from harness.records import RoundEventKind
from simulator import Table
from simulator.events import BetSent

BENCH = "in-process"
WALLET = 1_000_000  # opening balance of every visitor (minor units), as in ``xocdia-hil run``
RIG_TARGET = 2000.0  # rounds/s
RATIO_TARGET = 8.0  # model rounds/s over rig rounds/s


@dataclass(frozen=True)
class RigRun:
    seconds: float
    settled: int  # rounds the server settled (the others ended otherwise: cancelled, voided)
    bets: int  # bets the rig sent to the server
    accepted: int


def wallets(seats: int, rounds: int) -> dict[str, int]:
    """A wallet for every visitor the crowd can seat: ``p<seat>.<visit>``, at most one new visit per seat a round."""
    return {f"p{seat:02d}.{visit}": WALLET for seat in range(1, seats + 1) for visit in range(1, rounds + 2)}


def rig_run(bench: Bench, rounds: int, players: int, seed: int, profiler: cProfile.Profile | None = None) -> RigRun:
    """Play ``rounds`` rounds on a fresh rig with a random crowd of ``players`` seats; only the rounds are timed
    (and profiled)."""
    with Rig.build(bench, wallets(players, rounds), crowd=players, seed=seed) as rig:
        settled = 0
        if profiler is not None:
            profiler.enable()
        start = time.perf_counter()
        for _ in range(rounds):
            rid = rig.open_round()
            end = rig.play_to_end(rid)
            settled += end.kind == RoundEventKind.SETTLED
        elapsed = time.perf_counter() - start
        if profiler is not None:
            profiler.disable()
        accepted = sum(1 for s in rig.sent if s.reply.accepted)
        return RigRun(elapsed, settled, len(rig.sent), accepted)


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
    parser.add_argument("--json", action="store_true", help="print only the three figures as JSON")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1 or args.players < 1:
        parser.error("--rounds, --repeat and --players must be >= 1")
    bench = load_bench(BENCH)
    seed = bench.seed if args.seed is None else args.seed

    best_rig = best_model = float("inf")
    rig = RigRun(0.0, 0, 0, 0)
    model_bets = 0
    for _ in range(args.repeat):
        rig = rig_run(bench, args.rounds, args.players, seed)
        best_rig = min(best_rig, rig.seconds)
        elapsed, model_bets = model_run(bench.profile, args.rounds, args.players, seed)
        best_model = min(best_model, elapsed)
    if args.profile_out:
        profiler = cProfile.Profile()
        rig_run(bench, args.rounds, args.players, seed, profiler)
        profiler.dump_stats(args.profile_out)

    rig_rate = args.rounds / best_rig
    model_rate = args.rounds / best_model
    ratio = model_rate / rig_rate
    if args.json:
        print(json.dumps({"rig_rounds_per_s": rig_rate, "model_rounds_per_s": model_rate, "rig_over_model": ratio}))
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
    if args.profile_out:
        print(f"  cProfile of one more rig run: {args.profile_out}")


if __name__ == "__main__":
    main()
