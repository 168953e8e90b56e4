"""Fault-injection campaign throughput on the in-process bench: rounds/s per worker, and the speed-up of 2 worker
processes over 1 (target >= 1.7x). Targets for one worker: the injector at >= 0.7 of the bare rig, and the bare rig
at >= 2,000 rounds/s.

Two limits are measured in the same run: the same rounds played by a bare rig (the same bench, players and bets,
no schedule, no history, no checkers), so ``injector / bare`` is the cost of fault injection; and the speed-up
of 2 processes over 1 on a pure-CPU loop, which is what the machine can give right now (on a shared machine it
can be far below 2). The campaign's speed-up is printed against both, and against the 1.7 target.

    .venv/bin/python benchmarks/bench_campaign.py [--seeds N] [--schedule fixtures/faults/chaos.yaml]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.faults.campaign import LocalExecutor, run_campaign
from harness.faults.schedule import load_schedule
from simulator.bets import BetType

CHAOS = Path(__file__).resolve().parents[1] / "fixtures" / "faults" / "chaos.yaml"
BARE_TARGET = 2000.0  # rounds/s of the bare rig on one core
INJECTOR_TARGET = 0.7  # injector rounds/s (1 worker) over the bare rig's


def bare_rounds_per_s(rounds: int, players: int, bets: int) -> float:
    """Rounds/s of a bare rig on the in-process bench: open, bet, play to the end."""
    rng = random.Random(1)
    with Rig.build(load_bench("in-process"), {f"p{i + 1}": 10**9 for i in range(players)}, crowd=0, seed=1) as rig:
        for p in rig.opening:
            rig.adapter.connect(p)
        start = time.perf_counter()
        for _ in range(rounds):
            rid = rig.open_round()
            for p in rig.opening:
                for _ in range(bets):
                    rig.bet(p, str(rng.choice(tuple(BetType))), 100)
            rig.play_to_end(rid)
        return rounds / (time.perf_counter() - start)


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def machine_speedup(tasks: int = 16, n: int = 3_000_000) -> float:
    """Wall-clock speed-up of 2 processes over 1 on a pure-CPU loop (the machine's limit right now)."""
    walls = []
    for workers in (1, 2):
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_spin, [1] * workers))  # start the workers before timing
            start = time.perf_counter()
            list(pool.map(_spin, [n] * tasks))
            walls.append(time.perf_counter() - start)
    return walls[0] / walls[1]


def campaign_rounds_per_s(schedule_text: str, seeds: list[int], workers: int) -> tuple[float, int]:
    start = time.perf_counter()
    summary = run_campaign(LocalExecutor(workers), "in-process", schedule_text, seeds)
    wall = time.perf_counter() - start
    assert not summary.failing, [o.seed for o in summary.failing]
    return summary.rounds / wall, summary.rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=60, help="seeds per measurement")
    parser.add_argument("--schedule", default=str(CHAOS))
    args = parser.parse_args()
    schedule = load_schedule(args.schedule)
    text = schedule.to_yaml()
    seeds = list(range(1, args.seeds + 1))
    print(f"cores: {os.cpu_count()}  schedule: {Path(args.schedule).name}  seeds: {len(seeds)}")
    bare = bare_rounds_per_s(300, schedule.players, schedule.bets_per_round)
    one, rounds = campaign_rounds_per_s(text, seeds, 1)
    two, _ = campaign_rounds_per_s(text, seeds, 2)
    verdict = "ok" if bare >= BARE_TARGET else "BELOW TARGET"
    print(f"bare rig (limit):        {bare:8.0f} rounds/s  (target >= {BARE_TARGET:,.0f}: {verdict})")
    verdict = "ok" if one / bare >= INJECTOR_TARGET else "BELOW TARGET"
    share = f"{one / bare:.2f} of the bare rig; target >= {INJECTOR_TARGET}: {verdict}"
    print(f"injector, 1 worker:      {one:8.0f} rounds/s per worker  ({share})")
    print(f"injector, 2 workers:     {two:8.0f} rounds/s in all  ({two / 2:.0f} per worker), {rounds} rounds a run")
    machine = machine_speedup()
    speedup = two / one
    verdict = "ok" if speedup >= 1.7 else "BELOW TARGET"
    print(f"machine 2 procs / 1:     {machine:.2f}x  (pure-CPU loop: what this machine gives now)")
    print(f"speed-up 2 workers / 1:  {speedup:.2f}x  ({speedup / machine:.2f} of the machine's, "
          f"{speedup / 2.0:.2f} of ideal 2.0; target 1.7x: {verdict})")  # fmt: skip


if __name__ == "__main__":
    main()
