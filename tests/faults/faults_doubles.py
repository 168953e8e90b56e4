"""Deliberately faulty server adapters: the reference in-process server with one planted bug each, for the
checker tests (each must make exactly its checker report). Named in a run by dotted path
(``tests.faults.faults_doubles:LosingAdapter``)."""

from __future__ import annotations

import math
from dataclasses import replace

from gameserver.model import Phase
from harness.errors import AdapterError
from harness.faults.fault_adapters import FaultableInProcessAdapter
from harness.records import BetRecordRow, BetReply, RoundEvent


class LosingAdapter(FaultableInProcessAdapter):
    """Drops p1's first bet of round 1 from the record (a refund: the balance does not move)."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        rows = super().bet_record(player_id)
        first = next((r for r in rows if r.round_id == "1"), None) if player_id == "p1" else None
        return [r for r in rows if r is not first]


class PhantomAdapter(FaultableInProcessAdapter):
    """Shows p1 a refunded bet nobody placed."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        rows = super().bet_record(player_id)
        if player_id == "p1":
            rows.append(BetRecordRow("999", "1", "p1", "big", 100, "refund", 100, "void", "", 0, 0, "ghost-1"))
        return rows


class DuplicatingAdapter(FaultableInProcessAdapter):
    """Records p1's first bet twice (the same attempt under two bet ids)."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        rows = super().bet_record(player_id)
        if player_id == "p1" and rows:
            rows.insert(1, replace(rows[0], bet_id=rows[0].bet_id + "0"))
        return rows


class OverpayingAdapter(FaultableInProcessAdapter):
    """Refunds p1's first round-1 bet 50 too much, in the record and the balance alike."""

    def _victim(self, player_id: str) -> BetRecordRow | None:
        if player_id != "p1":
            return None
        return next((r for r in super().bet_record(player_id) if r.round_id == "1" and r.result == "refund"), None)

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        victim = self._victim(player_id)
        rows = super().bet_record(player_id)
        return [replace(r, returned=r.returned + 50) if r == victim else r for r in rows]

    def balance(self, player_id: str) -> int:
        return super().balance(player_id) + (50 if self._victim(player_id) is not None else 0)


class StakeDoublingAdapter(FaultableInProcessAdapter):
    """Takes twice the stake the player asked for (the ledger is consistent with itself)."""

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        return super().place_bet(player_id, client_bet_id, bet_type, 2 * stake, lose_reply=lose_reply)


class BalanceSwapAdapter(FaultableInProcessAdapter):
    """Reports 100 more for p1 and 100 less for p2 (the table's total is right)."""

    def balance(self, player_id: str) -> int:
        return super().balance(player_id) + {"p1": 100, "p2": -100}.get(player_id, 0)


class ReorderingAdapter(FaultableInProcessAdapter):
    """Publishes round 2's close before its opening."""

    def round_events(self) -> list[RoundEvent]:
        events = super().round_events()
        kinds = [(e.round_id, e.kind) for e in events]
        if ("2", "opened") in kinds and ("2", "closed") in kinds:
            i, j = kinds.index(("2", "opened")), kinds.index(("2", "closed"))
            events[i], events[j] = events[j], events[i]
        return events


class LateAcceptingAdapter(FaultableInProcessAdapter):
    """Accepts a bet for the round in progress after betting closed (reopens it for the one bet)."""

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        r = self.engine.active if self.server_up else None
        if r is None or r.phase is not Phase.CLOSED or r.paused_reason is not None:
            return super().place_bet(player_id, client_bet_id, bet_type, stake, lose_reply=lose_reply)
        phase, closes = r.phase, r.closes_at
        r.phase, r.closes_at = Phase.BETTING, math.inf
        try:
            return super().place_bet(player_id, client_bet_id, bet_type, stake, lose_reply=lose_reply)
        finally:
            r.phase, r.closes_at = phase, closes


class AmnesiacAdapter(FaultableInProcessAdapter):
    """Planted failure for shrinking: after a restart, the bets of the round the kill interrupted vanish from
    the players' records (as if the server had kept them only in memory)."""

    def __init__(self, options: dict[str, object]) -> None:
        super().__init__(options)
        self._forgotten: set[str] = set()

    def kill_server(self) -> None:
        r = self.engine.active
        if r is not None:
            self._forgotten |= {str(b.ack.bet_id) for b in r.bets}
        super().kill_server()

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        return [r for r in super().bet_record(player_id) if r.bet_id not in self._forgotten]


class NoSecondRoundAdapter(FaultableInProcessAdapter):
    """Raises an unexpected error (not a refusal the injector waits out) when asked to open a second round."""

    def supervise(self, action: str, reason: str = "") -> None:
        if action == "open" and any(e.kind == "opened" for e in super().round_events()):
            raise BenchBroken("no_second_round")
        super().supervise(action, reason)


class BenchBroken(AssertionError):
    """An error the injector does not expect (stands for a bench failure)."""


class UnreadableAdapter(FaultableInProcessAdapter):
    """Plays rounds but never lets anyone read a bet record."""

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        raise AdapterError("unreachable", "bet records are down")
