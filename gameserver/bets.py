"""Bet types and the paytable, written from RULES.md (PAY-1..PAY-10).

Money is integer minor units. Odds are exact fractions; a stake that is a whole multiple of 50 minor units
always pays a whole number of minor units (denominators 1, 5, 2, 25 → LCM 50).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

#: Every stake must be a multiple of this many minor units for every payout to be exact.
STAKE_QUANTUM = 50


class BetType(StrEnum):
    """The ten bet types, named as in the shared data formats."""

    FOUR_RED = "four_red"
    THREE_RED = "three_red"
    TWO_RED = "two_red"
    ONE_RED = "one_red"
    FOUR_WHITE = "four_white"
    FOUR_OF_A_KIND = "four_of_a_kind"
    ODD = "odd"
    EVEN = "even"
    BIG = "big"
    SMALL = "small"


class BetResult(StrEnum):
    """What a bet came to; ``pending`` until its round ends."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"
    REFUND = "refund"
    PENDING = "pending"


@dataclass(frozen=True)
class PayLine:
    """One row of the paytable: the red counts that win, the red counts returned as a push, the odds."""

    wins_on: frozenset[int]
    push_on: frozenset[int]
    odds: Fraction


PAYTABLE: dict[BetType, PayLine] = {
    BetType.FOUR_RED: PayLine(frozenset({4}), frozenset(), Fraction(14)),
    BetType.THREE_RED: PayLine(frozenset({3}), frozenset(), Fraction(14, 5)),
    BetType.TWO_RED: PayLine(frozenset({2}), frozenset(), Fraction(3, 2)),
    BetType.ONE_RED: PayLine(frozenset({1}), frozenset(), Fraction(14, 5)),
    BetType.FOUR_WHITE: PayLine(frozenset({0}), frozenset(), Fraction(14)),
    BetType.FOUR_OF_A_KIND: PayLine(frozenset({0, 4}), frozenset(), Fraction(13, 2)),
    BetType.ODD: PayLine(frozenset({1, 3}), frozenset(), Fraction(24, 25)),
    BetType.EVEN: PayLine(frozenset({0, 2, 4}), frozenset(), Fraction(24, 25)),
    BetType.BIG: PayLine(frozenset({3, 4}), frozenset({2}), Fraction(24, 25)),
    BetType.SMALL: PayLine(frozenset({0, 1}), frozenset({2}), Fraction(24, 25)),
}


_TYPES: dict[str, BetType] = {t.value: t for t in BetType}
_RESULTS: dict[str, BetResult] = {r.value: r for r in BetResult}


def bet_type_of(value: str) -> BetType:
    """``BetType(value)`` (raises ValueError alike), by a dict lookup first."""
    try:
        return _TYPES[value]  # hot path: the enum call costs more than the lookup
    except (KeyError, TypeError):
        return BetType(value)


def bet_result_of(value: str) -> BetResult:
    """``BetResult(value)`` (raises ValueError alike), by a dict lookup first."""
    try:
        return _RESULTS[value]  # hot path: as bet_type_of
    except (KeyError, TypeError):
        return BetResult(value)


def settle(bet_type: BetType, stake: int, reds: int) -> tuple[BetResult, int]:
    """Settle one bet on an outcome of ``reds`` red faces.

    Returns ``(result, returned)`` where ``returned`` is the total credited back in minor units: stake plus
    winnings on a win, the stake on a push, 0 on a loss.

    Raises ValueError if ``reds`` is not 0-4, the stake is not positive, or the winnings are not a whole
    number of minor units (a stake that is not a multiple of :data:`STAKE_QUANTUM`).
    """
    if not 0 <= reds <= 4:
        raise ValueError(f"reds must be 0-4, got {reds}")
    if stake <= 0:
        raise ValueError(f"stake must be positive, got {stake}")
    line = PAYTABLE[bet_type]
    if reds in line.wins_on:
        if type(stake) is int:  # hot path: the exact product in integers, as the Fraction would give it
            num, den = line.odds.numerator, line.odds.denominator
            if stake * num % den:
                raise ValueError(f"stake {stake} pays a fractional amount on {bet_type}; use multiples of 50")
            return BetResult.WIN, stake + stake * num // den
        winnings = stake * line.odds
        if winnings.denominator != 1:
            raise ValueError(f"stake {stake} pays a fractional amount on {bet_type}; use multiples of 50")
        return BetResult.WIN, stake + int(winnings)
    if reds in line.push_on:
        return BetResult.PUSH, stake
    return BetResult.LOSE, 0


def reds_of(faces: str) -> int:
    """Number of red faces in a 4-character R/W face string. Raises ValueError on anything else."""
    if len(faces) != 4 or any(c not in "RW" for c in faces):
        raise ValueError(f"faces must be 4 characters of R/W, got {faces!r}")
    return faces.count("R")
