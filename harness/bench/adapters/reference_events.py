"""The reference server's event and bet-record JSON (docs/server.md) mapped onto the adapter's normalised
types. Pure dict handling: it imports nothing from ``gameserver`` (both reference adapters share it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.records import BetRecordRow, BetResult, RoundEvent, RoundEventKind, RoundStatus, parse_or_raw

_KINDS = {
    "round_opened": RoundEventKind.OPENED,
    "betting_closed": RoundEventKind.CLOSED,
    "reshake": RoundEventKind.RESHAKE,
    "round_paused": RoundEventKind.PAUSED,
    "round_resumed": RoundEventKind.RESUMED,
    "round_settled": RoundEventKind.SETTLED,
    "round_voided": RoundEventKind.VOID,
    "round_cancelled": RoundEventKind.CANCELLED,
}
ROUND_KINDS = frozenset(_KINDS)  # the server's event kinds that are round events (all others map to None)


def round_event(raw: Mapping[str, Any]) -> RoundEvent | None:
    """The normalised round event for one ``/v1/events`` entry, or None for events that are not about a
    round's course (wallets, bets, ignored reports, corrections) and for kinds this harness does not know."""
    kind = _KINDS.get(str(raw.get("kind")))
    if kind is None or raw.get("round_id") is None:
        return None
    data: Mapping[str, Any] = raw.get("data") or {}
    return RoundEvent(
        round_id=str(raw["round_id"]),
        kind=kind,
        at=float(raw.get("at", 0.0)),
        clause=str(data.get("clause") or ""),
        faces=str(data.get("faces") or "") if kind == RoundEventKind.SETTLED else "",
        reason=str(data.get("reason") or ""),
        raw=dict(raw),
    )


def bet_row(raw: Mapping[str, Any]) -> BetRecordRow:
    """One bet-record entry (``GET /v1/players/{id}/bets``) as a :class:`BetRecordRow`; a result or round status
    this harness does not know is kept as the server wrote it (the judge reports it)."""
    return BetRecordRow(
        bet_id=str(raw["bet_id"]),
        round_id=str(raw["round_id"]),
        player_id=str(raw["player_id"]),
        bet_type=str(raw["bet_type"]),
        wagered=int(raw["wagered"]),
        result=parse_or_raw(BetResult, str(raw["result"])),
        returned=int(raw["returned"]),
        round_status=parse_or_raw(RoundStatus, str(raw["round_status"])),
        outcome=str(raw.get("outcome") or ""),
        balance_before=int(raw["balance_before"]),
        balance_after=int(raw["balance_after"]),
        client_bet_id=str(raw.get("client_bet_id") or ""),
        reds=None if raw.get("reds") is None else int(raw["reds"]),
    )
