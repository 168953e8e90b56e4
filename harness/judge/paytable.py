"""The harness's own paytable, written from RULES.md (PAY-1..PAY-10), independent of the game server.

Odds are "to 1" as exact :class:`fractions.Fraction` values. Settlement is integer arithmetic in minor units:
a winning bet returns ``stake + stake * odds``, a push (Big/Small on two reds, PAY-9/PAY-10) returns the
stake, a losing bet returns 0. Every stake must be a whole multiple of :data:`STAKE_QUANTUM` (50 minor units,
the LCM of the odds' denominators 5, 2 and 25), so that every payout is a whole number of minor units without
rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from harness.records import BetResult
from simulator.bets import BetType

STAKE_QUANTUM = 50
RED_COUNTS: tuple[int, ...] = (0, 1, 2, 3, 4)


@dataclass(frozen=True, slots=True)
class PayRule:
    """One row of the paytable: the odds, the red counts that win and those that return the stake (push)."""

    clause: str
    odds: Fraction
    wins: frozenset[int]
    pushes: frozenset[int] = frozenset()


PAYTABLE: dict[BetType, PayRule] = {
    BetType.FOUR_RED: PayRule("PAY-1", Fraction(14), frozenset({4})),
    BetType.THREE_RED: PayRule("PAY-2", Fraction(14, 5), frozenset({3})),
    BetType.TWO_RED: PayRule("PAY-3", Fraction(3, 2), frozenset({2})),
    BetType.ONE_RED: PayRule("PAY-4", Fraction(14, 5), frozenset({1})),
    BetType.FOUR_WHITE: PayRule("PAY-5", Fraction(14), frozenset({0})),
    BetType.FOUR_OF_A_KIND: PayRule("PAY-6", Fraction(13, 2), frozenset({0, 4})),
    BetType.ODD: PayRule("PAY-7", Fraction(24, 25), frozenset({1, 3})),
    BetType.EVEN: PayRule("PAY-8", Fraction(24, 25), frozenset({0, 2, 4})),
    BetType.BIG: PayRule("PAY-9", Fraction(24, 25), frozenset({3, 4}), frozenset({2})),
    BetType.SMALL: PayRule("PAY-10", Fraction(24, 25), frozenset({0, 1}), frozenset({2})),
}


def check_stake(stake: int) -> None:
    """Raise ``ValueError`` unless ``stake`` is a positive whole multiple of :data:`STAKE_QUANTUM`."""
    if isinstance(stake, bool) or not isinstance(stake, int):
        raise ValueError(f"stake must be an integer number of minor units, got {stake!r}")
    if stake <= 0 or stake % STAKE_QUANTUM:
        raise ValueError(f"stake must be a positive multiple of {STAKE_QUANTUM} minor units, got {stake}")


def outcome(bet: BetType, reds: int) -> BetResult:
    """``win``, ``push`` or ``lose`` for ``bet`` when ``reds`` tokens show red.

    Raises:
        ValueError: ``reds`` outside 0..4.
    """
    if reds not in RED_COUNTS:
        raise ValueError(f"reds must be 0..4, got {reds!r}")
    rule = PAYTABLE[BetType(bet)]
    if reds in rule.wins:
        return BetResult.WIN
    return BetResult.PUSH if reds in rule.pushes else BetResult.LOSE


def returned(bet: BetType, reds: int, stake: int) -> int:
    """Minor units credited back for ``stake`` on ``bet`` when ``reds`` tokens show red (stake included).

    Guarantees an exact integer: ``stake * (1 + odds)`` on a win, ``stake`` on a push, ``0`` on a loss.

    Raises:
        ValueError: a stake that is not a positive multiple of 50, or ``reds`` outside 0..4.
    """
    check_stake(stake)
    result = outcome(bet, reds)
    if result == BetResult.WIN:
        total = stake * (1 + PAYTABLE[BetType(bet)].odds)
        assert total.denominator == 1  # guaranteed by STAKE_QUANTUM
        return int(total)
    return stake if result == BetResult.PUSH else 0
