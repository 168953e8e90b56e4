"""Lotus Tables' Xoc Dia server ("lotus-xd"): a vendor's table server that knows nothing of xocdia-hil.

Standard library only. One process runs one table:

- an HTTP JSON API (``ThreadingHTTPServer``): API keys in the ``X-Lotus-Key`` header (one per player, one for the
  supervisor), money in cents, the vendor's pick names (``RED4`` ... ``SMALL``) and error codes (``L-CLOSED`` ...),
  a long-poll event feed (``GET /api/feed?since=N&wait=S``);
- a round engine that opens rounds on its own timer (``--betting-s``, ``--gap-s``), applies the rules of the game
  (payouts, voids, re-shakes with a cap, pauses with a timeout) and keeps its ledger in SQLite (``--db``);
- a device side that dials its table controller (``--controller HOST:PORT``: the ``;``-field push protocol of
  ``README.md``, "Controller protocol") and its result camera (``--camera HOST:PORT``: JSON lines with a confidence;
  reads below ``--min-confidence`` are ignored), reconnecting whenever a connection drops.

The first line on stdout is ``lotus-xd listening on http://HOST:PORT``. SIGTERM or SIGINT stops it cleanly: the
round in play stays in the ledger and is cancelled (every bet refunded) when the server starts again on that file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import sqlite3
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# ---------------------------------------------------------------------------------------------------------- rules

#: The vendor's picks: name -> (the numbers of red faces that win, odds to 1, the numbers of red that push).
PICKS: dict[str, tuple[frozenset[int], Fraction, frozenset[int]]] = {
    "RED4": (frozenset({4}), Fraction(14), frozenset()),
    "RED3": (frozenset({3}), Fraction(14, 5), frozenset()),
    "RED2": (frozenset({2}), Fraction(3, 2), frozenset()),
    "RED1": (frozenset({1}), Fraction(14, 5), frozenset()),
    "WHITE4": (frozenset({0}), Fraction(14), frozenset()),
    "QUAD": (frozenset({0, 4}), Fraction(13, 2), frozenset()),
    "ODD": (frozenset({1, 3}), Fraction(24, 25), frozenset()),
    "EVEN": (frozenset({0, 2, 4}), Fraction(24, 25), frozenset()),
    "BIG": (frozenset({3, 4}), Fraction(24, 25), frozenset({2})),
    "SMALL": (frozenset({0, 1}), Fraction(24, 25), frozenset({2})),
}
#: The least stake that makes every payout a whole number of cents (the odds' denominators 5, 2, 25).
WHOLE_CENTS = 50


def settle_bet(pick: str, cents: int, reds: int) -> tuple[str, int]:
    """The result (``win``/``lose``/``push``) and the cents credited back for a stake of ``cents`` on ``pick`` when
    ``reds`` faces are red. Raises ValueError when the payout is not a whole number of cents (a stake off the chip
    unit) or for an unknown pick."""
    wins, odds, pushes = PICKS[pick]
    if reds in wins:
        won = cents * odds
        if won.denominator != 1:
            raise ValueError(f"stake {cents} on {pick}: payout {won} is not a whole number of cents")
        return "win", cents + int(won)
    if reds in pushes:
        return "push", cents
    return "lose", 0


# ---------------------------------------------------------------------------------------------------------- wire


def checksum(text: str) -> str:
    """The controller protocol's check: the byte sum of ``text`` modulo 256, as two upper-case hex digits."""
    return f"{sum(text.encode('ascii')) % 256:02X}"


def controller_line(fields: list[str]) -> bytes:
    """One controller-protocol line: ``*`` + the fields joined by ``;`` + ``;`` + checksum + CR LF."""
    body = ";".join(fields) + ";"
    return f"*{body}{checksum(body)}\r\n".encode("ascii")


def parse_controller_line(raw: bytes) -> list[str] | None:
    """The fields of one received line (without ``*``, checksum and CR LF), or None when it is not a valid line."""
    try:
        text = raw.decode("ascii").rstrip("\r\n")
    except UnicodeDecodeError:
        return None
    if not text.startswith("*") or len(text) < 4:
        return None
    body, ck = text[1:-2], text[-2:]
    if not body.endswith(";") or checksum(body) != ck:
        return None
    return body[:-1].split(";")


# ---------------------------------------------------------------------------------------------------------- engine


class Refusal(Exception):
    """A request the table refuses: the vendor's error code, its HTTP status and a message."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


@dataclass
class Config:
    """The table's settings (command-line options)."""

    betting_s: float = 15.0
    gap_s: float = 3.0
    auto_open: bool = True
    result_timeout_s: float = 30.0
    pause_timeout_s: float = 60.0
    reshake_cap: int = 4
    chip_cents: int = WHOLE_CENTS
    min_cents: int = 100
    max_cents: int = 1_000_000
    min_confidence: float = 0.9
    supervisor_key: str = "lotus-supervisor"


@dataclass
class Round:
    """The round in play (the ledger keeps its bets and its end)."""

    rid: int
    phase: str  # betting, closed, paused
    opened: float
    closes: float
    bowl_on: bool = False
    started: bool = False  # a SHAKE START since the round opened
    shaking: bool = False
    shaken: bool = False  # a complete shake (START .. END, no DROP) since the last (re)shake
    lifted: bool = False
    reshake_asked: bool = False  # a re-shake asked for and not begun: a SHAKE START after the close is that shake
    reshakes: int = 0
    overlap_faces: str = ""
    result_due: float = 0.0
    paused_from: str = ""
    paused_at: float = 0.0
    remaining_s: float = 0.0
    held: list[tuple[str, list[str], float]] = field(default_factory=list)
    early_reads: list[tuple[list[str], float]] = field(default_factory=list)  # reads before the lift: fields, arrival


class Table:
    """The round engine and its SQLite ledger. Every public method takes the table's lock; device reports and API
    calls come from many threads."""

    def __init__(self, config: Config, db_path: str) -> None:
        self.cfg = config
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.db = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(
            """
            CREATE TABLE IF NOT EXISTS players (name TEXT PRIMARY KEY, key TEXT UNIQUE NOT NULL,
                balance INTEGER NOT NULL CHECK (balance >= 0));
            CREATE TABLE IF NOT EXISTS rounds (id INTEGER PRIMARY KEY, status TEXT NOT NULL, faces TEXT,
                reds INTEGER, opened_at REAL, ended_at REAL, clause TEXT, reason TEXT);
            CREATE TABLE IF NOT EXISTS bets (id INTEGER PRIMARY KEY AUTOINCREMENT, player TEXT NOT NULL,
                ref TEXT NOT NULL, round INTEGER NOT NULL, pick TEXT NOT NULL, cents INTEGER NOT NULL,
                placed_at REAL NOT NULL, settled_at REAL, result TEXT NOT NULL DEFAULT 'pending',
                returned INTEGER NOT NULL DEFAULT 0, balance_before INTEGER NOT NULL,
                balance_after INTEGER NOT NULL, UNIQUE (player, ref));
            CREATE TABLE IF NOT EXISTS events (n INTEGER PRIMARY KEY AUTOINCREMENT, t REAL NOT NULL,
                type TEXT NOT NULL, round INTEGER, data TEXT NOT NULL);
            """
        )
        self.round: Round | None = None
        self.next_open: float | None = None
        self.ignored: dict[str, int] = {}
        self.lamp: Callable[[list[str]], None] = lambda fields: None
        self.table_ready: Callable[[], bool] = lambda: True
        self._recover()

    # ------------------------------------------------------------------ ledger
    def _event(self, kind: str, rid: int | None, **data: Any) -> None:
        self.db.execute(
            "INSERT INTO events (t, type, round, data) VALUES (?, ?, ?, ?)", (time.time(), kind, rid, json.dumps(data))
        )
        self.changed.notify_all()

    def _recover(self) -> None:
        """A round the last run left unfinished is cancelled and refunded."""
        with self.lock:
            for (rid,) in self.db.execute("SELECT id FROM rounds WHERE status = 'in_progress'").fetchall():
                self._refund_round(int(rid), "cancelled", "ERR-3", "server restarted")

    def _refund_round(self, rid: int, status: str, clause: str, reason: str) -> None:
        now = time.time()
        self.db.execute("BEGIN IMMEDIATE")
        lines = []
        for bid, player, cents in self.db.execute(
            "SELECT id, player, cents FROM bets WHERE round = ? AND result = 'pending' ORDER BY id", (rid,)
        ).fetchall():
            self.db.execute("UPDATE players SET balance = balance + ? WHERE name = ?", (cents, player))
            (after,) = self.db.execute("SELECT balance FROM players WHERE name = ?", (player,)).fetchone()
            self.db.execute(
                "UPDATE bets SET result = 'refund', returned = ?, settled_at = ?, balance_after = ? WHERE id = ?",
                (cents, now, after, bid),
            )
            lines.append({"bet": bid, "player": player, "returned_cents": cents})
        self.db.execute(
            "UPDATE rounds SET status = ?, ended_at = ?, clause = ?, reason = ? WHERE id = ?",
            (status, now, clause, reason, rid),
        )
        self._event("round.voided" if status == "void" else "round.cancelled", rid, clause=clause, reason=reason)
        self._event("round.settled", rid, status=status, bets=lines)
        self.db.execute("COMMIT")

    def _settle_round(self, rid: int, faces: str) -> None:
        reds = faces.count("R")
        now = time.time()
        self._event("round.result", rid, faces=faces, reds=reds)
        self.db.execute("BEGIN IMMEDIATE")
        lines = []
        for bid, player, pick, cents in self.db.execute(
            "SELECT id, player, pick, cents FROM bets WHERE round = ? AND result = 'pending' ORDER BY id", (rid,)
        ).fetchall():
            result, back = settle_bet(pick, int(cents), reds)
            self.db.execute("UPDATE players SET balance = balance + ? WHERE name = ?", (back, player))
            (after,) = self.db.execute("SELECT balance FROM players WHERE name = ?", (player,)).fetchone()
            self.db.execute(
                "UPDATE bets SET result = ?, returned = ?, settled_at = ?, balance_after = ? WHERE id = ?",
                (result, back, now, after, bid),
            )
            lines.append({"bet": bid, "player": player, "result": result, "returned_cents": back})
        self.db.execute(
            "UPDATE rounds SET status = 'settled', faces = ?, reds = ?, ended_at = ? WHERE id = ?",
            (faces, reds, now, rid),
        )
        self._event("round.settled", rid, status="settled", faces=faces, bets=lines)
        self.db.execute("COMMIT")

    # ------------------------------------------------------------------ players and bets
    def add_players(self, players: list[dict[str, Any]]) -> None:
        """Create (or reset) players with their keys and opening balances. Raises Refusal ``L-BADREQ``."""
        with self.lock:
            for p in players:
                name, key, cents = p.get("name"), p.get("key"), p.get("balance_cents")
                if not (isinstance(name, str) and name and isinstance(key, str) and key):
                    raise Refusal("L-BADREQ", "players[].name and players[].key must be non-empty text", 400)
                if not (isinstance(cents, int) and cents >= 0):
                    raise Refusal("L-BADREQ", "players[].balance_cents must be a whole number >= 0", 400)
                self.db.execute(
                    "INSERT OR REPLACE INTO players (name, key, balance) VALUES (?, ?, ?)", (name, key, cents)
                )
                self._event("player.created", None, player=name, balance_cents=cents)

    def player_for_key(self, key: str) -> str | None:
        """The player whose API key is ``key``, or None."""
        with self.lock:
            row = self.db.execute("SELECT name FROM players WHERE key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

    def place(self, player: str, ref: str, pick: str, cents: int, round_id: int | None) -> tuple[dict[str, Any], bool]:
        """Place a bet; returns its ticket and whether it is a replay of an earlier one with the same ``ref``.
        Raises Refusal with the vendor's code."""
        with self.lock:
            row = self.db.execute(
                "SELECT id, round, pick, cents, balance_before FROM bets WHERE player = ? AND ref = ?", (player, ref)
            ).fetchone()
            if row is not None:
                if row[2] != pick or row[3] != cents or (round_id is not None and round_id != row[1]):
                    raise Refusal("L-DUPKEY", f"ref {ref!r} was used for another bet")
                return self._ticket(int(row[0])), True
            if pick not in PICKS:
                raise Refusal("L-TYPE", f"pick must be one of {', '.join(PICKS)}; got {pick!r}", 400)
            if cents % self.cfg.chip_cents:
                raise Refusal("L-CHIP", f"cents must be a multiple of {self.cfg.chip_cents}")
            if cents < self.cfg.min_cents:
                raise Refusal("L-MIN", f"cents below the table minimum {self.cfg.min_cents}")
            if cents > self.cfg.max_cents:
                raise Refusal("L-MAX", f"cents above the table maximum {self.cfg.max_cents}")
            rnd = self.round
            if rnd is None or rnd.phase == "closed" or (rnd.phase == "betting" and time.monotonic() >= rnd.closes):
                raise Refusal("L-CLOSED", "no round is taking bets")
            if rnd.phase == "paused":
                raise Refusal("L-HOLD", f"round {rnd.rid} is paused")
            if round_id is not None and round_id != rnd.rid:
                raise Refusal("L-WRONGROUND", f"round {round_id} is not taking bets (round {rnd.rid} is)")
            (balance,) = self.db.execute("SELECT balance FROM players WHERE name = ?", (player,)).fetchone()
            if cents > balance:
                raise Refusal("L-FUNDS", f"balance {balance} is below the stake {cents}")
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("UPDATE players SET balance = balance - ? WHERE name = ?", (cents, player))
            cur = self.db.execute(
                "INSERT INTO bets (player, ref, round, pick, cents, placed_at, balance_before, balance_after)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (player, ref, rnd.rid, pick, cents, time.time(), balance, balance - cents),
            )
            self.db.execute("COMMIT")
            return self._ticket(int(cur.lastrowid or 0)), False

    def _ticket(self, bid: int) -> dict[str, Any]:
        cols = (
            "id, player, ref, round, pick, cents, placed_at, settled_at, result, returned, balance_before,"
            " balance_after"
        )
        row = self.db.execute(f"SELECT {cols} FROM bets WHERE id = ?", (bid,)).fetchone()
        ticket = dict(zip([c.strip() for c in cols.split(",")], row, strict=True))
        status, faces, reds = self.db.execute(
            "SELECT status, faces, reds FROM rounds WHERE id = ?", (ticket["round"],)
        ).fetchone()
        return {**ticket, "round_status": status, "faces": faces or "", "reds": reds}

    def bets_of(self, player: str) -> list[dict[str, Any]]:
        """The player's bet record, oldest first."""
        with self.lock:
            ids = self.db.execute("SELECT id FROM bets WHERE player = ? ORDER BY id", (player,)).fetchall()
            return [self._ticket(int(i)) for (i,) in ids]

    def balance_of(self, player: str) -> int | None:
        """The player's balance in cents, or None for an unknown player."""
        with self.lock:
            row = self.db.execute("SELECT balance FROM players WHERE name = ?", (player,)).fetchone()
            return None if row is None else int(row[0])

    def feed(self, since: int, wait_s: float) -> list[dict[str, Any]]:
        """The events after ``since``, waiting up to ``wait_s`` for one."""
        deadline = time.monotonic() + wait_s
        with self.lock:
            while True:
                rows = self.db.execute(
                    "SELECT n, t, type, round, data FROM events WHERE n > ? ORDER BY n LIMIT 500", (since,)
                ).fetchall()
                left = deadline - time.monotonic()
                if rows or left <= 0:
                    return [{"n": n, "t": t, "type": k, "round": r, **json.loads(d)} for n, t, k, r, d in rows]
                self.changed.wait(left)

    def health(self) -> dict[str, Any]:
        """Counts of ignored device reports and the size of the event log."""
        with self.lock:
            (n,) = self.db.execute("SELECT COUNT(*) FROM events").fetchone()
            return {"ignored_reports": dict(self.ignored), "events": int(n)}

    # ------------------------------------------------------------------ round life
    def _open(self) -> None:
        (last,) = self.db.execute("SELECT COALESCE(MAX(id), 0) FROM rounds").fetchone()
        rid = int(last) + 1
        now = time.monotonic()
        self.round = Round(rid, "betting", now, now + self.cfg.betting_s)
        self.db.execute("INSERT INTO rounds (id, status, opened_at) VALUES (?, 'in_progress', ?)", (rid, time.time()))
        self._event("round.opened", rid, betting_s=self.cfg.betting_s)
        self.lamp(["OPEN", str(rid), str(int(self.cfg.betting_s * 1000))])

    def _end(self, status: str, clause: str = "", reason: str = "") -> None:
        rnd = self.round
        assert rnd is not None
        if status == "void":
            code = {"SH-4a": "4A", "SH-4b": "4B", "SH-5": "5"}[clause]
            self.lamp(["VOID", str(rnd.rid), code])
        elif status == "cancelled":
            self.lamp(["VOID", str(rnd.rid), "ERR3"])
        self.round = None
        if status == "settled":
            self._settle_round(rnd.rid, reason)
        else:
            self._refund_round(rnd.rid, status, clause, reason)
        self.next_open = time.monotonic() + self.cfg.gap_s if self.cfg.auto_open else None

    def _pause(self, reason: str) -> None:
        rnd = self.round
        assert rnd is not None and rnd.phase != "paused"
        now = time.monotonic()
        rnd.paused_from, rnd.paused_at, rnd.phase = rnd.phase, now, "paused"
        rnd.remaining_s = max(0.0, rnd.closes - now)
        self._event("round.paused", rnd.rid, reason=reason, phase=rnd.paused_from)
        self.lamp(["PAUSE", str(rnd.rid)])

    def _resume(self) -> None:
        rnd = self.round
        assert rnd is not None and rnd.phase == "paused"
        rnd.phase = rnd.paused_from
        now = time.monotonic()
        if rnd.phase == "betting":
            rnd.closes = now + rnd.remaining_s
        else:
            rnd.result_due = now + self.cfg.result_timeout_s
        self._event("round.resumed", rnd.rid, phase=rnd.phase)
        self.lamp(["RESUME", str(rnd.rid)])
        held, rnd.held = rnd.held, []
        for i, (line, fields, at) in enumerate(held):
            if self.round is not rnd or rnd.phase == "paused":
                rnd.held = held[i:] if self.round is rnd else []
                return
            self._apply(line, fields, at)

    def _reshake(self, why: str) -> None:
        rnd = self.round
        assert rnd is not None
        rnd.reshakes += 1
        rnd.shaken = rnd.shaking = rnd.lifted = False
        rnd.reshake_asked = True
        rnd.overlap_faces = ""
        if why == "STAND":
            rnd.bowl_on = False
        clause = "SH-2" if why == "DROP" else "SH-3"
        self._event("round.reshake", rnd.rid, clause=clause, count=rnd.reshakes)
        if rnd.reshakes > self.cfg.reshake_cap:
            self._pause(f"re-shake cap {self.cfg.reshake_cap} exceeded")
            return
        self.lamp(["RESHAKE", str(rnd.rid), why])
        rnd.result_due = time.monotonic() + self.cfg.result_timeout_s

    def tick(self) -> None:
        """Run the table's timers: open, close, result and pause timeouts, the read-before-lift window."""
        with self.lock:
            now = time.monotonic()
            rnd = self.round
            if rnd is None:
                if self.next_open is None and self.cfg.auto_open and self.table_ready():
                    self.next_open = now + self.cfg.gap_s
                if self.next_open is not None and now >= self.next_open and self.table_ready():
                    self.next_open = None
                    self._open()
                return
            if rnd.phase == "paused":
                if now >= rnd.paused_at + self.cfg.pause_timeout_s:
                    self._end("cancelled", "ERR-3", "pause timeout")
                return
            if rnd.phase == "betting" and now >= rnd.closes:
                rnd.phase = "closed"
                rnd.result_due = now + self.cfg.result_timeout_s
                self._event("round.closed", rnd.rid)
                self.lamp(["CLOSE", str(rnd.rid)])
                if not rnd.started:
                    self._end("void", "SH-4a", "no shake before betting closed")
                return
            if rnd.phase == "closed" and now >= rnd.result_due:
                self._pause("no result in time")

    def supervise(self, action: str) -> None:
        """A supervisor's ``open``, ``pause``, ``resume`` or ``cancel``. Raises Refusal ``L-STATE``/``L-BADREQ``."""
        with self.lock:
            rnd = self.round
            if action == "open":
                if rnd is not None:
                    raise Refusal("L-STATE", f"round {rnd.rid} is in play")
                self._open()
            elif action == "pause":
                if rnd is None or rnd.phase == "paused":
                    raise Refusal("L-STATE", "no round to pause")
                self._pause("supervisor")
            elif action == "resume":
                if rnd is None or rnd.phase != "paused":
                    raise Refusal("L-STATE", "no paused round")
                self._resume()
            elif action == "cancel":
                if rnd is None:
                    raise Refusal("L-STATE", "no round to cancel")
                self._end("cancelled", "ERR-3", "supervisor")
            else:
                raise Refusal("L-BADREQ", f"action must be one of open, pause, resume, cancel; got {action!r}", 400)

    # ------------------------------------------------------------------ device reports
    def ignore(self, line: str, why: str) -> None:
        """Count a frame from ``line`` that was refused before it became a report (``why``: the reason)."""
        with self.lock:
            self._ignore(line, why)

    def _ignore(self, line: str, why: str) -> None:
        key = f"{line}:{why}"
        self.ignored[key] = self.ignored.get(key, 0) + 1

    def report(self, line: str, fields: list[str], tag: str, at: float) -> None:
        """A device report from ``line`` (``controller``: ``[DEV, CODE, args...]``; ``camera``: ``[KIND, faces,
        overlap]``) tagged with round ``tag`` ("" for none)."""
        with self.lock:
            rnd = self.round
            if rnd is None:
                self._ignore(line, "no round")
                return
            if tag and tag != str(rnd.rid):
                self._ignore(line, "other round")
                return
            if not tag and line == "camera":
                self._ignore(line, "untagged read")
                return
            if rnd.phase == "paused":
                if fields[:2] == ["DESK", "OK"]:
                    self._resume()
                elif len(rnd.held) < 64:
                    rnd.held.append((line, fields, at))
                else:
                    self._ignore(line, "hold full")
                return
            self._apply(line, fields, at)

    def _apply(self, line: str, fields: list[str], at: float) -> None:
        rnd = self.round
        assert rnd is not None
        betting = rnd.phase == "betting"
        head = fields[:2]
        if line == "camera":
            self._read(fields, at)
        elif head == ["BOWL", "ON"]:
            rnd.bowl_on = True
        elif head == ["BOWL", "OFF"]:
            self._lift(fields[2] == "1", betting)
        elif head == ["SHAKE", "START"]:
            if rnd.lifted:
                self._ignore(line, "shake while lifted")
                return
            if rnd.phase == "closed" and not rnd.reshake_asked:
                self._ignore(line, "shake started after the close")  # no shake of the betting period (GP-2)
                return
            rnd.started = rnd.shaking = True
            rnd.shaken = rnd.reshake_asked = False
        elif head == ["SHAKE", "END"]:
            if rnd.shaking:
                rnd.shaking, rnd.shaken = False, True
        elif head == ["SHAKE", "DROP"]:
            self._reshake("DROP")
        elif head == ["DESK", "PROB"]:
            self._pause("dealer reported a problem")
        else:
            self._ignore(line, "no effect")

    def _lift(self, touch: bool, betting: bool) -> None:
        rnd = self.round
        assert rnd is not None
        if rnd.lifted:
            self._ignore("controller", "second lift")
            return
        was_on, rnd.bowl_on = rnd.bowl_on, False
        if betting:
            self._end("void", "SH-4b", "bowl lifted during betting")
            return
        early, rnd.early_reads = rnd.early_reads, []
        if any(arrival < rnd.closes for _f, arrival in early):
            self._end("void", "SH-4b", "the camera saw the tokens before betting closed")
            return
        if touch:
            self._end("void", "SH-5", "bowl touched a token")
            return
        if not was_on:
            self._end("void", "SH-4a", "bowl never reported on the plate")
            return
        if not rnd.shaken:
            self._end("void", "SH-4a", "no complete shake under the bowl")
            return
        rnd.lifted = True
        for fields, arrival in early:  # the reads that overtook the lift, in arrival order
            if self.round is not rnd or rnd.phase == "paused" or not rnd.lifted:
                break
            self._read(fields, arrival)

    def _read(self, fields: list[str], at: float) -> None:
        rnd = self.round
        assert rnd is not None
        kind, faces, overlap = fields[0], fields[1], fields[2] == "1"
        if not rnd.lifted:
            if len(rnd.early_reads) >= 8:
                self._ignore("camera", "read before the lift")
            else:
                rnd.early_reads.append((fields, at))  # held until the lift's report: it may come later
            return
        if kind == "spread":
            if not rnd.overlap_faces:
                self._ignore("camera", "spread without an overlap")
                return
            seen = rnd.overlap_faces
            if any(a in "RW" and a != b for a, b in zip(seen, faces, strict=True)):
                self._pause(f"spread read {faces} contradicts {seen}")
                return
            self._end("settled", reason=faces)
            return
        if "S" in faces:
            self._reshake("STAND")
        elif overlap:
            rnd.overlap_faces = faces
            self._event("round.overlap", rnd.rid, faces=faces)
        elif "U" in faces:
            self._pause(f"unreadable result {faces}")
        else:
            self._end("settled", reason=faces)


# ---------------------------------------------------------------------------------------------------------- devices


class DeviceLink(threading.Thread):
    """Dials one device endpoint and keeps the connection: reads lines, hands them to ``on_line``, writes what
    :meth:`send` queues, a heartbeat every second; reconnects every 0.2 s while the endpoint is down."""

    def __init__(self, name: str, address: tuple[str, int], on_line: Callable[[bytes], None], heartbeat: bytes) -> None:
        super().__init__(name=f"lotus-{name}", daemon=True)
        self.address, self.on_line, self.heartbeat = address, on_line, heartbeat
        self.sock: socket.socket | None = None
        self.stopping = threading.Event()
        self.send_lock = threading.Lock()

    @property
    def connected(self) -> bool:
        """True while a connection is up."""
        return self.sock is not None

    def send(self, data: bytes) -> None:
        """Write ``data`` if connected (bytes for a down endpoint are dropped, as on an unplugged cable)."""
        with self.send_lock:
            if self.sock is not None:
                try:
                    self.sock.sendall(data)
                except OSError:
                    self._drop()

    def _drop(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                sock = socket.create_connection(self.address, timeout=1.0)
            except OSError:
                self.stopping.wait(0.2)
                continue
            sock.settimeout(0.2)
            with self.send_lock:
                self.sock = sock
            buf, last_tx = b"", 0.0
            while not self.stopping.is_set() and self.sock is sock:
                if time.monotonic() - last_tx >= 1.0:
                    self.send(self.heartbeat)
                    last_tx = time.monotonic()
                try:
                    data = sock.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    with self.send_lock:
                        self._drop()
                    break
                buf += data
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    if raw.strip():
                        self.on_line(raw + b"\n")
                if len(buf) > 4096:
                    buf = b""

    def stop(self) -> None:
        """Close the connection and end the thread."""
        self.stopping.set()
        with self.send_lock:
            self._drop()
        self.join(timeout=2)


#: Controller event fields after DEV;CODE, by (DEV, CODE), each with its allowed values.
EVENT_ARGS: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("BOWL", "ON"): (),
    ("BOWL", "OFF"): (("0", "1"), ("-", "0", "1", "2", "3")),
    ("SHAKE", "START"): (),
    ("SHAKE", "END"): (),
    ("SHAKE", "DROP"): (("BOWL", "PLATE", "TOKEN"), ("-", "0", "1", "2", "3")),
    ("DESK", "TOKENS"): (),
    ("DESK", "REASM"): (),
    ("DESK", "SPREAD"): (),
    ("DESK", "PROB"): (("EQUIP", "CAP"),),
    ("DESK", "OK"): (),
}


STX, ETX, DLE = 0x02, 0x03, 0x10
#: The polled controller's events: (dev, code) bytes -> the line protocol's DEV, CODE and how many argument bytes.
BIN_EVENTS: dict[bytes, tuple[str, str, int]] = {
    b"BN": ("BOWL", "ON", 0),
    b"BF": ("BOWL", "OFF", 2),
    b"SS": ("SHAKE", "START", 0),
    b"SE": ("SHAKE", "END", 0),
    b"SD": ("SHAKE", "DROP", 2),
    b"DT": ("DESK", "TOKENS", 0),
    b"DA": ("DESK", "REASM", 0),
    b"DR": ("DESK", "SPREAD", 0),
    b"DP": ("DESK", "PROB", 1),
    b"DK": ("DESK", "OK", 0),
}
BIN_LAMP = {"OPEN": b"O", "CLOSE": b"C", "PAUSE": b"P", "RESUME": b"U", "RESHAKE": b"R", "VOID": b"V"}
BIN_LAMP_ARG = {"DROP": b"D", "STAND": b"S", "4A": b"a", "4B": b"b", "5": b"5", "ERR3": b"3"}


def bin_frame(kind: bytes, seq: int, payload: bytes) -> bytes:
    """STX, then LEN TYPE SEQ PAYLOAD XOR with STX/ETX/DLE stuffed as DLE + byte^0x40, then ETX."""
    body = bytes((len(payload) + 2,)) + kind + bytes((seq,)) + payload
    check = 0
    for b in body:
        check ^= b
    stuffed = bytearray()
    for b in body + bytes((check,)):
        stuffed += bytes((DLE, b ^ 0x40)) if b in (STX, ETX, DLE) else bytes((b,))
    return bytes((STX,)) + bytes(stuffed) + bytes((ETX,))


def bin_unframe(raw: bytes) -> tuple[str, int, bytes] | None:
    """(TYPE, SEQ, PAYLOAD) of one frame's bytes between STX and ETX, or None when it is not a valid frame."""
    body, escaped = bytearray(), False
    for b in raw:
        if escaped:
            body.append(b ^ 0x40)
            escaped = False
        elif b == DLE:
            escaped = True
        else:
            body.append(b)
    if escaped or len(body) < 4 or body[0] != len(body) - 2:
        return None
    check = 0
    for b in body[:-1]:
        check ^= b
    return None if check != body[-1] else (chr(body[1]), body[2], bytes(body[3:-1]))


class PolledController(threading.Thread):
    """Dials the older, polled controller and is its poll master: every 100 ms a poll (acknowledging the last event
    taken) or the oldest lamp command, then up to 250 ms for the one reply; a command is repeated until a reply comes.
    Each event (``seq`` 1-255) is handed to ``on_event`` once."""

    def __init__(
        self, address: tuple[str, int], on_event: Callable[[list[str]], None], on_reject: Callable[[str], None]
    ) -> None:
        super().__init__(name="lotus-controller-bin", daemon=True)
        self.address, self.on_event, self.on_reject = address, on_event, on_reject
        self.sock: socket.socket | None = None
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.commands: deque[tuple[int, bytes]] = deque()
        self.cmd_seq = 0
        self.rejected = 0

    @property
    def connected(self) -> bool:
        """True while a connection is up."""
        return self.sock is not None

    def command(self, fields: list[str]) -> None:
        """Queue a lamp command (the line protocol's fields: ``OPEN rid ms`` ...); dropped while disconnected."""
        if self.sock is None:
            return
        payload = BIN_LAMP[fields[0]] + int(fields[1]).to_bytes(4, "big")
        if fields[0] in ("RESHAKE", "VOID"):
            payload += BIN_LAMP_ARG[fields[2]]
        with self.lock:
            self.cmd_seq = self.cmd_seq % 255 + 1
            self.commands.append((self.cmd_seq, payload))

    def _reject(self, why: str) -> None:
        self.rejected += 1
        self.on_reject(why)

    def _frames(self, buf: bytearray) -> list[tuple[str, int, bytes]]:
        """Every valid frame complete in ``buf``, removed from it; a bad frame and a run of bytes outside any frame
        are each counted as one rejected frame."""
        frames: list[tuple[str, int, bytes]] = []
        while True:
            start = buf.find(bytes((STX,)))
            end = buf.find(bytes((ETX,)), start + 1) if start >= 0 else -1
            if start > 0 and buf[:start].strip():
                self._reject("bytes outside a frame")
            if not end > start >= 0:
                if start > 0:
                    del buf[:start]
                return frames
            frame = bin_unframe(bytes(buf[start + 1 : end]))
            del buf[: end + 1]
            if frame is None:
                self._reject("bad frame")
            else:
                frames.append(frame)

    def _reply(self, sock: socket.socket, buf: bytearray, deadline: float) -> list[tuple[str, int, bytes]]:
        """The frames of one reply: every frame complete once the first valid one came (a controller may answer a
        poll with several), or none by ``deadline``."""
        while True:
            frames = self._frames(buf)
            if frames:
                return frames
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            sock.settimeout(left)
            try:
                data = sock.recv(4096)
            except TimeoutError:
                return []
            if not data:
                raise ConnectionError("the controller closed the connection")
            buf += data

    def _event(self, payload: bytes) -> None:
        spec = BIN_EVENTS.get(payload[:2])
        if spec is None or len(payload) != 2 + spec[2]:
            self._reject("bad event")
            return
        dev, code, _n = spec
        args: list[str] = []
        if payload[:2] in (b"BF", b"SD"):
            first = payload[2]  # BF: the touch flag, a byte 0 or 1; SD: the item, a letter B, P or T
            if payload[:2] == b"BF":
                args = [{0: "0", 1: "1"}.get(first, "?")]
            else:
                args = [{"B": "BOWL", "P": "PLATE", "T": "TOKEN"}.get(chr(first), "?")]
            args.append("-" if payload[3] == 0xFF else str(payload[3]))
        elif payload[:2] == b"DP":
            args = [{"E": "EQUIP", "C": "CAP"}.get(chr(payload[2]), "?")]
        allowed = EVENT_ARGS[(dev, code)]  # the same fields, and values, as a text-protocol event
        if any(a not in ok for a, ok in zip(args, allowed, strict=True)):
            self._reject("bad event")
            return
        self.on_event([dev, code, *args])

    def _serve(self, sock: socket.socket) -> None:
        seq, ack, acked, buf = 0, 0, True, bytearray()
        while not self.stopping.is_set():
            began = time.monotonic()
            with self.lock:
                cmd = self.commands[0] if self.commands and acked else None
            if cmd is None:
                seq = seq % 255 + 1
                sock.sendall(bin_frame(b"P", seq, bytes((ack,))))
                acked = True
            else:
                sock.sendall(bin_frame(b"C", cmd[0], cmd[1]))
            reply = self._reply(sock, buf, began + 0.25)
            if reply and cmd is not None:
                with self.lock:
                    self.commands.popleft()
            for kind, rseq, payload in reply:
                if kind == "E" and rseq != ack:
                    ack, acked = rseq, False
                    self._event(payload)
            self.stopping.wait(max(0.0, began + 0.1 - time.monotonic()))

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                sock = socket.create_connection(self.address, timeout=1.0)
            except OSError:
                self.stopping.wait(0.2)
                continue
            self.sock = sock
            try:
                self._serve(sock)
            except OSError:
                pass
            finally:
                self.sock = None
                with self.lock:
                    self.commands.clear()
                with contextlib.suppress(OSError):
                    sock.close()

    def stop(self) -> None:
        """Close the connection and end the thread."""
        self.stopping.set()
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.join(timeout=2)


class Devices:
    """The table's two device connections: the controller (``;`` lines, or the polled binary protocol) and the
    camera (JSON lines)."""

    def __init__(
        self, table: Table, controller: tuple[str, int], camera: tuple[str, int] | None, protocol: str = "line"
    ) -> None:
        self.table = table
        self.out_seq = 0
        self.seen: deque[int] = deque(maxlen=256)
        self.cam_seen: deque[int] = deque(maxlen=256)
        self.polled = (
            PolledController(
                controller,
                lambda fields: table.report("controller", fields, "", time.monotonic()),
                lambda why: table.ignore("controller", why),
            )
            if protocol == "bin"
            else None
        )
        self.controller: DeviceLink | PolledController = self.polled or DeviceLink(
            "controller", controller, self._controller_line, controller_line(["X", "HB", "SRV"])
        )
        self.camera = (
            DeviceLink("camera", camera, self._camera_line, b'{"type":"hb"}\n') if camera is not None else None
        )
        table.lamp = self._lamp
        table.table_ready = lambda: self.controller.connected

    def start(self) -> None:
        self.controller.start()
        if self.camera is not None:
            self.camera.start()

    def stop(self) -> None:
        self.controller.stop()
        if self.camera is not None:
            self.camera.stop()

    def _lamp(self, fields: list[str]) -> None:
        if self.polled is not None:
            self.polled.command(fields)
            return
        self.out_seq = self.out_seq % 99999 + 1
        assert isinstance(self.controller, DeviceLink)
        self.controller.send(controller_line(["X", "CMD", str(self.out_seq), "LAMP", *fields]))

    def _controller_line(self, raw: bytes) -> None:
        fields = parse_controller_line(raw)
        if fields is None or len(fields) < 2 or fields[0] != "X":
            self.table._ignore("controller", "bad line")
            return
        if fields[1] in ("HB", "ACK"):
            return
        if fields[1] != "EVT" or len(fields) < 7 or not fields[2].isdigit():
            self.table._ignore("controller", "bad line")
            return
        seq, dev, code = int(fields[2]), fields[3], fields[4]
        args, tag = fields[5:-2], fields[-2]
        spec = EVENT_ARGS.get((dev, code))
        if spec is None or len(spec) != len(args) or any(a not in ok for a, ok in zip(args, spec, strict=True)):
            self.table._ignore("controller", "bad event")
            return
        assert isinstance(self.controller, DeviceLink)
        self.controller.send(controller_line(["X", "ACK", str(seq), "SRV"]))
        if seq in self.seen:
            return
        self.seen.append(seq)
        self.table.report("controller", [dev, code, *args], "" if tag == "-" else tag, time.monotonic())

    def _camera_line(self, raw: bytes) -> None:
        try:
            obj = json.loads(raw)
        except ValueError:
            self.table._ignore("camera", "bad json")
            return
        if not isinstance(obj, dict) or obj.get("type") == "hb":
            return
        seq, faces, conf = obj.get("seq"), obj.get("faces"), obj.get("confidence")
        kind = obj.get("type", "read")
        ok = (
            isinstance(seq, int)
            and kind in ("read", "spread")
            and isinstance(faces, str)
            and len(faces) == 4
            and set(faces) <= set("RWSU")
            and isinstance(conf, int | float)
        )
        if not ok:
            self.table._ignore("camera", "bad read")
            return
        assert self.camera is not None and isinstance(seq, int) and isinstance(faces, str)
        self.camera.send(json.dumps({"ack": seq}).encode() + b"\n")
        if seq in self.cam_seen:
            return
        self.cam_seen.append(seq)
        if float(conf) < self.table.cfg.min_confidence:  # type: ignore[arg-type]
            self.table._ignore("camera", "confidence below minimum")
            return
        tag = obj.get("round")
        overlap = "1" if obj.get("overlap") else "0"
        self.table.report("camera", [kind, faces, overlap], str(tag) if tag is not None else "", time.monotonic())


# ---------------------------------------------------------------------------------------------------------- HTTP


class Api(BaseHTTPRequestHandler):
    """The vendor's HTTP JSON API (README.md, "API")."""

    table: Table
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        size = int(self.headers.get("Content-Length") or 0)
        try:
            obj = json.loads(self.rfile.read(size) or b"{}")
        except ValueError:
            raise Refusal("L-BADREQ", "the body is not JSON", 400) from None
        if not isinstance(obj, dict):
            raise Refusal("L-BADREQ", "the body must be a JSON object", 400)
        return obj

    def _who(self) -> str:
        key = self.headers.get("X-Lotus-Key", "")
        if key and key == self.table.cfg.supervisor_key:
            return "@supervisor"
        player = self.table.player_for_key(key) if key else None
        if player is None:
            raise Refusal("L-KEY", "missing or unknown X-Lotus-Key", 401)
        return player

    def _supervisor(self) -> None:
        if self._who() != "@supervisor":
            raise Refusal("L-KEY", "the supervisor's key is needed", 403)

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        try:
            if method == "GET" and parts == ["api", "health"]:
                self._reply(200, {"ok": True, **self.table.health()})
            elif method == "POST" and parts == ["api", "bets"]:
                self._bet()
            elif method == "GET" and parts == ["api", "feed"]:
                self._supervisor()
                query = parse_qs(url.query)
                since = int(query.get("since", ["0"])[0])
                wait = min(5.0, float(query.get("wait", ["0"])[0]))
                self._reply(200, {"ok": True, "events": self.table.feed(since, wait)})
            elif method == "POST" and parts == ["api", "admin", "players"]:
                self._supervisor()
                players = self._body().get("players")
                if not isinstance(players, list):
                    raise Refusal("L-BADREQ", "players must be a list", 400)
                self.table.add_players(players)
                self._reply(201, {"ok": True})
            elif method == "POST" and parts[:3] == ["api", "admin", "round"] and len(parts) == 4:
                self._supervisor()
                self.table.supervise(parts[3])
                self._reply(200, {"ok": True})
            elif method == "GET" and parts[:3] == ["api", "admin", "players"] and len(parts) == 5:
                self._supervisor()
                name, what = parts[3], parts[4]
                balance = self.table.balance_of(name)
                if balance is None:
                    raise Refusal("L-NOPLAYER", f"no player {name!r}", 404)
                if what == "bets":
                    self._reply(200, {"ok": True, "bets": self.table.bets_of(name)})
                else:
                    self._reply(200, {"ok": True, "balance_cents": balance})
            else:
                raise Refusal("L-NOTFOUND", f"no {method} {url.path}", 404)
        except Refusal as exc:
            self._reply(exc.status, {"ok": False, "err": exc.code, "msg": exc.message})
        except (ValueError, KeyError) as exc:
            self._reply(400, {"ok": False, "err": "L-BADREQ", "msg": str(exc)})

    def _bet(self) -> None:
        player = self._who()
        if player == "@supervisor":
            raise Refusal("L-KEY", "the supervisor does not bet", 403)
        body = self._body()
        ref, pick, cents, rid = body.get("ref"), body.get("pick"), body.get("cents"), body.get("round")
        if not (isinstance(ref, str) and ref):
            raise Refusal("L-BADREQ", "ref must be non-empty text", 400)
        if not isinstance(pick, str):
            raise Refusal("L-TYPE", f"pick must be one of {', '.join(PICKS)}", 400)
        if not isinstance(cents, int) or isinstance(cents, bool):
            raise Refusal("L-BADREQ", "cents must be a whole number", 400)
        if rid is not None and not isinstance(rid, int):
            raise Refusal("L-BADREQ", "round must be a whole number", 400)
        ticket, replay = self.table.place(player, ref, pick, cents, rid)
        self._reply(200 if replay else 201, {"ok": True, "replay": replay, "ticket": ticket})

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")


# ---------------------------------------------------------------------------------------------------------- main


def _address(text: str, what: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit(f"lotus-xd: {what}: must be HOST:PORT; got {text!r}")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    """Run the table until SIGTERM/SIGINT; returns the exit status."""
    p = argparse.ArgumentParser(prog="lotus-xd", description="Lotus Tables' Xoc Dia server")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--db", default=":memory:", help="SQLite ledger (default: in memory, lost at exit)")
    p.add_argument("--controller", required=True, help="HOST:PORT of the table controller (dialled)")
    p.add_argument("--camera", default="", help="HOST:PORT of the result camera (dialled)")
    p.add_argument("--controller-protocol", choices=("line", "bin"), default="line", help="line: ; lines; bin: polled")
    p.add_argument("--supervisor-key", default="lotus-supervisor")
    p.add_argument("--betting-s", type=float, default=15.0)
    p.add_argument("--gap-s", type=float, default=3.0)
    p.add_argument("--no-auto-open", action="store_true", help="rounds open only on the supervisor's order")
    p.add_argument("--result-timeout-s", type=float, default=30.0)
    p.add_argument("--pause-timeout-s", type=float, default=60.0)
    p.add_argument("--reshake-cap", type=int, default=4)
    p.add_argument("--chip-cents", type=int, default=WHOLE_CENTS)
    p.add_argument("--min-cents", type=int, default=100)
    p.add_argument("--max-cents", type=int, default=1_000_000)
    p.add_argument("--min-confidence", type=float, default=0.9)
    a = p.parse_args(argv)
    if a.chip_cents <= 0 or a.chip_cents % WHOLE_CENTS:
        raise SystemExit(f"lotus-xd: --chip-cents: must be a multiple of {WHOLE_CENTS}; got {a.chip_cents}")
    if not 0.0 <= a.min_confidence <= 1.0:
        raise SystemExit(f"lotus-xd: --min-confidence: must be 0..1; got {a.min_confidence}")
    cfg = Config(
        betting_s=a.betting_s,
        gap_s=a.gap_s,
        auto_open=not a.no_auto_open,
        result_timeout_s=a.result_timeout_s,
        pause_timeout_s=a.pause_timeout_s,
        reshake_cap=a.reshake_cap,
        chip_cents=a.chip_cents,
        min_cents=a.min_cents,
        max_cents=a.max_cents,
        min_confidence=a.min_confidence,
        supervisor_key=a.supervisor_key,
    )
    table = Table(cfg, a.db)
    camera = _address(a.camera, "--camera") if a.camera else None
    devices = Devices(table, _address(a.controller, "--controller"), camera, a.controller_protocol)
    handler = type("BoundApi", (Api,), {"table": table})
    httpd = ThreadingHTTPServer((a.host, a.port), handler)
    httpd.daemon_threads = True
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    threading.Thread(target=httpd.serve_forever, name="lotus-http", daemon=True).start()
    devices.start()
    print(f"lotus-xd listening on http://{a.host}:{httpd.server_address[1]}", flush=True)
    while not stop.wait(0.02):
        table.tick()
    httpd.shutdown()
    devices.stop()
    with table.lock:
        table.db.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
