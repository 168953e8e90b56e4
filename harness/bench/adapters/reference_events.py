"""The reference server's event and bet-record JSON (docs/server.md) mapped onto the adapter's normalised
types. Pure dict handling: it imports nothing from ``gameserver`` (both reference adapters share it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.records import BetRecordRow, RoundEvent

_KINDS = {
    "round_opened": "opened",
    "betting_closed": "closed",
    "reshake": "reshake",
    "round_paused": "paused",
    "round_resumed": "resumed",
    "round_settled": "settled",
    "round_voided": "void",
    "round_cancelled": "cancelled",
}


def round_event(raw: Mapping[str, Any]) -> RoundEvent | None:
    """The normalised round event for one ``/v1/events`` entry, or None for events that are not about a
    round's course (wallets, bets, ignored reports, corrections)."""
    kind = _KINDS.get(str(raw.get("kind")))
    if kind is None or raw.get("round_id") is None:
        return None
    data: Mapping[str, Any] = raw.get("data") or {}
    return RoundEvent(
        round_id=str(raw["round_id"]),
        kind=kind,
        at=float(raw.get("at", 0.0)),
        clause=str(data.get("clause") or ""),
        faces=str(data.get("faces") or "") if kind == "settled" else "",
        reason=str(data.get("reason") or ""),
        raw=dict(raw),
    )


def bet_row(raw: Mapping[str, Any]) -> BetRecordRow:
    """One bet-record entry (``GET /v1/players/{id}/bets``) as a :class:`BetRecordRow`."""
    return BetRecordRow(
        bet_id=str(raw["bet_id"]),
        round_id=str(raw["round_id"]),
        player_id=str(raw["player_id"]),
        bet_type=str(raw["bet_type"]),
        wagered=int(raw["wagered"]),
        result=str(raw["result"]),
        returned=int(raw["returned"]),
        round_status=str(raw["round_status"]),
        outcome=str(raw.get("outcome") or ""),
        balance_before=int(raw["balance_before"]),
        balance_after=int(raw["balance_after"]),
        client_bet_id=str(raw.get("client_bet_id") or ""),
    )
