"""The SQLite ledger's read connections: one per live reading thread, every one closed by close(), and those of
ended threads closed when a thread opens its own (an API served by a thread pool reads from many threads, and a
pool whose threads come and go would otherwise keep every connection it ever opened, with its page cache and file
descriptors, for ever)."""

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
    alone = _open_files(db)
    done = threading.Event()
    read = threading.Barrier(5)  # the four threads and this one, each past its first read

    def read_and_stay() -> None:
        ledger.rounds()
        read.wait(10)
        done.wait(10)

    threads = [threading.Thread(target=read_and_stay) for _ in range(4)]
    for t in threads:
        t.start()
    ledger.rounds()  # this thread's own reader too, opened while the four are alive
    read.wait(10)
    assert _open_files(db) >= alone + 5
    done.set()
    for t in threads:
        t.join()
    ledger.close()
    assert _open_files(db) == 0


def test_the_connections_of_ended_threads_are_closed_when_a_thread_opens_its_own(tmp_path: Path) -> None:
    db = tmp_path / "ledger.sqlite"
    ledger = SqliteLedger(db)
    for _ in range(2):
        t = threading.Thread(target=ledger.rounds)
        t.start()
        t.join()
    two = _open_files(db)  # the writer, and the reader of the second thread (the first's closed when it opened)
    for _ in range(30):
        t = threading.Thread(target=ledger.rounds)
        t.start()
        t.join()
    assert _open_files(db) == two
    ledger.close()
    assert _open_files(db) == 0
