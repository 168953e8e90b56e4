"""``--record FILE`` and ``--live [HOST:]PORT`` for the commands that run a bench: the feed, its JSON Lines file
and the live page, opened and closed around the command's work.

A command adds the options with :func:`add_feed_options` and wraps its work in :class:`FeedSession`; the session's
``feed`` is None when neither option was given (the bench then runs without a tap, exactly as before). A feed
taken is watched by the bias monitor (:class:`~harness.live.monitor.FeedMonitor`), whose alarm is a ``note`` on it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Self, TextIO

from harness.errors import InputError
from harness.feed import Feed, FeedKind, JsonlSink
from harness.live.server import LiveServer, parse_address

if TYPE_CHECKING:
    from harness.live.monitor import FeedMonitor


class RecordError(InputError):
    """``--record FILE`` names a file that cannot be written."""


def add_feed_options(parser: argparse.ArgumentParser, pace: bool = True) -> None:
    """``--record FILE``, ``--live [HOST:]PORT``, ``--hold`` and (``pace``) ``--pace X``."""
    parser.add_argument(
        "--record", metavar="FILE", default=None, help="write the bench event feed as JSON Lines (the replay format)"
    )
    parser.add_argument(
        "--live",
        metavar="[HOST:]PORT",
        default=None,
        help="serve the live page on HOST:PORT (host default 127.0.0.1; port 0 picks one) and print its URL",
    )
    parser.add_argument(
        "--hold",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --live: keep serving after the end until Ctrl-C (default: yes on an interactive terminal)",
    )
    if pace:
        parser.add_argument(
            "--pace",
            type=float,
            default=0.0,
            metavar="X",
            help="with --live on a virtual-time bench: at most X bench seconds per wall second (results unchanged)",
        )


class FeedSession:
    """The feed of one command: a :class:`~harness.feed.Feed` written to ``record`` and served on ``live``.

    Enter it before building rigs; leave it when the work is done (it publishes ``end``, flushes and closes the
    file, and stops the server, after waiting for Ctrl-C when ``hold``). Nothing is opened when both are None.
    ``hold`` None (``--hold`` not given either way) holds when standard input and ``out`` are both terminals; a page
    not held says, as the command ends, that it stops with it and how to keep or replay it. ``rounds``: the rounds
    the command plays (the page's "round N of M"; 0 when not known).

    Raises (on entering):
        RecordError: the record file cannot be created.
        LiveAddressError: the live address does not parse or cannot be listened on.
    """

    def __init__(
        self,
        record: str | None,
        live: str | None,
        title: str = "",
        *,
        hold: bool | None = False,
        out: TextIO | None = None,
        rounds: int = 0,
    ) -> None:
        self.record = Path(record) if record else None
        self.address = parse_address(live) if live else None
        self.title = title
        self.out = out if out is not None else sys.stderr
        self.hold = hold if hold is not None else (live is not None and _interactive(self.out))
        self.rounds = rounds
        self.feed: Feed | None = Feed(keep=live is not None) if (record or live) else None
        self.server: LiveServer | None = None
        self._file: IO[str] | None = None
        self._sink: JsonlSink | None = None
        self.monitor: FeedMonitor | None = None

    def __enter__(self) -> Self:
        if self.feed is None:
            return self
        if self.record is not None:
            try:
                self._file = self.record.open("w", encoding="utf-8")
            except OSError as exc:
                raise RecordError(f"--record {self.record}: cannot write ({exc.strerror})") from None
            self._sink = JsonlSink(self._file)
            self.feed.writers.append(self._sink)
        if self.address is not None:
            self.server = LiveServer(self.feed, *self.address, mode="live", title=self.title, rounds=self.rounds)
            try:
                url = self.server.start()
            except BaseException:
                self._close_file()
                raise
            print(f"live page: {url}", file=self.out, flush=True)
        from harness.live.monitor import FeedMonitor  # the statistics (scipy) only where a feed is taken

        self.monitor = FeedMonitor(self.feed).attach()  # the last writer: its alarm follows the round that raised it
        return self

    def end(self, summary: str) -> None:
        """Publish the command's ``end`` event (once per command)."""
        if self.feed is not None:
            self.feed.publish_last(FeedKind.END, summary=summary)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self.server is not None and self.hold and exc_type is None:
                if self.feed is not None:
                    self.feed.close()
                print(f"live page: {self.server.url} (serving until Ctrl-C)", file=self.out, flush=True)
                with contextlib.suppress(KeyboardInterrupt):
                    threading.Event().wait()
            elif self.server is not None:
                print(
                    f"live page: {self.server.url} stops with the command; {self._keep_it()}", file=self.out, flush=True
                )
        finally:
            if self.server is not None:
                self.server.stop()
            self._close_file()
            if self.record is not None and self._sink is not None:
                print(f"feed: {self.record}", file=self.out, flush=True)

    def _keep_it(self) -> str:
        """How to see the page after the command: replay the record, or the options that keep or record it."""
        if self.record is not None:
            return f"replay it with: xocdia-hil replay {self.record} --live 127.0.0.1:0"
        return "add --hold to keep it up, or --record FILE to replay it later (xocdia-hil replay FILE --live PORT)"

    def _close_file(self) -> None:
        if self._sink is not None:
            self._sink.close()
        if self._file is not None:
            self._file.close()
            self._file = None


def _interactive(out: TextIO) -> bool:
    """Standard input and ``out`` are both terminals (a person is there to press Ctrl-C)."""
    try:
        return sys.stdin is not None and sys.stdin.isatty() and out.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
