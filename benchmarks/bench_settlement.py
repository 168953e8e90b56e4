"""Vectorised settlement throughput, printed against the raw random-bit rate of the same generator.

The limit is measured in the same run: PCG64's ``random_raw`` output rate, converted to rounds at 4 bits per
fair round (the least randomness a round can consume). Target: settlement at >= 25 % of that rate and at
>= 100 million rounds/s per core. Then the 14:1 bets' verification run (about 10^8 rounds, see
``xocdia-hil rtp``) is timed on every core and checked against the exact RTPs.

    .venv/bin/python benchmarks/bench_settlement.py [--rounds N] [--repeat K] [--workers W]
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction

from harness.stats.exact import bet_math
from harness.stats.settlement import (
    CHUNK_WORDS,
    fair_red_histogram,
    make_generator,
    pattern_histogram,
    simulate,
)
from simulator.bets import BetType


def raw_rounds_per_s(words: int, repeat: int) -> float:
    """Best of ``repeat``: raw 64-bit draws per second × 16 (rounds' worth of bits at 4 bits a round)."""
    best = 0.0
    for k in range(repeat):
        bg = make_generator(100 + k).bit_generator
        left = words
        start = time.perf_counter()
        while left:
            n = min(CHUNK_WORDS, left)
            bg.random_raw(n)
            left -= n
        best = max(best, words * 16 / (time.perf_counter() - start))
    return best


def settle_rounds_per_s(rounds: int, repeat: int) -> float:
    """Best of ``repeat``: fair rounds drawn, counted into the red histogram and settled per second."""
    best = 0.0
    for k in range(repeat):
        start = time.perf_counter()
        fair_red_histogram(make_generator(200 + k), rounds)
        best = max(best, rounds / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200_000_000, help="rounds per single-core measurement")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (best kept: the machine is shared)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes for the long run")
    parser.add_argument("--long", type=int, default=100_000_000, help="rounds of the 14:1 verification run")
    args = parser.parse_args()

    raw = raw_rounds_per_s(args.rounds // 16, args.repeat)
    fair = settle_rounds_per_s(args.rounds, args.repeat)
    print(f"generator: PCG64 random_raw, {raw / 1e9:.2f} G rounds/s of raw bits (4 bits per round)")
    print(f"fair settlement, 1 core: {fair / 1e6:,.0f} M rounds/s")
    print(f"  ratio to the raw bit rate: {fair / raw:.3f} (target >= 0.25)")
    print(f"  ratio to 100 M rounds/s/core: {fair / 1e8:.2f} (target >= 1)")

    biased_rounds = args.rounds // 50
    start = time.perf_counter()
    pattern_histogram(make_generator(300), biased_rounds, [0.51] * 4)
    biased = biased_rounds / (time.perf_counter() - start)
    print(f"biased tokens (a uniform per token), 1 core: {biased / 1e6:,.1f} M rounds/s, {biased / raw:.4f} of raw")

    start = time.perf_counter()
    result = simulate(args.long, seed=7, workers=args.workers)
    elapsed = time.perf_counter() - start
    four_red = bet_math(BetType.FOUR_RED)
    tolerance = 2.5758293035489004 * four_red.sigma / args.long**0.5
    print(
        f"verification run: {args.long:,} rounds on {args.workers} processes in {elapsed:.2f} s "
        f"({args.long / elapsed / 1e6:,.0f} M rounds/s incl. process start); "
        f"four_red measured {float(result.totals[BetType.FOUR_RED].rtp):.5%}, "
        f"exact {float(four_red.rtp):.5%} "
        f"(±{tolerance:.4%} at 99 %); worst |z| over 10 bets {result.worst_z(Fraction(1, 2)):.2f}"
    )


if __name__ == "__main__":
    main()
