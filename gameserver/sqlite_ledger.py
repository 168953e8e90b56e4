"""The durable ledger: SQLite in WAL mode with ``synchronous=FULL``; one transaction per :meth:`append`.

Tables: ``events`` (append-only log, ``significant`` flags voids/re-shakes/pauses/corrections; also the view
``significant_events``), ``wallets`` (balance >= 0 enforced by a CHECK), ``rounds`` and ``bets``
(``UNIQUE(player_id, client_bet_id)`` for idempotency). A settlement, void or cancellation updates a bet only
while it is still ``pending`` and fails the whole transaction otherwise, so no bet is settled twice.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from gameserver.bets import BetResult, BetType
from gameserver.events import Event, EventKind
from gameserver.ledger import BetRow, RoundRow, build_snapshot
from gameserver.model import EngineSnapshot, Phase

SCHEMA = """
CREATE TABLE IF NOT EXISTS events(
    seq INTEGER PRIMARY KEY, at REAL NOT NULL, kind TEXT NOT NULL, round_id INTEGER,
    significant INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS wallets(player_id TEXT PRIMARY KEY, balance INTEGER NOT NULL CHECK (balance >= 0));
CREATE TABLE IF NOT EXISTS rounds(
    round_id INTEGER PRIMARY KEY, phase TEXT NOT NULL, opened_at REAL NOT NULL, closes_at REAL NOT NULL,
    ended_at REAL, faces TEXT, reshakes INTEGER NOT NULL DEFAULT 0, clause TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '', corrected INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS bets(
    bet_id INTEGER PRIMARY KEY, client_bet_id TEXT NOT NULL, round_id INTEGER NOT NULL REFERENCES rounds,
    player_id TEXT NOT NULL, placed_at REAL NOT NULL, bet_type TEXT NOT NULL,
    wagered INTEGER NOT NULL CHECK (wagered > 0), balance_before INTEGER NOT NULL,
    balance_after INTEGER NOT NULL CHECK (balance_after >= 0), request_hash TEXT NOT NULL,
    result TEXT NOT NULL DEFAULT 'pending', returned INTEGER NOT NULL DEFAULT 0, settled_at REAL,
    UNIQUE (player_id, client_bet_id));
CREATE INDEX IF NOT EXISTS bets_round ON bets(round_id);
CREATE INDEX IF NOT EXISTS events_round ON events(round_id, seq);
CREATE INDEX IF NOT EXISTS bets_player ON bets(player_id, bet_id);
CREATE VIEW IF NOT EXISTS significant_events AS SELECT * FROM events WHERE significant = 1;
"""
_ENDING = {
    EventKind.ROUND_SETTLED: Phase.SETTLED,
    EventKind.ROUND_VOIDED: Phase.VOID,
    EventKind.ROUND_CANCELLED: Phase.CANCELLED,
}
_BET_SQL = (
    "SELECT b.bet_id, b.client_bet_id, b.round_id, b.player_id, b.placed_at, b.bet_type, b.wagered, "
    "b.balance_before, b.balance_after, b.request_hash, b.result, b.returned, b.settled_at, "
    "r.round_id, r.phase, r.opened_at, r.closes_at, r.ended_at, r.faces, r.reshakes, r.clause, r.reason, "
    "r.corrected FROM bets b JOIN rounds r ON r.round_id = b.round_id"
)
_ROUND_SQL = (
    "SELECT round_id, phase, opened_at, closes_at, ended_at, faces, reshakes, clause, reason, corrected FROM rounds"
)


_BET_KEYS = (
    *("bet_id", "client_bet_id", "round_id", "player_id", "placed_at", "bet_type", "stake"),
    *("balance_before", "balance_after", "request_hash"),
)


class Writer(Protocol):
    """What :meth:`SqliteLedger.append` writes through: an ``sqlite3.Connection``, or a wrapper of one."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor: ...

    def close(self) -> None: ...


class LedgerError(Exception):
    """The database cannot be opened, written or does not hold what the ledger expects."""


def _round(row: Sequence[Any]) -> RoundRow:
    return RoundRow(row[0], Phase(row[1]), row[2], row[3], row[4], row[5], row[6], row[7], row[8], bool(row[9]))


class SqliteLedger:
    """A :class:`~gameserver.ledger.Ledger` on one SQLite file. ``append`` may be called from one thread at a
    time (the engine's); the query methods may be called from any thread (each has its own connection)."""

    def __init__(self, path: str | Path, wrap_writer: Callable[[sqlite3.Connection], Writer] | None = None) -> None:
        """Open (creating if needed) the database. ``wrap_writer``, when given, wraps the writing connection once
        it is open (every statement of :meth:`append` goes through what it returns: a bench's crash points,
        :mod:`gameserver.crash_points`). Raises LedgerError naming the path when it cannot be opened, is not
        writable, or is not a database."""
        self.path = str(path)
        self._local = threading.local()
        try:
            db = self._connect()
            db.executescript(SCHEMA)
            db.execute("BEGIN IMMEDIATE")
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open database {self.path!r} for writing: {exc}") from None
        self._db: Writer = db if wrap_writer is None else wrap_writer(db)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"journal_mode WAL refused (got {mode})")
        db.execute("PRAGMA synchronous=FULL")
        return db

    def _reader(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._connect()
            self._local.db = db
        return db

    # ------------------------------------------------------------------ writing
    def append(self, events: Sequence[Event]) -> None:
        """Store and apply ``events`` in one durable transaction; raises LedgerError (rolled back) if a bet
        would be settled twice or a constraint fails."""
        if not events:
            return
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            rows = [(e.seq, e.at, str(e.kind), e.round_id, int(e.significant), json.dumps(e.data)) for e in events]
            db.executemany(
                "INSERT INTO events(seq, at, kind, round_id, significant, data) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            bets: list[tuple[object, ...]] = []
            wallets: dict[str, int] = {}
            for e in events:
                if e.kind is EventKind.BET_ACCEPTED:  # batched: the hot path under load
                    d = e.data
                    bets.append(tuple(d[k] for k in _BET_KEYS))
                    wallets[d["player_id"]] = d["balance_after"]
                else:
                    self._flush_bets(db, bets, wallets)
                    self._apply(db, e)
            self._flush_bets(db, bets, wallets)
            db.execute("COMMIT")
        except Exception as exc:  # whatever failed, the transaction must not stay open
            db.execute("ROLLBACK")
            raise LedgerError(f"append of events {events[0].seq}..{events[-1].seq} failed: {exc}") from exc

    def _flush_bets(self, db: Writer, bets: list[tuple[object, ...]], wallets: dict[str, int]) -> None:
        if bets:
            db.executemany(
                "INSERT INTO bets(bet_id, client_bet_id, round_id, player_id, placed_at, bet_type, wagered, "
                "balance_before, balance_after, request_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                bets,
            )
            bets.clear()
        if wallets:
            cur = db.executemany(
                "UPDATE wallets SET balance = ? WHERE player_id = ?", [(b, p) for p, b in wallets.items()]
            )
            if cur.rowcount != len(wallets):  # player_id is the key: each row updates one wallet or none
                known = {r[0] for r in db.execute("SELECT player_id FROM wallets")}
                raise LedgerError(f"no wallet for players {sorted(set(wallets) - known)}")
            wallets.clear()

    def _apply(self, db: Writer, e: Event) -> None:
        d = e.data
        if e.kind is EventKind.WALLET_OPENED:
            db.execute("INSERT INTO wallets(player_id, balance) VALUES (?, ?)", (d["player_id"], d["balance"]))
        elif e.kind is EventKind.ROUND_OPENED:
            db.execute(
                "INSERT INTO rounds(round_id, phase, opened_at, closes_at) VALUES (?, 'betting', ?, ?)",
                (e.round_id, e.at, d["closes_at"]),
            )
        elif e.kind is EventKind.BETTING_CLOSED:
            db.execute("UPDATE rounds SET phase = 'closed' WHERE round_id = ?", (e.round_id,))
        elif e.kind is EventKind.RESHAKE:
            db.execute("UPDATE rounds SET reshakes = ? WHERE round_id = ?", (d["count"], e.round_id))
        elif e.kind in _ENDING:
            db.execute(
                "UPDATE rounds SET phase = ?, ended_at = ?, faces = ?, reshakes = ?, clause = ?, reason = ? "
                "WHERE round_id = ? AND phase IN ('betting', 'closed')",
                (
                    str(_ENDING[e.kind]), e.at, d.get("faces"), d["reshakes"], d.get("clause", ""),
                    d.get("reason", ""), e.round_id,
                ),
            )  # fmt: skip
            self._settle_lines(db, e, "result = 'pending'")
        elif e.kind is EventKind.ROUND_CORRECTED:
            db.execute(
                "UPDATE rounds SET faces = ?, corrected = 1 WHERE round_id = ? AND phase = 'settled'",
                (d["faces"], e.round_id),
            )
            self._settle_lines(db, e, "result != 'pending'")

    def _settle_lines(self, db: Writer, e: Event, guard: str) -> None:
        for line in e.data["bets"]:
            cur = db.execute(
                f"UPDATE bets SET result = ?, returned = ?, balance_after = ?, settled_at = ? "
                f"WHERE bet_id = ? AND {guard}",
                (line["result"], line["returned"], line["balance_after"], e.at, line["bet_id"]),
            )
            if cur.rowcount != 1:
                raise LedgerError(f"bet {line['bet_id']} cannot be {e.kind} (not in the expected state)")
            self._set_wallet(db, line["player_id"], line["balance_after"])

    @staticmethod
    def _set_wallet(db: Writer, player_id: str, balance: int) -> None:
        cur = db.execute("UPDATE wallets SET balance = ? WHERE player_id = ?", (balance, player_id))
        if cur.rowcount != 1:
            raise LedgerError(f"no wallet for player {player_id!r}")

    # ------------------------------------------------------------------ reading
    def snapshot(self) -> EngineSnapshot:
        wallets = dict(self._reader().execute("SELECT player_id, balance FROM wallets").fetchall())
        bets = [row for row, _ in self.bets()]
        return build_snapshot(wallets, self.rounds(), bets, self._last_event())

    def _last_event(self) -> list[Event]:
        return self._events("SELECT seq, at, kind, round_id, data FROM events ORDER BY seq DESC LIMIT 1", ())

    def balance(self, player_id: str) -> int | None:
        row = self._reader().execute("SELECT balance FROM wallets WHERE player_id = ?", (player_id,)).fetchone()
        return None if row is None else int(row[0])

    def bets(self, player_id: str | None = None, round_id: int | None = None) -> list[tuple[BetRow, RoundRow]]:
        where: list[str] = []
        args: list[object] = []
        if player_id is not None:
            where.append("b.player_id = ?")
            args.append(player_id)
        if round_id is not None:
            where.append("b.round_id = ?")
            args.append(round_id)
        sql = _BET_SQL + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY b.bet_id"
        out = []
        for r in self._reader().execute(sql, args):
            bet = BetRow(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                BetType(r[5]),
                r[6],
                r[7],
                r[8],
                r[9],
                BetResult(r[10]),
                r[11],
                r[12],
            )
            out.append((bet, _round(r[13:])))
        return out

    def rounds(self, round_id: int | None = None) -> list[RoundRow]:
        if round_id is None:
            rows = self._reader().execute(_ROUND_SQL + " ORDER BY round_id")
        else:
            rows = self._reader().execute(_ROUND_SQL + " WHERE round_id = ?", (round_id,))
        return [_round(r) for r in rows]

    def events(self, after: int = 0, limit: int = 1000, round_id: int | None = None) -> list[Event]:
        sql = "SELECT seq, at, kind, round_id, data FROM events WHERE seq > ?"
        if round_id is None:
            return self._events(sql + " ORDER BY seq LIMIT ?", (after, limit))
        return self._events(sql + " AND round_id = ? ORDER BY seq LIMIT ?", (after, round_id, limit))

    def _events(self, sql: str, args: tuple[Any, ...]) -> list[Event]:
        rows = self._reader().execute(sql, args).fetchall()
        return [Event(r[0], r[1], EventKind(r[2]), r[3], json.loads(r[4])) for r in rows]

    def close(self) -> None:
        self._db.close()
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
