"""Follow a feed file another process appends to (a certification run's pytest workers) into a :class:`Feed`."""

from __future__ import annotations

from pathlib import Path

from harness.feed import Feed, FeedEvent, LineFollower

POLL_S = 0.1


class FileTail:
    """Reads the whole lines appended to ``path`` every :data:`POLL_S` and adds them to ``feed`` (renumbered, times
    kept in order); lines that are not feed events are skipped (counted in :attr:`skipped`). :meth:`stop` reads
    what is left, then returns."""

    def __init__(self, path: Path, feed: Feed) -> None:
        self.path = path
        self.feed = feed
        self.skipped = 0
        self._follower = LineFollower(path, self._add, POLL_S, "feed-tail")

    def start(self) -> None:
        self._follower.start()

    def stop(self) -> None:
        self._follower.stop(join_s=5.0)

    def _add(self, lines: list[bytes]) -> None:
        for line in lines:
            try:
                self.feed.add(FeedEvent.from_json(line.decode("utf-8")))
            except (ValueError, UnicodeDecodeError):
                self.skipped += 1
