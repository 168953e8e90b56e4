"""Correcting a misread outcome (GLI 4.18.4-4.18.5): re-settle a settled round on the true faces."""

from __future__ import annotations

from typing import Any

from gameserver.bets import reds_of, settle
from gameserver.model import Rejection, RoundRecord


def apply_correction(last: RoundRecord | None, round_id: int, faces: str, wallets: dict[str, int]) -> dict[str, Any]:
    """Re-settle ``last`` (the most recently settled round) on ``faces``, updating its bets and ``wallets``.

    Returns the ``round_corrected`` event data (old and new faces, each bet's new result, returned amount,
    delta and balance after). Raises Rejection, changing nothing, if ``round_id`` is not ``last``, the faces
    are not 4 of R/W or are unchanged, or a debit would take a balance below zero.
    """
    if last is None or last.round_id != round_id:
        raise Rejection("not_correctable", f"round {round_id} is not the most recently settled round")
    try:
        reds = reds_of(faces)
    except ValueError as exc:
        raise Rejection("invalid_faces", str(exc)) from None
    if faces == last.faces:
        raise Rejection("correction_unchanged", f"round {round_id} already has faces {faces}")
    balances = dict(wallets)
    plan = []
    for bet in last.bets:
        result, returned = settle(bet.ack.bet_type, bet.ack.stake, reds)
        balances[bet.ack.player_id] += returned - bet.returned
        plan.append((bet, result, returned))
    overdrawn = sorted(p for p, b in balances.items() if b < 0)
    if overdrawn:
        raise Rejection("correction_would_overdraw", f"the correction would overdraw {', '.join(overdrawn)}")
    lines: list[dict[str, Any]] = []
    for bet, result, returned in plan:
        delta = returned - bet.returned
        wallets[bet.ack.player_id] += delta
        bet.result, bet.returned = result, returned
        lines.append(
            {
                "bet_id": bet.ack.bet_id,
                "player_id": bet.ack.player_id,
                "result": str(result),
                "returned": returned,
                "delta": delta,
                "balance_after": wallets[bet.ack.player_id],
            }
        )
    old, last.faces = last.faces, faces
    return {"old_faces": old, "faces": faces, "reds": reds, "bets": lines}
