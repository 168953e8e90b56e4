"""Ending a round: settle or refund its pending bets, credit the wallets, close the record, name the event.

The round engine calls :func:`close_round` exactly once per round, when it settles (a clean read), is voided
(SH-4a, SH-4b, SH-5) or is cancelled (ERR-3); the event it returns is ``round_settled``, ``round_voided`` or
``round_cancelled``, whose ``bets`` lines the ledgers (gameserver/ledger.py, gameserver/sqlite_ledger.py) turn
into bet records. Re-settling an already settled round on corrected faces is :mod:`gameserver.corrections`.
Pure: no clock, no I/O; the engine passes the time and owns the emitting.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict

from gameserver.bets import BetResult, reds_of, settle
from gameserver.events import EventKind
from gameserver.model import BetRecord, Phase, RoundRecord

_END_EVENT = {
    Phase.SETTLED: EventKind.ROUND_SETTLED,
    Phase.VOID: EventKind.ROUND_VOIDED,
    Phase.CANCELLED: EventKind.ROUND_CANCELLED,
}


class SettlementLine(TypedDict):
    """One bet's outcome as the round-ending event carries it (JSON-compatible)."""

    bet_id: int
    player_id: str
    result: str  # a BetResult value: win, lose, push or refund
    returned: int  # total credited for the bet, minor units
    balance_after: int  # the player's balance just after this bet's credit


def settle_pending(bets: Iterable[BetRecord], reds: int | None, wallets: dict[str, int]) -> list[SettlementLine]:
    """Give every ``pending`` bet in ``bets`` exactly one outcome and credit its player's wallet.

    ``reds`` is the outcome's red count (0-4): each bet is settled on the paytable (:func:`gameserver.bets.
    settle`: stake + winnings on a win, the stake on a push, 0 on a loss). ``None`` (void, cancel) refunds
    every stake. Bets that are not pending are left alone and get no line.

    Guarantees: the bets are credited in the order given (bet id order in a round), and each line's
    ``balance_after`` is the player's balance right after that bet's own credit; a wallet only ever grows.
    Raises ValueError if ``reds`` is not 0-4 or a stake would pay a fractional amount, and KeyError if a bet's
    player has no wallet; in either case before any bet or wallet is changed.
    """
    if reds is not None and not 0 <= reds <= 4:
        raise ValueError(f"reds must be 0-4, got {reds}")
    plan: list[tuple[BetRecord, BetResult, int]] = []
    for bet in bets:
        if bet.result is not BetResult.PENDING:
            continue
        if bet.ack.player_id not in wallets:
            raise KeyError(f"player {bet.ack.player_id!r} has no wallet")
        if reds is None:
            plan.append((bet, BetResult.REFUND, bet.ack.stake))
        else:
            plan.append((bet, *settle(bet.ack.bet_type, bet.ack.stake, reds)))
    lines: list[SettlementLine] = []
    for bet, result, returned in plan:
        bet.result, bet.returned = result, returned
        player = bet.ack.player_id
        wallets[player] += returned
        lines.append(
            {
                "bet_id": bet.ack.bet_id,
                "player_id": player,
                "result": str(result),
                "returned": returned,
                "balance_after": wallets[player],
            }
        )
    return lines


def close_round(
    r: RoundRecord, phase: Phase, clause: str, reason: str, at: float, wallets: dict[str, int]
) -> tuple[EventKind, dict[str, Any]]:
    """End round ``r`` in ``phase`` (settled, void or cancelled) at time ``at``.

    Settled: every pending bet is settled on ``r.faces`` (a round with no faces refunds them); void or
    cancelled: every pending bet is refunded (:func:`settle_pending`, crediting ``wallets``). Then ``r``
    takes ``phase`` and ``ended_at = at``, its pause is cleared and its held reports are dropped.

    Returns the ending event's kind and data: ``round_settled`` with ``faces, reds, reshakes, bets``, or
    ``round_voided`` / ``round_cancelled`` with ``clause, reason, reshakes, bets`` (``bets``: the
    :class:`SettlementLine` list). Raises ValueError, changing nothing, if ``phase`` is not an end phase or
    the faces of a settled round are not 4 of R/W.
    """
    if phase not in _END_EVENT:
        raise ValueError(f"a round ends settled, void or cancelled, not {phase}")
    reds = reds_of(r.faces) if phase is Phase.SETTLED and r.faces else None
    lines = settle_pending(r.bets, reds, wallets)
    r.phase = phase
    r.ended_at = at
    r.paused_reason = None
    r.held.clear()
    if phase is Phase.SETTLED:
        return _END_EVENT[phase], {"faces": r.faces, "reds": reds, "reshakes": r.reshakes, "bets": lines}
    return _END_EVENT[phase], {"clause": clause, "reason": reason, "reshakes": r.reshakes, "bets": lines}
