"""Live bias monitor: detection power and false-alarm rate, measured by seeded simulation.

Targets: a 1 pp per-token bias (P(red) 0.51, and 0.49) caught within 10,000 settled rounds in
>= 90 % of runs; <= 1 % false alarms per 100,000 fair rounds. Each rate is printed with its 95 % Wilson
interval and as a ratio against its target. Fair rounds use 4 raw bits each (nibble popcounts), biased rounds
Binomial(4, p), the same distribution as four independent tokens with P(red) = p.

    .venv/bin/python benchmarks/bench_monitor.py [--runs N] [--fair-runs N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import numpy.typing as npt

from harness.stats.fairness import monitor_design
from harness.stats.monitor import first_alarms
from harness.stats.settlement import make_generator

NIBBLE_POPCOUNT = np.array([bin(b & 15).count("1") for b in range(256)], dtype=np.int8)
HIGH_POPCOUNT = np.array([bin(b >> 4).count("1") for b in range(256)], dtype=np.int8)


def fair_reds(rng: np.random.Generator, runs: int, rounds: int) -> npt.NDArray[np.int8]:
    """runs × rounds fair red counts from raw bits, two rounds per byte."""
    raw = rng.bit_generator.random_raw(runs * rounds // 16).view(np.uint8)
    out = np.empty(runs * rounds, dtype=np.int8)
    out[0::2] = NIBBLE_POPCOUNT[raw]
    out[1::2] = HIGH_POPCOUNT[raw]
    return out.reshape(runs, rounds)


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def batched(runs: int, batch: int) -> list[int]:
    return [min(batch, runs - i) for i in range(0, runs, batch)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20000, help="biased runs per direction (10,000 rounds each)")
    parser.add_argument("--fair-runs", type=int, default=40000, help="fair runs of 100,000 rounds")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    d = monitor_design()
    horizon, epoch = 10_000, 100_000
    rng = make_generator(args.seed)
    print(f"design: anytime-valid mixture, alarm level {d.alpha:.3g}, rho {d.rho:g}, checked every round")

    start = time.perf_counter()
    for p in (0.51, 0.49):
        alarms = np.concatenate(
            [first_alarms(rng.binomial(4, p, size=(n, horizon)).astype(np.int8), d) for n in batched(args.runs, 500)]
        )
        hits = int((alarms > 0).sum())
        low, high = wilson(hits, args.runs)
        median = float(np.median(alarms[alarms > 0])) if hits else float("nan")
        print(
            f"P(red) {p}: caught within {horizon:,} rounds in {hits}/{args.runs} runs "
            f"= {hits / args.runs:.3f} (95 % CI {low:.3f}-{high:.3f}); median alarm round {median:,.0f}; "
            f"ratio to the 0.90 target {hits / args.runs / 0.9:.3f}"
        )

    alarms = np.concatenate([first_alarms(fair_reds(rng, n, epoch), d) for n in batched(args.fair_runs, 100)])
    hits = int((alarms > 0).sum())
    low, high = wilson(hits, args.fair_runs)
    print(
        f"fair: false alarms in {hits}/{args.fair_runs} runs of {epoch:,} rounds = "
        f"{hits / args.fair_runs:.4f} "
        f"(95 % CI {low:.4f}-{high:.4f}); ratio to the alarm level {hits / args.fair_runs / d.alpha:.3f}"
    )
    late = np.concatenate(
        [first_alarms(rng.binomial(4, 0.505, size=(n, 40_000)).astype(np.int8), d) for n in batched(1000, 250)]
    )
    print(f"P(red) 0.505 (half a point): caught within 40,000 rounds in {(late > 0).mean():.3f} of 1000 runs")
    print(f"elapsed {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
