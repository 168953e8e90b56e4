"""Exact game mathematics from the paytable, by enumerating the 16 token patterns with exact fractions.

Every probability and RTP here is a :class:`fractions.Fraction`; only the standard deviation (a square root)
and the figures derived from it are floats. A token pattern is an integer 0..15 whose bit ``j`` is set when
token ``j`` shows red (the same order as the ``faces`` string: token 0 first).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from harness.judge.paytable import PAYTABLE, RED_COUNTS, PayRule
from simulator.bets import BetType

HALF = Fraction(1, 2)
#: Two-sided standard normal quantiles for the volatility index and verification sample sizes.
Z_TWO_SIDED: dict[int, float] = {90: 1.6448536269514722, 95: 1.959963984540054, 99: 2.5758293035489004}


def pattern_probabilities(p_red: Fraction | Sequence[Fraction] = HALF) -> tuple[Fraction, ...]:
    """P(pattern) for the 16 patterns, given one P(red) for all tokens or one per token (4 values).

    Raises:
        ValueError: a probability outside [0, 1] or a sequence that is not 4 long.
    """
    ps = _per_token(p_red)
    out: list[Fraction] = []
    for pattern in range(16):
        prob = Fraction(1)
        for token, p in enumerate(ps):
            prob *= p if pattern >> token & 1 else 1 - p
        out.append(prob)
    return tuple(out)


def red_count_probabilities(p_red: Fraction | Sequence[Fraction] = HALF) -> tuple[Fraction, ...]:
    """P(k reds) for k = 0..4, summed over the 16 patterns."""
    probs = [Fraction(0)] * 5
    for pattern, prob in enumerate(pattern_probabilities(p_red)):
        probs[pattern.bit_count()] += prob
    return tuple(probs)


@dataclass(frozen=True, slots=True)
class BetMath:
    """Exact figures for one bet type per unit stake. ``net`` outcome: +odds (win), 0 (push), -1 (lose)."""

    bet: BetType
    clause: str
    odds: Fraction
    win: Fraction
    push: Fraction
    lose: Fraction
    rtp: Fraction  # expected return per unit staked, pushes counted as returns
    rtp_decided: Fraction  # expected return per unit staked on bets that did not push
    variance: Fraction  # variance of the net result per unit stake

    @property
    def house_edge(self) -> Fraction:
        return 1 - self.rtp

    @property
    def sigma(self) -> float:
        """Standard deviation of the net result per unit stake."""
        return math.sqrt(self.variance)

    def volatility_index(self, confidence: int) -> float:
        """z × σ at ``confidence`` % (90, 95 or 99): the half-width of the per-round return band.

        Raises:
            KeyError: a confidence level other than 90, 95 or 99.
        """
        return Z_TWO_SIDED[confidence] * self.sigma

    def rounds_to_verify(self, tolerance: Fraction | float, confidence: int = 99) -> int:
        """Bets needed so that the measured RTP lies within ``tolerance`` of :attr:`rtp` at ``confidence`` %.

        ``n = ceil((z σ / tolerance)²)`` (normal approximation).

        Raises:
            ValueError: a tolerance that is not positive.
        """
        if tolerance <= 0:
            raise ValueError(f"tolerance must be > 0, got {tolerance}")
        return math.ceil((Z_TWO_SIDED[confidence] * self.sigma / float(tolerance)) ** 2)


def bet_math(bet: BetType, p_red: Fraction | Sequence[Fraction] = HALF, rule: PayRule | None = None) -> BetMath:
    """Exact figures for ``bet`` with the given token probabilities (fair tokens by default), settled with the
    harness paytable's row for ``bet`` or with ``rule`` when given (another paytable's row, e.g. a rules
    document's)."""
    rule = PAYTABLE[BetType(bet)] if rule is None else rule
    by_reds = red_count_probabilities(p_red)
    win = sum((by_reds[k] for k in RED_COUNTS if k in rule.wins), Fraction(0))
    push = sum((by_reds[k] for k in RED_COUNTS if k in rule.pushes), Fraction(0))
    lose = 1 - win - push
    mean = win * rule.odds - lose
    variance = win * rule.odds**2 + lose - mean**2
    rtp = win * (1 + rule.odds) + push
    decided = win + lose
    rtp_decided = win * (1 + rule.odds) / decided if decided else Fraction(0)
    return BetMath(BetType(bet), rule.clause, rule.odds, win, push, lose, rtp, rtp_decided, variance)


def all_bets(p_red: Fraction | Sequence[Fraction] = HALF) -> tuple[BetMath, ...]:
    """:func:`bet_math` for every bet type, in :class:`BetType` order."""
    return tuple(bet_math(bet, p_red) for bet in BetType)


def max_rtp(p_red: Fraction | Sequence[Fraction] = HALF) -> tuple[Fraction, tuple[BetType, ...]]:
    """The highest RTP of any bet (RTP-1) and the bet types that reach it."""
    figures = all_bets(p_red)
    best = max(m.rtp for m in figures)
    return best, tuple(m.bet for m in figures if m.rtp == best)


def bias_curve(points: Sequence[Fraction]) -> list[tuple[Fraction, dict[BetType, Fraction]]]:
    """RTP of every bet as a function of P(red) (all four tokens alike), one entry per point."""
    return [(p, {m.bet: m.rtp for m in all_bets(p)}) for p in points]


def break_even_p_red(bet: BetType, low: Fraction = HALF, high: Fraction = Fraction(1)) -> float:
    """The P(red) in [low, high] at which ``bet`` returns exactly 100 %, by bisection to 1e-12.

    Raises:
        ValueError: when RTP − 1 does not change sign on [low, high].
    """

    def excess(p: Fraction) -> Fraction:
        return bet_math(bet, p).rtp - 1

    lo, hi = Fraction(low), Fraction(high)
    f_lo, f_hi = excess(lo), excess(hi)
    if f_lo * f_hi > 0:
        raise ValueError(f"{bet}: RTP does not cross 100 % for P(red) in [{float(lo)}, {float(hi)}]")
    a, b = float(lo), float(hi)
    while b - a > 1e-12:
        mid = (a + b) / 2
        if (excess(Fraction(mid)) > 0) == (f_lo > 0):
            a = mid
        else:
            b = mid
    return (a + b) / 2


def exact_decimal(value: Fraction, max_places: int = 40) -> str:
    """``value`` as a decimal string: exact when its expansion terminates within ``max_places`` digits,
    otherwise rounded half-up to ``max_places`` and marked with a trailing ``…``."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    for places in range(max_places + 1):
        scaled = value * 10**places
        if scaled.denominator == 1:
            return sign + _fixed(int(scaled), places)
    rounded = int(value * 10**max_places + HALF)
    return sign + _fixed(rounded, max_places) + "…"


def _fixed(digits_value: int, places: int) -> str:
    if not places:
        return str(digits_value)
    digits = str(digits_value).rjust(places + 1, "0")
    return f"{digits[:-places]}.{digits[-places:]}"


def _per_token(p_red: Fraction | Sequence[Fraction]) -> tuple[Fraction, ...]:
    if isinstance(p_red, Fraction | int | float):
        ps: tuple[Fraction, ...] = (Fraction(p_red),) * 4
    else:
        ps = tuple(Fraction(p) for p in p_red)
        if len(ps) != 4:
            raise ValueError(f"need one P(red) per token (4 values), got {len(ps)}")
    for p in ps:
        if not 0 <= p <= 1:
            raise ValueError(f"P(red) must be within [0, 1], got {p}")
    return ps
