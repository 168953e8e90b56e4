"""The ledger seam: what the server persists and reads back, with an in-memory implementation.

The ledger stores the engine's events in order and derives wallets, rounds and bets from them (the events
carry every resulting balance, so deriving needs no game logic). :class:`InMemoryLedger` is the reference
projection;
``gameserver.sqlite_ledger.SqliteLedger`` is the durable one and must agree with it on every query.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from gameserver.bets import BetResult, BetType, bet_result_of, bet_type_of
from gameserver.events import Event, EventKind
from gameserver.fastinit import fast_init
from gameserver.model import BetAck, BetRecord, EngineSnapshot, Phase, RoundRecord

#: BETS.csv columns (shared data formats).
BET_COLUMNS = [
    *("bet_id", "round_id", "player_id", "placed_at", "settled_at", "bet_type", "wagered", "result"),
    *("returned", "round_status", "outcome", "reds", "balance_before", "balance_after"),
]
#: OUTCOMES.csv columns (shared data formats).
OUTCOME_COLUMNS = ["round_id", "status", "faces", "reds", "reshakes", "ended_at"]
_ENDING = {
    EventKind.ROUND_SETTLED: Phase.SETTLED,
    EventKind.ROUND_VOIDED: Phase.VOID,
    EventKind.ROUND_CANCELLED: Phase.CANCELLED,
}


@fast_init
@dataclass(frozen=True)
class RoundRow:
    """A round as recorded: ``phase`` is betting|closed|settled|void|cancelled."""

    round_id: int
    phase: Phase
    opened_at: float
    closes_at: float
    ended_at: float | None = None
    faces: str | None = None
    reshakes: int = 0
    clause: str = ""
    reason: str = ""
    corrected: bool = False

    @property
    def status(self) -> str:
        """BETS.csv ``round_status``: in_progress|settled|void|cancelled."""
        return "in_progress" if self.phase in (Phase.BETTING, Phase.CLOSED) else str(self.phase)

    def to_json(self) -> dict[str, Any]:
        """JSON-compatible form (game recall)."""
        return {
            "round_id": self.round_id,
            "status": self.status,
            "phase": str(self.phase),
            "opened_at": self.opened_at,
            "closes_at": self.closes_at,
            "ended_at": self.ended_at,
            "faces": self.faces,
            "reds": None if self.faces is None else self.faces.count("R"),
            "reshakes": self.reshakes,
            "clause": self.clause,
            "reason": self.reason,
            "corrected": self.corrected,
        }

    def outcome_row(self) -> list[str]:
        """One OUTCOMES.csv row."""
        settled = self.phase is Phase.SETTLED and self.faces is not None
        return [
            str(self.round_id),
            "in_progress" if self.status == "in_progress" else self.status,
            self.faces or "" if settled else "",
            str((self.faces or "").count("R")) if settled else "",
            str(self.reshakes),
            "" if self.ended_at is None else repr(self.ended_at),
        ]


@fast_init
@dataclass(frozen=True)
class BetRow:
    """A bet as recorded (bet record / game recall). ``balance_after`` is the balance right after the bet's
    own settlement credit, or right after its stake was taken while it is pending."""

    bet_id: int
    client_bet_id: str
    round_id: int
    player_id: str
    placed_at: float
    bet_type: BetType
    wagered: int
    balance_before: int
    balance_after: int
    request_hash: str
    result: BetResult = BetResult.PENDING
    returned: int = 0
    settled_at: float | None = None

    def ack(self) -> BetAck:
        """The acknowledgement this bet got when it was confirmed."""
        return BetAck(
            self.bet_id,
            self.client_bet_id,
            self.player_id,
            self.round_id,
            self.bet_type,
            self.wagered,
            self.placed_at,
            self.balance_before,
            self.balance_before - self.wagered,
        )

    def record(self, rnd: RoundRow) -> dict[str, Any]:
        """The BETS.csv / game-recall record, joined with its round."""
        settled = rnd.phase is Phase.SETTLED and rnd.faces is not None
        return {
            "bet_id": self.bet_id,
            "round_id": self.round_id,
            "player_id": self.player_id,
            "placed_at": self.placed_at,
            "settled_at": self.settled_at,
            "bet_type": str(self.bet_type),
            "wagered": self.wagered,
            "result": str(self.result),
            "returned": self.returned,
            "round_status": rnd.status,
            "outcome": rnd.faces if settled else "",
            "reds": (rnd.faces or "").count("R") if settled else None,
            "balance_before": self.balance_before,
            "balance_after": self.balance_after,
            "client_bet_id": self.client_bet_id,
        }


class Ledger(Protocol):
    """Durable storage of the event log and its projection. ``append`` is atomic: all or nothing."""

    def append(self, events: Sequence[Event]) -> None:
        """Store ``events`` and apply them to wallets/rounds/bets in one durable transaction."""

    def snapshot(self) -> EngineSnapshot:
        """What an engine restarted on this ledger needs."""

    def balance(self, player_id: str) -> int | None:
        """A wallet's committed balance, None if there is no such wallet."""

    def bets(self, player_id: str | None = None, round_id: int | None = None) -> list[tuple[BetRow, RoundRow]]:
        """Bets (with their rounds) in bet id order, optionally for one player and/or one round."""

    def rounds(self, round_id: int | None = None) -> list[RoundRow]:
        """Every round (or just ``round_id``'s), in id order."""

    def events(self, after: int = 0, limit: int = 1000, round_id: int | None = None) -> list[Event]:
        """Events with ``seq > after`` (of one round if ``round_id`` is given), oldest first, at most ``limit``."""

    def close(self) -> None:
        """Release the storage."""


class InMemoryLedger:
    """The reference projection of the event log, held in dicts, with each player's and each round's bet ids and
    each round's events kept as they are accepted: a query costs what it returns (``bets(player)``,
    ``bets(round_id=...)``, ``rounds(round_id)``, ``events(after=..., round_id=...)`` by bisection on ``seq``), not
    the size of the whole ledger."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self.wallets: dict[str, int] = {}
        self._rounds: dict[int, RoundRow] = {}
        self._bets: dict[int, BetRow] = {}
        self._by_player: dict[str, list[int]] = {}  # bet ids, in the order accepted
        self._by_round: dict[int, list[int]] = {}
        self._round_events: dict[int, list[Event]] = {}  # each round's events, in seq order
        self._in_order = True  # every bet id accepted so far was above the ones before it
        self._last_bet = 0

    def append(self, events: Sequence[Event]) -> None:
        """Store ``events`` in order. Raises ValueError, storing nothing, when their ``seq`` do not strictly increase
        from the last stored one (the log's order: the SQLite ledger's primary key refuses a repeated ``seq`` alike,
        and ``events(after=...)`` pages by it)."""
        last = self._events[-1].seq if self._events else 0
        for event in events:
            if event.seq <= last:
                raise ValueError(f"append of events {events[0].seq}..{events[-1].seq}: seq {event.seq} after {last}")
            last = event.seq
        for event in events:
            self._apply(event)
            self._events.append(event)
            if event.round_id is not None:
                self._round_events.setdefault(event.round_id, []).append(event)

    def _apply(self, e: Event) -> None:
        d = e.data
        kind = e.kind
        if kind is EventKind.BET_ACCEPTED:  # hot path: the most frequent kind first (the kinds exclude each other)
            bet_id = d["bet_id"]
            if bet_id not in self._bets:
                self._by_player.setdefault(d["player_id"], []).append(bet_id)
                self._by_round.setdefault(d["round_id"], []).append(bet_id)
                if bet_id <= self._last_bet:
                    self._in_order = False
                self._last_bet = max(self._last_bet, bet_id)
            self._bets[bet_id] = bet_from_event(d)
            self.wallets[d["player_id"]] = d["balance_after"]
        elif kind is EventKind.WALLET_OPENED:
            self.wallets[d["player_id"]] = d["balance"]
        elif kind is EventKind.ROUND_OPENED:
            assert e.round_id is not None
            self._rounds[e.round_id] = RoundRow(e.round_id, Phase.BETTING, e.at, d["closes_at"])
        elif e.kind is EventKind.BETTING_CLOSED:
            self._update_round(e, phase=Phase.CLOSED)
        elif e.kind is EventKind.RESHAKE:
            self._update_round(e, reshakes=d["count"])
        elif e.kind in _ENDING:
            self._update_round(
                e, phase=_ENDING[e.kind], ended_at=e.at, faces=d.get("faces"), reshakes=d["reshakes"],
                clause=d.get("clause", ""), reason=d.get("reason", ""),
            )  # fmt: skip
            self._settle_lines(e)
        elif e.kind is EventKind.ROUND_CORRECTED:
            self._update_round(e, faces=d["faces"], corrected=True)
            self._settle_lines(e)

    def _update_round(self, e: Event, **changes: Any) -> None:
        assert e.round_id is not None
        self._rounds[e.round_id] = replace(self._rounds[e.round_id], **changes)

    def _settle_lines(self, e: Event) -> None:
        bets, at = self._bets, e.at
        for line in e.data["bets"]:
            b = bets[line["bet_id"]]
            # hot path: what dataclasses.replace(b, result=..., returned=..., balance_after=..., settled_at=at) builds
            bets[b.bet_id] = BetRow(
                b.bet_id, b.client_bet_id, b.round_id, b.player_id, b.placed_at, b.bet_type, b.wagered,
                b.balance_before, line["balance_after"], b.request_hash, bet_result_of(line["result"]),
                line["returned"], at,
            )  # fmt: skip
            self.wallets[b.player_id] = line["balance_after"]

    def snapshot(self) -> EngineSnapshot:
        return build_snapshot(self.wallets, self.rounds(), [b for b, _ in self.bets()], self._events[-1:])

    def balance(self, player_id: str) -> int | None:
        return self.wallets.get(player_id)

    def bets(self, player_id: str | None = None, round_id: int | None = None) -> list[tuple[BetRow, RoundRow]]:
        bets, rounds = self._bets, self._rounds
        if player_id is None and round_id is None:
            ids: Iterable[int] = bets
        elif round_id is None:
            ids = self._by_player.get(player_id or "", ())
        else:
            ids = self._by_round.get(round_id, ())
        if not self._in_order:
            ids = sorted(ids)
        return [
            (b, rounds[b.round_id])
            for b in map(bets.__getitem__, ids)
            if (player_id is None or b.player_id == player_id) and (round_id is None or b.round_id == round_id)
        ]

    def rounds(self, round_id: int | None = None) -> list[RoundRow]:
        if round_id is not None:
            row = self._rounds.get(round_id)
            return [] if row is None else [row]
        return [self._rounds[k] for k in sorted(self._rounds)]

    def events(self, after: int = 0, limit: int = 1000, round_id: int | None = None) -> list[Event]:
        events = self._events if round_id is None else self._round_events.get(round_id, [])
        start = bisect_right(events, after, key=_seq)  # the log's seq strictly increase (append)
        return events[start : start + limit] if limit >= 0 else events[start:][:limit]

    def close(self) -> None:
        return None


def _seq(event: Event) -> int:
    return event.seq


def bet_from_event(d: dict[str, Any]) -> BetRow:
    """The pending bet row a ``bet_accepted`` event's data describes."""
    return BetRow(
        d["bet_id"], d["client_bet_id"], d["round_id"], d["player_id"], d["placed_at"],
        bet_type_of(d["bet_type"]), d["stake"], d["balance_before"], d["balance_after"], d["request_hash"],
    )  # fmt: skip


def build_snapshot(
    wallets: dict[str, int], rounds: Sequence[RoundRow], bets: Iterable[BetRow], last_event: Sequence[Event]
) -> EngineSnapshot:
    """Assemble an :class:`EngineSnapshot` from recorded rows (shared by every ledger implementation)."""
    by_round: dict[int, list[BetRecord]] = {}
    idem: dict[tuple[str, str], tuple[str, BetAck]] = {}
    next_bet = 1
    for b in bets:
        ack = b.ack()
        idem[(b.player_id, b.client_bet_id)] = (b.request_hash, ack)
        by_round.setdefault(b.round_id, []).append(BetRecord(ack, b.request_hash, b.result, b.returned))
        next_bet = max(next_bet, b.bet_id + 1)
    open_round = last_settled = None
    for row in rounds:
        rec = RoundRecord(row.round_id, row.opened_at, row.closes_at, row.phase, reshakes=row.reshakes)
        rec.faces, rec.ended_at, rec.bets = row.faces, row.ended_at, by_round.get(row.round_id, [])
        if row.status == "in_progress":
            open_round = rec
        elif row.phase is Phase.SETTLED:
            last_settled = rec
    last = last_event[-1] if last_event else None
    return EngineSnapshot(
        wallets=dict(wallets),
        next_seq=1 if last is None else last.seq + 1,
        next_round_id=(rounds[-1].round_id + 1) if rounds else 1,
        next_bet_id=next_bet,
        last_at=0.0 if last is None else last.at,
        idempotency=idem,
        open_round=open_round,
        last_settled=last_settled,
    )
