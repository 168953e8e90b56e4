"""The SQLite ledger's read connections: one per reading thread, every one closed by close() (an API served by a
thread pool reads from many threads; a connection left open keeps the database's file descriptors for ever)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from gameserver.sqlite_ledger import SqliteLedger


def _open_files(path: Path) -> int:
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if str(path) in os.path.realpath(fd) if fd.exists())


def test_close_closes_the_read_connection_of_every_thread(tmp_path: Path) -> None:
    db = tmp_path / "ledger.sqlite"
    ledger = SqliteLedger(db)
    threads = [threading.Thread(target=ledger.rounds) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ledger.rounds()  # this thread's own reader too
    assert _open_files(db) >= 5
    ledger.close()
    assert _open_files(db) == 0
