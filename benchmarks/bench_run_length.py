"""Per-round cost against run length: CPU time (``time.process_time``) of one round of the rig, and of the oracle's
end-of-run verdict per round judged, at 100, 1,000 and 10,000 rounds of one run (more with ``--sizes``).

One rig plays the longest run as ``xocdia-hil run --bench in-process --players 10`` does (a random crowd of 10 seats,
5 wallets a seat, the seats' later players betting from them). The rig's per-round figure at N rounds is the CPU
time of the window of rounds just before round N (``--window`` rounds, 100 by default) over the window: what a round
costs once the run is that long, which is flat when nothing the rig does grows with the rounds played. At each size
the observation is read and judged (not timed as rounds); judging's per-round figure is the verdict's CPU time over
N. The limit is the first size, measured in the same run: the targets are the last size's per-round figures within
10 % of the first's (``last/first <= 1.10``). Wall times and the load average are printed beside the CPU times.

    .venv/bin/python benchmarks/bench_run_length.py [--sizes 100,1000,10000] [--window 100] [--ledger memory]
                                                    [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import time

from harness.bench.config import Bench, load_bench
from harness.bench.rig import Rig
from harness.cli.run import VISITS, WALLET
from harness.judge.oracle import judge

FLAT_TARGET = 1.10  # the last size's per-round CPU over the first's
SEATS = 10


@dataclasses.dataclass(frozen=True)
class Point:
    """The figures at one run length."""

    rounds: int
    rig_cpu_us: float  # CPU a round over the window before ``rounds``
    rig_wall_us: float
    judge_cpu_us: float  # the verdict's CPU over ``rounds``
    judge_wall_us: float
    observe_cpu_s: float  # reading the observation from the server
    outcome: str
    bets: int


def measure(bench: Bench, sizes: list[int], window: int) -> list[Point]:
    """Play ``max(sizes)`` rounds on one rig; at each size, the window's per-round CPU and a verdict."""
    players = {f"p{s:02d}.{v}": WALLET for s in range(1, SEATS + 1) for v in range(1, VISITS + 1)}
    points: list[Point] = []
    with Rig.build(bench, players, crowd=SEATS, wallets_per_seat=VISITS) as rig:
        gc.collect()
        played = 0
        for size in sorted(sizes):
            start = max(played, size - window)
            while played < start:
                rig.play_to_end(rig.open_round())
                played += 1
            wall, cpu = time.perf_counter(), time.process_time()
            while played < size:
                rig.play_to_end(rig.open_round())
                played += 1
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            n = size - start
            observe = time.process_time()
            obs = rig.observation()
            observe = time.process_time() - observe
            jwall, jcpu = time.perf_counter(), time.process_time()
            verdict = judge(obs)
            jcpu, jwall = time.process_time() - jcpu, time.perf_counter() - jwall
            per_round = (cpu / n * 1e6, wall / n * 1e6, jcpu / size * 1e6, jwall / size * 1e6)
            points.append(Point(size, *per_round, observe, str(verdict.outcome), verdict.bets_checked))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="run lengths, comma-separated")
    parser.add_argument("--window", type=int, default=100, help="rounds timed before each size")
    parser.add_argument("--ledger", choices=("sqlite", "memory"), default="sqlite", help="the in-process ledger")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    if not sizes or sizes[0] < 1 or args.window < 1:
        parser.error("--sizes and --window must be >= 1")
    bench = load_bench("in-process")
    bench = dataclasses.replace(
        bench, server=dataclasses.replace(bench.server, options={**bench.server.options, "ledger": args.ledger})
    )
    load = os.getloadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    points = measure(bench, sizes, args.window)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    first, last = points[0], points[-1]
    rig_ratio = last.rig_cpu_us / first.rig_cpu_us
    judge_ratio = last.judge_cpu_us / first.judge_cpu_us
    if args.json:
        figures = {
            "points": [dataclasses.asdict(p) for p in points],
            "rig_last_over_first": rig_ratio,
            "judge_last_over_first": judge_ratio,
            "load": load[0],
        }
        print(json.dumps(figures))
        return
    print(
        f"in-process bench, {SEATS} seats, ledger {args.ledger}, window {args.window} rounds "
        f"(load average {load[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; "
        f"{cpu:.1f} s CPU, {wall:.1f} s wall in all)"
    )
    print("  rounds   rig CPU/round  rig wall/round  judge CPU/round  judge wall/round  observe CPU  verdict")
    for p in points:
        print(
            f"  {p.rounds:>6,}  {p.rig_cpu_us:10,.0f} us  {p.rig_wall_us:11,.0f} us  {p.judge_cpu_us:12,.1f} us"
            f"  {p.judge_wall_us:13,.1f} us  {p.observe_cpu_s:8.2f} s  {p.outcome}, {p.bets:,} bets"
        )
    for name, ratio in (("rig", rig_ratio), ("judging", judge_ratio)):
        verdict = "ok" if ratio <= FLAT_TARGET else "ABOVE TARGET"
        print(
            f"  {name} per round at {last.rounds:,} / at {first.rounds:,}: {ratio:.2f}x "
            f"(CPU; target <= {FLAT_TARGET:.2f}: {verdict})"
        )


if __name__ == "__main__":
    main()
