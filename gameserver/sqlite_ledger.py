"""The durable ledger: SQLite in WAL mode with ``synchronous=FULL``; one transaction per :meth:`append`.

Tables: ``events`` (append-only log, ``significant`` flags voids/re-shakes/pauses/corrections; also the view
``significant_events``), ``wallets`` (balance >= 0 enforced by a CHECK), ``rounds`` and ``bets``
(``UNIQUE(player_id, client_bet_id)`` for idempotency). A settlement, void or cancellation updates a bet only
while it is still ``pending`` and fails the whole transaction otherwise, so no bet is settled twice.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
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


#: The files SQLite keeps beside a database in WAL mode.
_SIDE_FILES = ("-wal", "-shm")


def _expected_columns() -> dict[str, set[str]]:
    """Each table of :data:`SCHEMA` and its columns, as SQLite itself reads the schema."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA)
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: {r[1] for r in db.execute(f"PRAGMA table_info({t})")} for t in tables}
    finally:
        db.close()


_COLUMNS = _expected_columns()


def _prepare(path: Path) -> None:
    """Make ``path`` hold a ledger that may be opened: a new one is created (schema and all) under another name and
    renamed into place, so a file at ``path`` always holds the whole schema; an existing one is checked.

    Raises:
        LedgerError: the file is empty (0 bytes), is not an SQLite database, fails ``PRAGMA quick_check``, lacks a
            table or column of the schema, or is missing while its WAL file is there; the message is one line
            naming the path and, for a damaged or empty file, ``--new-ledger``.
    """
    where = f"cannot open database {str(path)!r}"
    if not path.exists():
        if any(Path(f"{path}{end}").exists() for end in _SIDE_FILES):
            raise LedgerError(f"{where}: {path.name}-wal or -shm is there without the database; move them away")
        _create(path, where)
        return
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LedgerError(f"{where}: {exc.strerror}") from None
    if size == 0:
        raise LedgerError(f"{where}: the file is empty (0 bytes), not a ledger; start a new one with --new-ledger")
    try:
        db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, isolation_level=None, timeout=10.0)
    except sqlite3.Error as exc:
        raise LedgerError(f"{where} for writing: {exc}") from None
    try:
        problems = [" ".join(str(r[0]).split()) for r in db.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise LedgerError(f"{where}: damaged: {problems[0]}{more}; restore a backup or start with --new-ledger")
        for table, wanted in _COLUMNS.items():
            have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            if not have:
                raise LedgerError(f"{where}: not a ledger: no table {table}; start a new one with --new-ledger")
            if missing := sorted(wanted - have):
                raise LedgerError(f"{where}: not a ledger: table {table} has no column {missing[0]}")
    except sqlite3.Error as exc:
        raise LedgerError(
            f"{where}: damaged or not a database: {_line(exc)}; restore a backup or use --new-ledger"
        ) from None
    finally:
        db.close()


def _line(exc: BaseException) -> str:
    """An error's text on one line (SQLite quotes schema text with its newlines)."""
    return " ".join(str(exc).split())


def _create(path: Path, where: str) -> None:
    """A new ledger at ``path``: the schema written and synced under a temporary name, then renamed into place."""
    temp = path.with_name(f".{path.name}.new-{os.getpid()}")
    try:
        temp.unlink(missing_ok=True)
        db = sqlite3.connect(temp, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(f"BEGIN; {SCHEMA} COMMIT;")
        finally:
            db.close()
        os.replace(temp, path)
        _sync_dir(path.parent)
    except (sqlite3.Error, OSError) as exc:
        temp.unlink(missing_ok=True)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LedgerError(f"{where} for writing: {reason}") from None


def _sync_dir(directory: Path) -> None:
    """fsync a directory so a rename in it is durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def set_aside(path: str | Path, clock: Callable[[], float] = time.time) -> Path | None:
    """Move the ledger at ``path`` (and its WAL and shared-memory files) to ``PATH.replaced-YYYYmmddTHHMMSSZ`` so
    that a new ledger can be started there (``xocdia-server --new-ledger``); nothing is deleted. Returns the new
    name of the database file, or None when there was nothing at ``path``.

    Raises:
        LedgerError: a file cannot be moved (the message names it).
    """
    path = Path(path)
    present = [end for end in ("", *_SIDE_FILES) if Path(f"{path}{end}").exists()]
    if not present:
        return None
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(clock()))
    target = Path(f"{path}.replaced-{stamp}")
    n = 1
    while any(Path(f"{target}{end}").exists() for end in ("", *_SIDE_FILES)):
        n += 1
        target = Path(f"{path}.replaced-{stamp}-{n}")
    for end in present:
        try:
            os.replace(f"{path}{end}", f"{target}{end}")
        except OSError as exc:
            raise LedgerError(f"cannot move {str(path) + end!r} aside: {exc.strerror}") from None
    _sync_dir(path.parent)
    return target


def _round(row: Sequence[Any]) -> RoundRow:
    return RoundRow(row[0], Phase(row[1]), row[2], row[3], row[4], row[5], row[6], row[7], row[8], bool(row[9]))


class SqliteLedger:
    """A :class:`~gameserver.ledger.Ledger` on one SQLite file. ``append`` may be called from one thread at a
    time (the engine's); the query methods may be called from any thread (each has its own connection)."""

    def __init__(self, path: str | Path, wrap_writer: Callable[[sqlite3.Connection], Writer] | None = None) -> None:
        """Open (creating if needed) the database. ``wrap_writer``, when given, wraps the writing connection once
        it is open (every statement of :meth:`append` goes through what it returns: a bench's crash points,
        :mod:`gameserver.crash_points`). A missing file becomes a new ledger; an existing one is checked first
        (``PRAGMA quick_check`` and the schema's tables and columns). Raises LedgerError, one line naming the path,
        when it cannot be opened, is not writable, is empty (0 bytes), damaged, or not a ledger."""
        self.path = str(path)
        self._local = threading.local()
        self._readers: list[tuple[threading.Thread, sqlite3.Connection]] = []  # each live thread's, for close()
        self._readers_lock = threading.Lock()
        _prepare(Path(path))
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
        """This thread's read connection, opened on its first query. Opening one closes those of threads that have
        ended, so a server whose worker threads come and go holds one connection (and one page cache) per live
        thread, not one per thread it ever had."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = self._connect()
            self._local.db = db
            with self._readers_lock:
                ended = [old for thread, old in self._readers if not thread.is_alive()]
                self._readers = [(t, c) for t, c in self._readers if t.is_alive()]
                self._readers.append((threading.current_thread(), db))
            for old in ended:
                old.close()
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
        """The engine's state as the ledger holds it. Raises LedgerError (one line, naming the path) when a row
        cannot be read back: a damaged file, or a value no server writes."""
        try:
            wallets = dict(self._reader().execute("SELECT player_id, balance FROM wallets").fetchall())
            bets = [row for row, _ in self.bets()]
            return build_snapshot(wallets, self.rounds(), bets, self._last_event())
        except (sqlite3.Error, ValueError, KeyError, TypeError, IndexError) as exc:
            raise LedgerError(
                f"cannot read ledger {self.path!r}: damaged: {_line(exc)}; restore a backup or start with --new-ledger"
            ) from None

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
        """Close the writing connection and every live thread's read connection (a pool thread that read once keeps
        its connection until then, or until a new thread opens one after it ended)."""
        self._db.close()
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for _thread, db in readers:
            db.close()
