"""Measured RTP from a bet record, beside the theoretical figure, with confidence intervals (GLI-19 2.9.2).

Only decided bets count: ``win``, ``lose`` and ``push`` (a push returns the stake and is counted as a return,
as in RTP-1). Refunds of void or cancelled rounds and pending bets are reported apart and are *out* of the
denominator. Per bet type, RTP = Σ returned / Σ wagered; its standard error is the ratio estimator's, ``sqrt(Σ
(returned_i − RTP · wagered_i)²) / Σ wagered`` (exact for equal stakes), and the interval is RTP ± z × SE at
the chosen confidence.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from harness.records import DECIDED_RESULTS, BetResult
from harness.stats.exact import Z_TWO_SIDED, bet_math
from simulator.bets import BetType

DECIDED = frozenset(DECIDED_RESULTS)


class BetLike(Protocol):
    """What measurement needs of a bet (e.g. :class:`harness.stats.readers.BetRecord`)."""

    @property
    def bet_type(self) -> BetType: ...
    @property
    def wagered(self) -> int: ...
    @property
    def result(self) -> str: ...
    @property
    def returned(self) -> int: ...


@dataclass(frozen=True, slots=True)
class RtpLine:
    """Measured against theoretical RTP for one bet type (``bet`` None: all bet types pooled)."""

    bet: BetType | None
    bets: int
    wagered: int
    returned: int
    theoretical: Fraction  # stake-weighted for the pooled line
    std_error: float
    confidence: int
    refunded_bets: int
    refunded: int
    pending_bets: int

    @property
    def rtp(self) -> Fraction | None:
        return Fraction(self.returned, self.wagered) if self.wagered else None

    @property
    def interval(self) -> tuple[float, float] | None:
        if self.rtp is None:
            return None
        half = Z_TWO_SIDED[self.confidence] * self.std_error
        return float(self.rtp) - half, float(self.rtp) + half

    @property
    def consistent(self) -> bool | None:
        """True when the theoretical RTP lies inside the interval; None without decided bets."""
        band = self.interval
        return None if band is None else band[0] <= float(self.theoretical) <= band[1]


@dataclass(frozen=True, slots=True)
class _Bet:
    bet: BetType
    wagered: int
    result: str
    returned: int


def measured_rtp(records: Iterable[BetLike], confidence: int = 99) -> list[RtpLine]:
    """One :class:`RtpLine` per bet type present, then the pooled line (``bet=None``) last.

    Raises:
        KeyError: a confidence other than 90, 95 or 99.
    """
    Z_TWO_SIDED[confidence]  # a KeyError here names the bad confidence
    by_bet: dict[BetType, list[_Bet]] = {}
    for rec in records:
        item = _Bet(BetType(rec.bet_type), rec.wagered, rec.result, rec.returned)
        by_bet.setdefault(item.bet, []).append(item)
    lines = [_line(bet, by_bet[bet], confidence) for bet in BetType if bet in by_bet]
    everything = [b for bet in BetType for b in by_bet.get(bet, [])]
    lines.append(_line(None, everything, confidence))
    return lines


def _line(bet: BetType | None, items: list[_Bet], confidence: int) -> RtpLine:
    decided = [b for b in items if b.result in DECIDED]
    refunds = [b for b in items if b.result == BetResult.REFUND]
    pending = sum(1 for b in items if b.result == BetResult.PENDING)
    wagered = sum(b.wagered for b in decided)
    returned = sum(b.returned for b in decided)
    if wagered:
        theoretical = sum((b.wagered * bet_math(b.bet).rtp for b in decided), Fraction(0)) / wagered
        ratio = returned / wagered
        spread = math.sqrt(sum((b.returned - ratio * b.wagered) ** 2 for b in decided))
        std_error = spread / wagered
    else:
        theoretical = bet_math(bet).rtp if bet is not None else Fraction(0)
        std_error = 0.0
    return RtpLine(
        bet,
        len(decided),
        wagered,
        returned,
        theoretical,
        std_error,
        confidence,
        len(refunds),
        sum(b.returned for b in refunds),
        pending,
    )
