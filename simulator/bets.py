"""The ten bet types of Xoc Dia (RULES.md PAY-1..PAY-10), as names only.

The simulator needs the names so that players can choose among them; it deliberately holds no odds. Payouts are
stated twice, independently: by the harness oracle (from RULES.md) and by the game server.
"""

from __future__ import annotations

from enum import StrEnum


class BetType(StrEnum):
    """A bet a player can place; the value is the stable wire/JSON name."""

    FOUR_RED = "four_red"  # PAY-1
    THREE_RED = "three_red"  # PAY-2
    TWO_RED = "two_red"  # PAY-3
    ONE_RED = "one_red"  # PAY-4
    FOUR_WHITE = "four_white"  # PAY-5
    FOUR_OF_A_KIND = "four_of_a_kind"  # PAY-6
    ODD = "odd"  # PAY-7
    EVEN = "even"  # PAY-8
    BIG = "big"  # PAY-9
    SMALL = "small"  # PAY-10


BET_TYPES: tuple[BetType, ...] = tuple(BetType)
