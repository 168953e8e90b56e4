"""Follow a feed file another process appends to (a certification run's pytest workers) into a :class:`Feed`."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from harness.feed import Feed, FeedEvent

POLL_S = 0.1


class FileTail:
    """Reads the whole lines appended to ``path`` every :data:`POLL_S` and adds them to ``feed`` (renumbered, times
    kept in order); lines that are not feed events are skipped. :meth:`stop` reads what is left, then returns."""

    def __init__(self, path: Path, feed: Feed) -> None:
        self.path = path
        self.feed = feed
        self.skipped = 0
        self._offset = 0
        self._rest = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="feed-tail", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self._read()

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            self._read()

    def _read(self) -> None:
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
            self._offset += len(data)
        if not data:
            return
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        for line in lines:
            if not line.strip():
                continue
            try:
                self.feed.add(FeedEvent.from_json(line.decode("utf-8")))
            except (ValueError, UnicodeDecodeError):
                self.skipped += 1
