"""The hash-chained event feed of an evidence pack (``feed.jsonl``).

Each line wraps one bench feed event (:mod:`harness.feed`) with its place in the chain::

    {"n":0,"prev":"sha256:…","event":{"seq":0,"t":0.0,"kind":"note","data":{…}}}

``n`` counts the lines from 0; ``prev`` is the SHA-256 of the previous line's bytes (UTF-8, without its newline),
and for line 0 the chain's genesis, :func:`genesis` of the report id of the run that wrote it, so a feed cannot be
moved into another report. The digest of the last line is the chain's head, recorded in the signed manifest: a
changed, removed, reordered or added line breaks the chain at that line or leaves the head unmatched.

One writer appends the lines: :class:`ChainWriter`, in the ``certify`` process. pytest-xdist workers append their
events to a plain feed file (``--feed``, :mod:`harness.cert.feed`: one ``write`` of one whole line each, so lines
never mix), and a :class:`ChainFollower` thread reads the whole lines appended to it every
:data:`POLL_S` and chains each in the order it was written; each batch is flushed to disk as it is chained.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from harness.evidence.digest import sha256_bytes
from harness.feed import LineFollower

POLL_S = 0.1
FEED_FILE = "feed.jsonl"


def genesis(report_id: str) -> str:
    """The ``prev`` of line 0 of the feed of report ``report_id``."""
    return sha256_bytes(f"xocdia-hil evidence feed {report_id}".encode())


def chain_line(n: int, prev: str, event: str) -> str:
    """Line ``n`` of a chain (no newline): ``event`` (one feed event's JSON line) embedded as it is when it is a
    JSON object, else as a JSON string (a line a worker wrote that is not a feed event is kept, not dropped)."""
    try:
        is_object = isinstance(json.loads(event), dict)
    except ValueError:
        is_object = False
    body = event if is_object else json.dumps(event, ensure_ascii=False)
    return '{"n":' + str(n) + ',"prev":"' + prev + '","event":' + body + "}"


class ChainWriter:
    """Appends chained lines to ``path`` (created; it must not exist yet) and keeps the chain's head. Safe to call
    from several threads; each :meth:`append` is written and flushed before it returns.

    Raises:
        FileExistsError: ``path`` exists already (a chain is never continued by another writer).
    """

    def __init__(self, path: Path, first_prev: str) -> None:
        self.path = path
        self.genesis = first_prev
        self.head = first_prev
        self.count = 0
        self._lock = threading.Lock()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)

    def append(self, event: str) -> None:
        """Chain one event line (its JSON text, no newline) and write it."""
        self.extend([event])

    def extend(self, events: list[str]) -> None:
        """Chain the event lines in order and write them with one ``write`` call, then flush them to disk."""
        if not events:
            return
        with self._lock:
            out = []
            for event in events:
                line = chain_line(self.count, self.head, event)
                out.append(line + "\n")
                self.head = sha256_bytes(line.encode("utf-8"))
                self.count += 1
            os.write(self._fd, "".join(out).encode("utf-8"))
            with contextlib.suppress(OSError):
                os.fsync(self._fd)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class ChainFollower:
    """Follows ``source`` (a feed file other processes append whole lines to) into ``writer``: every
    :data:`POLL_S` the whole lines appended since are chained. :meth:`stop` chains what is left (a last line
    without its newline too) and returns."""

    def __init__(self, source: Path, writer: ChainWriter) -> None:
        self.source = source
        self.writer = writer
        self._follower = LineFollower(source, self._chain, POLL_S, "evidence-chain")

    def start(self) -> None:
        self._follower.start()

    def stop(self) -> None:
        rest = self._follower.stop(join_s=10.0)
        if rest.strip():
            self.writer.append(rest.decode("utf-8", errors="replace"))

    def _chain(self, lines: list[bytes]) -> None:
        self.writer.extend([line.decode("utf-8", errors="replace") for line in lines])


@dataclass(frozen=True)
class ChainCheck:
    """What :func:`check_chain` found: the lines read, the head they end at, and the first problem (None: the
    chain is whole from the genesis to that head)."""

    lines: int
    head: str
    problem: str | None


def check_chain(path: Path, first_prev: str, head: str | None = None, name: str = FEED_FILE) -> ChainCheck:
    """Recompute the chain of the file at ``path`` from ``first_prev`` (and, given ``head``, check that it ends
    there: the manifest's head).

    The problem names the first line (1-based, as an editor counts) that does not fit: one that is not a chain
    line, numbered out of order, or whose own bytes no longer give the ``prev`` of the line after it. A line whose
    ``prev`` does not match while its own digest still matches the next line's ``prev`` points at the line before
    it (that line was changed, or lines after it were removed). Never raises for bad content; an unreadable file is
    a problem too.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return ChainCheck(0, first_prev, f"{name}: cannot be read ({exc.strerror})")
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    else:
        return ChainCheck(len(lines), first_prev, f"{name} line {len(lines)}: does not end with a newline")
    digests = [sha256_bytes(line) for line in lines]
    prev = first_prev
    for index, line in enumerate(lines):
        number = index + 1
        try:
            obj = json.loads(line)
        except ValueError:
            return ChainCheck(len(lines), prev, f"{name} line {number}: not a chain line (not JSON)")
        if not isinstance(obj, dict) or "event" not in obj or not isinstance(obj.get("prev"), str):
            return ChainCheck(len(lines), prev, f"{name} line {number}: not a chain line (n, prev, event)")
        if obj.get("n") != index:
            return ChainCheck(len(lines), prev, f"{name} line {number}: numbered {obj.get('n')!r}, expected {index}")
        if obj["prev"] != prev:
            last = index + 1 == len(lines)
            own_fits = digests[index] == head if last else _prev_of(lines[index + 1]) == digests[index]
            if index > 0 and own_fits:
                return ChainCheck(
                    len(lines),
                    prev,
                    f"{name} line {number - 1}: its digest does not match the next line's prev "
                    "(the line was changed, or a line after it removed)",
                )
            return ChainCheck(len(lines), prev, f"{name} line {number}: prev does not match the line before it")
        prev = digests[index]
    if head is not None and prev != head:
        where = f"line {len(lines)}: the last line" if lines else "holds no line and"
        return ChainCheck(
            len(lines),
            prev,
            f"{name} {where} does not end at the chain head in the manifest (the line was changed, or lines "
            "after it removed)",
        )
    return ChainCheck(len(lines), prev, None)


def _prev_of(line: bytes) -> object:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj.get("prev") if isinstance(obj, dict) else None
