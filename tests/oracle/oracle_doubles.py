"""Deliberately wrong game servers for proving that the oracle can fail.

Each double implements the adapter interface by running the real reference engine in-process (so rounds, devices
and bets are real) and then misreporting one thing the way a buggy server would. Amounts are worked out by hand
in the tests that use them.
"""

from __future__ import annotations

from dataclasses import replace

from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.records import BetRecordRow, RoundEvent


class BigPaysOnTwoTwo(InProcessAdapter):
    """Pays Big as a win on two reds (RULES.md PAY-9: the stake is returned, a push)."""

    def _wrong(self, row: BetRecordRow) -> BetRecordRow:
        if row.bet_type == "big" and row.outcome.count("R") == 2 and row.round_status == "settled":
            return replace(row, result="win", returned=row.wagered * 196 // 100)
        return row

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        return [self._wrong(r) for r in super().bet_record(player_id)]

    def balance(self, player_id: str) -> int:
        rows = super().bet_record(player_id)
        extra = sum(self._wrong(r).returned - r.returned for r in rows)
        return super().balance(player_id) + extra


class SkipsRefund(InProcessAdapter):
    """Marks bets of a void round refunded but never credits the stake back."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        return [replace(r, returned=0) if r.result == "refund" else r for r in super().bet_record(player_id)]

    def balance(self, player_id: str) -> int:
        refunds = sum(r.returned for r in super().bet_record(player_id) if r.result == "refund")
        return super().balance(player_id) - refunds


class MisreadsToken3(InProcessAdapter):
    """Publishes settled outcomes with token 3 read the wrong colour (the reader, not the physical tokens)."""

    def round_events(self) -> list[RoundEvent]:
        flip = {"R": "W", "W": "R"}
        return [
            replace(e, faces=e.faces[:3] + flip[e.faces[3]]) if e.kind == "settled" and e.faces else e
            for e in super().round_events()
        ]


class StaleRecord(InProcessAdapter):
    """Its bet record never catches up: every bet still shows its round in progress after the round ended."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        return [replace(r, round_status="in_progress") for r in super().bet_record(player_id)]
