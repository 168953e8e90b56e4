"""Vectorised settlement simulation (numpy) for very long runs, checked against the exact figures.

Fair tokens need exactly 4 random bits per round: every raw 64-bit draw of the generator is 16 rounds, one per
4-bit nibble, and the number of reds of a round is the popcount of its nibble. The histogram of red counts is
built with SWAR bit tricks and ``np.bitwise_count`` over whole words, without unpacking nibbles; settlement is
then the dot product of the 5-bin histogram with each bet's integer return per red count
(``harness.judge.paytable``). Biased tokens (a P(red) per token) use one uniform per token per round and a 16-bin
pattern histogram.

Runs are reproducible: one ``seed`` is split with ``numpy.random.SeedSequence.spawn`` into one stream per
worker, so the same (seed, workers) always gives the same counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from harness.judge.paytable import RED_COUNTS, check_stake, returned
from harness.stats.exact import bet_math
from simulator.bets import BetType

CHUNK_WORDS = 1 << 16  # 64 Ki words = 512 KiB per buffer: stays in cache, amortises numpy call overhead
_M1 = np.uint64(0x1111111111111111)
_M3 = np.uint64(0x3333333333333333)
_M5 = np.uint64(0x5555555555555555)
_ONE = np.uint64(1)
_TWO = np.uint64(2)

Counts = npt.NDArray[np.int64]


def make_generator(seed: int | np.random.SeedSequence) -> np.random.Generator:
    """The generator used everywhere in this package: PCG64 seeded from ``seed``."""
    return np.random.Generator(np.random.PCG64(seed))


def _count_nibbles(
    words: npt.NDArray[np.uint64], t1: npt.NDArray[np.uint64], t2: npt.NDArray[np.uint64]
) -> tuple[int, int, int, int]:
    """Rounds with 1, 2, 3 and 4 reds among the 16 nibbles of every word. ``words`` is overwritten."""
    n = words.shape[0]
    a, b = t1[:n], t2[:n]
    # per-nibble popcount (values 0..4, three bits b2 b1 b0)
    np.right_shift(words, _ONE, out=a)
    a &= _M5
    np.subtract(words, a, out=a)
    np.right_shift(a, _TWO, out=b)
    b &= _M3
    a &= _M3
    a += b
    np.right_shift(a, _ONE, out=b)  # b1 moved to bit 0 of each nibble
    np.bitwise_and(b, a, out=words)
    words &= _M1
    three = int(np.bitwise_count(words).sum(dtype=np.uint64))  # b1 and b0: value 3
    b &= _M1
    two_or_three = int(np.bitwise_count(b).sum(dtype=np.uint64))  # b1: value 2 or 3
    np.right_shift(a, _TWO, out=b)
    b &= _M1
    four = int(np.bitwise_count(b).sum(dtype=np.uint64))  # b2: value 4
    a &= _M1
    odd = int(np.bitwise_count(a).sum(dtype=np.uint64))  # b0: value 1 or 3
    return odd - three, two_or_three - three, three, four


def fair_red_histogram(rng: np.random.Generator, rounds: int, chunk_words: int = CHUNK_WORDS) -> Counts:
    """Counts of rounds with 0..4 reds over ``rounds`` fair rounds, 4 raw bits per round.

    Raises:
        ValueError: a negative number of rounds.
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    words_left = math.ceil(rounds / 16)
    t1 = np.empty(min(chunk_words, max(words_left, 1)), dtype=np.uint64)
    t2 = np.empty_like(t1)
    counts = [0, 0, 0, 0]
    while words_left:
        n = min(chunk_words, words_left)
        words = rng.bit_generator.random_raw(n)
        words_left -= n
        if not words_left and rounds % 16:
            words[-1] &= np.uint64((1 << (4 * (rounds % 16))) - 1)  # unused nibbles show 0 reds
        for i, c in enumerate(_count_nibbles(words, t1, t2)):
            counts[i] += c
    return np.array([rounds - sum(counts), *counts], dtype=np.int64)


def pattern_histogram(rng: np.random.Generator, rounds: int, p_red: Sequence[float], chunk: int = 1 << 18) -> Counts:
    """Counts of the 16 token patterns (bit j = token j red) over ``rounds`` rounds with P(red) per token.

    Raises:
        ValueError: not 4 probabilities, one outside [0, 1], or a negative number of rounds.
    """
    probs = np.asarray(p_red, dtype=np.float64)
    if probs.shape != (4,) or np.any(probs < 0) or np.any(probs > 1):
        raise ValueError(f"need 4 probabilities within [0, 1], got {list(p_red)}")
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    hist = np.zeros(16, dtype=np.int64)
    left = rounds
    while left:
        n = min(chunk, left)
        left -= n
        hist += np.bincount(draw_patterns(rng, n, probs), minlength=16)
    return hist


def draw_patterns(
    rng: np.random.Generator, rounds: int, p_red: Sequence[float] | npt.NDArray[np.float64]
) -> npt.NDArray[np.uint8]:
    """``rounds`` token patterns (uint8 0..15, bit j = token j red) with P(red) per token."""
    patterns = np.zeros(rounds, dtype=np.uint8)
    for token, p in enumerate(p_red):
        patterns |= (rng.random(rounds) < p).astype(np.uint8) << np.uint8(token)
    return patterns


def reds_from_patterns(patterns: Counts) -> Counts:
    """Fold a 16-bin pattern histogram into a 5-bin red-count histogram."""
    out = np.zeros(5, dtype=np.int64)
    for pattern in range(16):
        out[pattern.bit_count()] += patterns[pattern]
    return out


@dataclass(frozen=True, slots=True)
class BetTotals:
    """One bet type settled on every simulated round with the same stake."""

    bet: BetType
    rounds: int
    wagered: int
    returned: int

    @property
    def rtp(self) -> Fraction:
        return Fraction(self.returned, self.wagered) if self.wagered else Fraction(0)

    def z_against(self, rtp: Fraction, sigma: float) -> float:
        """(measured − expected) / (σ / √rounds): how many standard errors the run is from ``rtp``."""
        if not self.rounds or sigma == 0:
            return 0.0
        return float(self.rtp - rtp) / (sigma / math.sqrt(self.rounds))


def settle_histogram(red_hist: Sequence[int], stake: int = 100) -> dict[BetType, BetTotals]:
    """Settle one ``stake`` on every bet type on every round of a red-count histogram (exact integers).

    Raises:
        ValueError: a stake that is not a positive multiple of 50, or a histogram that is not 5 counts.
    """
    check_stake(stake)
    if len(red_hist) != 5:
        raise ValueError(f"need 5 red-count bins, got {len(red_hist)}")
    counts = [int(c) for c in red_hist]
    rounds = sum(counts)
    return {
        bet: BetTotals(bet, rounds, rounds * stake, sum(counts[k] * returned(bet, k, stake) for k in RED_COUNTS))
        for bet in BetType
    }


@dataclass(frozen=True, slots=True)
class SimulationResult:
    rounds: int
    red_hist: tuple[int, ...]
    totals: dict[BetType, BetTotals]

    def worst_z(self, p_red: Fraction = Fraction(1, 2)) -> float:
        """The largest |z| of any bet's measured RTP against its exact RTP at ``p_red``."""
        worst = 0.0
        for bet, tot in self.totals.items():
            m = bet_math(bet, p_red)
            worst = max(worst, abs(tot.z_against(m.rtp, m.sigma)))
        return worst


def _worker(args: tuple[np.random.SeedSequence, int, tuple[float, ...] | None]) -> list[int]:
    seed, rounds, p_red = args
    rng = make_generator(seed)
    if p_red is None:
        return [int(c) for c in fair_red_histogram(rng, rounds)]
    return [int(c) for c in reds_from_patterns(pattern_histogram(rng, rounds, p_red))]


def simulate(
    rounds: int, seed: int, workers: int = 1, p_red: Sequence[float] | None = None, stake: int = 100
) -> SimulationResult:
    """Simulate ``rounds`` rounds (fair tokens unless ``p_red`` gives P(red) per token) and settle every bet.

    With ``workers > 1`` the rounds are split over a process pool, one independent seeded stream each.

    Raises:
        ValueError: rounds < 0, workers < 1, a bad stake or bad probabilities.
    """
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    check_stake(stake)
    probs = None if p_red is None else tuple(float(p) for p in p_red)
    seeds = np.random.SeedSequence(seed).spawn(workers)
    shares = [rounds // workers + (1 if i < rounds % workers else 0) for i in range(workers)]
    jobs = list(zip(seeds, shares, [probs] * workers, strict=True))
    if workers == 1:
        parts = [_worker(jobs[0])]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_worker, jobs))
    hist = tuple(int(sum(p[k] for p in parts)) for k in RED_COUNTS)
    return SimulationResult(rounds, hist, settle_histogram(hist, stake))
