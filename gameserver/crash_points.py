"""Crash points inside a ledger write: a wrapper of the ledger's writing SQLite connection that dies, as a kill -9
would, just before a chosen statement of a chosen write.

A bench arms it (:meth:`CrashingConnection.arm`) before the write it wants to interrupt; the write's statements
(``BEGIN``, every ``execute``/``executemany``/``executescript`` and the ``COMMIT``) are counted from 1, and before
statement ``after + 1`` the wrapper raises :class:`ServerCrash`. ``ServerCrash`` is a ``BaseException``: the
ledger's own ``except Exception`` clean-up (``ROLLBACK``) never runs, just as no code runs after a kill -9, and the
open transaction is lost when the connection is closed (:meth:`CrashingConnection.crash`) exactly as SQLite loses
an uncommitted WAL transaction when the process dies. What was committed before the crash point stays.

``after = 0`` dies before the write's first statement; an ``after`` past the write's last statement never fires
(the write completes and the point is disarmed at its end by the bench, :meth:`disarm`).

The in-process bench wraps its ledger with it (``harness.bench.adapters.reference_inprocess``); the server process
arms it from its crash-point file (:class:`CrashFileLedger`, ``xocdia-server --crash-file``, docs/adapters.md).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gameserver.events import Event, EventKind
from gameserver.sqlite_ledger import SqliteLedger

#: The events whose ledger write a crash point interrupts: a round's end and a correction of it.
CRASH_WRITES = frozenset(
    {EventKind.ROUND_SETTLED, EventKind.ROUND_VOIDED, EventKind.ROUND_CANCELLED, EventKind.ROUND_CORRECTED}
)
#: The exit status of a server process that died at a crash point (as after SIGKILL: 128 + 9).
CRASH_EXIT = 137


def writes_end_of(events: Sequence[Event], round_id: int) -> bool:
    """Whether ``events`` hold the end (or a correction) of round ``round_id``: the write a crash point waits for."""
    return any(e.round_id == round_id and e.kind in CRASH_WRITES for e in events)


class ServerCrash(BaseException):
    """The server died at an armed crash point (a ``BaseException``, so no ``except Exception`` handler runs)."""

    def __init__(self, statement: int, sql: str) -> None:
        super().__init__(f"crash point: the server died before statement {statement} of the write ({sql[:60]!r})")
        self.statement = statement
        self.sql = sql


class CrashingConnection:
    """An ``sqlite3.Connection`` for one writer, with a crash point that can be armed for one write.

    Only the methods the ledger's writer uses are wrapped (``execute``, ``executemany``, ``executescript``,
    ``close``); every other attribute is the connection's own. Not thread-safe: it belongs to the one thread that
    writes, as the connection does.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._after: int | None = None
        self._count = 0
        self.crashed: ServerCrash | None = None  # the crash, once it happened

    # ------------------------------------------------------------------ the crash point
    def arm(self, after: int) -> None:
        """Die before statement ``after + 1`` counted from now (``after`` >= 0).

        Raises:
            ValueError: ``after`` is negative.
        """
        if after < 0:
            raise ValueError(f"crash point after {after} statements: expected 0 or more")
        self._after, self._count = after, 0

    def disarm(self) -> int:
        """Disarm the crash point; returns how many statements ran since :meth:`arm`."""
        count, self._after, self._count = self._count, None, 0
        return count

    @property
    def armed(self) -> bool:
        return self._after is not None

    def _statement(self, sql: str) -> None:
        if self.crashed is not None:
            raise self.crashed  # a dead server runs no statement
        if self._after is None:
            return
        if self._count >= self._after:
            self.crash(ServerCrash(self._count + 1, sql))
        self._count += 1

    def crash(self, crash: ServerCrash) -> None:
        """Die now: the open transaction is lost (the connection is closed without a commit). Raises ``crash``."""
        self.crashed = crash
        self._after = None
        try:
            self._db.close()  # an open transaction is rolled back, as a dead process's WAL frames are never committed
        finally:
            raise crash

    # ------------------------------------------------------------------ the connection's writing methods
    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self._statement(sql)
        return self._db.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        self._statement(sql)
        return self._db.executemany(sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        self._statement(script)
        return self._db.executescript(script)

    def close(self) -> None:
        self._db.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


class CrashFileLedger(SqliteLedger):
    """The server process's ledger with crash points armed from a file (``xocdia-server --crash-file PATH``).

    Before each write, the file, when present, is read: JSON ``{"round": R, "after": K}``. When the write holds the
    end (or a correction) of round R, the file is removed and a crash point is armed for this write: before its
    statement K + 1 the process exits at once with status :data:`CRASH_EXIT` (``os._exit``: no clean-up, no commit,
    as a kill -9). A bench writes the file (atomically: write another name, then rename) while the server runs. A
    file that is not such JSON is left in place and arms nothing.
    """

    def __init__(self, path: str | Path, crash_file: str | Path) -> None:
        self.crash_file = Path(crash_file)
        self._writer: CrashingConnection | None = None
        super().__init__(path, wrap_writer=self._wrap)

    def _wrap(self, db: sqlite3.Connection) -> CrashingConnection:
        self._writer = CrashingConnection(db)
        return self._writer

    def append(self, events: Sequence[Event]) -> None:
        writer = self._writer
        after = self._armed_for(events)
        if after is not None and writer is not None:
            writer.arm(after)
        try:
            super().append(events)
        except ServerCrash:
            os._exit(CRASH_EXIT)
        finally:
            if writer is not None and writer.armed:
                writer.disarm()

    def _armed_for(self, events: Sequence[Event]) -> int | None:
        """The statements to let run before the crash, when the file arms one for this write (it is removed)."""
        try:
            spec = json.loads(self.crash_file.read_text(encoding="utf-8"))
            round_id, after = int(spec["round"]), int(spec["after"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if after < 0 or not writes_end_of(events, round_id):
            return None
        self.crash_file.unlink(missing_ok=True)
        return after
