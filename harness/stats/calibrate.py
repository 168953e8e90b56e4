"""Calibration and power of the audit's verdict, measured on generated streams.

``calibration``: the false-fail rate of the whole verdict (every test of the family, the monitor included) on
fair streams, with its 95 % Wilson interval, against the nominal α. ``power``: per kind of defect
(:data:`harness.stats.defects.DEFECTS`), the share of streams the verdict fails. Streams are generated and
judged in batches with the same code an audit runs (:func:`harness.stats.fairness.family`), so the figures are
the verdict's own. Seeded: one seed gives the same figures on every machine.

    .venv/bin/python -m harness.stats.calibrate calibration --rounds 10000 1000000 --streams 2000 200
    .venv/bin/python -m harness.stats.calibrate power --rounds 1000 10000 100000 --streams 200
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from harness.stats.defects import BY_NAME, DEFECTS, defect
from harness.stats.fairness import ALPHA, fails, family
from harness.stats.settlement import make_generator

_BITS = np.array([1, 2, 4, 8], dtype=np.int64)
ELEMENTS_PER_BATCH = 1_000_000


@dataclass(frozen=True, slots=True)
class Rate:
    """``hits`` of ``streams`` streams failed the verdict, with the 95 % Wilson interval."""

    kind: str
    rounds: int
    streams: int
    hits: int

    @property
    def rate(self) -> float:
        return self.hits / self.streams

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.hits, self.streams)


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95 % for z = 1.96).

    Raises:
        ValueError: ``n`` < 1 or ``hits`` outside 0..n.
    """
    if n < 1 or not 0 <= hits <= n:
        raise ValueError(f"need 0 <= hits <= n and n >= 1, got hits={hits}, n={n}")
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def failures(patterns: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Per stream (row of token patterns, all rounds settled), whether the audit's verdict fails at ``alpha``."""
    reds = np.bitwise_count(patterns.astype(np.uint8)).astype(np.int64)
    return fails(family(reds, patterns), alpha)


def measure(kind: str, rounds: int, streams: int, seed: int, alpha: float = ALPHA) -> Rate:
    """Generate ``streams`` streams of ``kind`` and ``rounds`` rounds from ``seed``; count the failed verdicts.

    Raises:
        ValueError: an unknown kind, or ``rounds``/``streams`` < 1.
    """
    if rounds < 1 or streams < 1:
        raise ValueError(f"rounds and streams must be >= 1, got rounds={rounds}, streams={streams}")
    generate = defect(kind).generate
    rng = make_generator(seed)
    batch = max(1, ELEMENTS_PER_BATCH // rounds)
    hits = 0
    for start in range(0, streams, batch):
        size = min(batch, streams - start)
        hits += int(failures(generate(rng, size, rounds), alpha).sum())
    return Rate(kind, rounds, streams, hits)


def _line(rate: Rate, seconds: float) -> str:
    low, high = rate.interval
    return (
        f"{rate.kind:<12} {rate.rounds:>9,} rounds: {rate.hits:>5}/{rate.streams:<5} = {rate.rate:7.2%} "
        f"(95 % CI {low:.2%}-{high:.2%})  [{seconds:.0f} s]"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); returns the exit status (0; 2 on a usage error)."""
    parser = argparse.ArgumentParser(prog="python -m harness.stats.calibrate", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    cal = sub.add_parser("calibration", help="false-fail rate of the verdict on fair streams")
    cal.add_argument("--rounds", type=int, nargs="+", default=[10_000, 1_000_000])
    cal.add_argument("--streams", type=int, nargs="+", default=[2_000, 200], help="one count per --rounds value")
    pw = sub.add_parser("power", help="detection rate per kind of defect")
    pw.add_argument("--rounds", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    pw.add_argument("--streams", type=int, nargs="+", default=[200], help="one count, or one per --rounds value")
    pw.add_argument("--kinds", nargs="+", default=[d.name for d in DEFECTS], choices=list(BY_NAME))
    for p in (cal, pw):
        p.add_argument("--seed", type=int, default=2026)
        p.add_argument("--alpha", type=float, default=ALPHA)
    args = parser.parse_args(argv)
    if not 0 < args.alpha < 1:
        parser.error(f"--alpha must be strictly between 0 and 1, got {args.alpha}")
    counts = args.streams if len(args.streams) == len(args.rounds) else args.streams[:1] * len(args.rounds)
    if len(args.streams) not in (1, len(args.rounds)):
        parser.error(f"--streams: give one count or one per --rounds value ({len(args.rounds)}), got {args.streams}")
    if min(args.rounds) < 1 or min(counts) < 1:
        parser.error("--rounds and --streams must be >= 1")
    kinds = ["fair"] if args.what == "calibration" else args.kinds
    print(f"verdict at family-wise alpha {args.alpha:g}, seed {args.seed}")
    for kind in kinds:
        for rounds, streams in zip(args.rounds, counts, strict=True):
            start = time.perf_counter()
            rate = measure(kind, rounds, streams, args.seed, args.alpha)
            print(_line(rate, time.perf_counter() - start), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
