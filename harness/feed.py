"""The bench event feed: one ordered stream of what happens on a bench, for the live page and for replay.

A :class:`Feed` collects :class:`FeedEvent` s in the order they are published and numbers them (``seq`` 0, 1, ...).
Each event has a feed time ``t`` (seconds on the feed's own timeline: bench seconds, continued across the rigs one
command builds), a ``kind`` (:class:`FeedKind`) and a JSON-ready ``data`` mapping. Written as JSON Lines, one event
a line, keys in a fixed order, that file is the replay format::

    {"seq":12,"t":3.2,"kind":"table","data":{"event":"bowl_lifted","round":1,"touched":true,"token":2}}

The feed only observes: publishing never touches the bench, its clock or its random streams, so a run with a feed
ends exactly as the same run without one. It does no I/O of its own beyond the sinks it is given. An event is
encoded once, when it is published, and only when someone takes its line (a line sink, or a feed that keeps its
events for the live page); nobody listening, publishing only counts.

Kinds and their data (every field optional unless named):

- ``bench``: a rig was built (``bench``, ``seed``, ``lines``: line name -> device roles, ``players``, ``label``).
- ``round``: the table's view of a round (``round``: the server's id or the table's number, ``state``: opened,
  closed, ended; ``status``, ``clause``, ``faces`` at the end; ``deadline``: betting's end in feed seconds).
- ``table``: a ground-truth event of the model (``event``: the simulator's kind, then its fields); the round's
  opening, close and end are ``round`` events instead, and the crowd's seats and planned bets are left out.
- ``frame``: a device frame (``line``, ``device``, ``dir``: tx device -> server, rx server -> device, ``msg``
  the decoded message, ``raw`` the line's last bytes in that direction, ``error`` for a bad or refused frame,
  ``lamp`` the lamp's new state for a lamp command: OPEN, CLOSE, RESHAKE, PAUSE, RESUME, VOID; ``forged`` for a frame
  the harness made: ``frame`` put on the line as if device ``device`` sent it, ``reply`` put in another device's reply
  on a polled bus, ``noise`` a noise frame, ``queued`` a report queued on the device's own end).
- ``bet``: a bet and its reply (``player``, ``bet``, ``stake``, ``accepted``, ``code``, ``round``, ``bet_id``).
- ``balance``: the balances of the players who bet in a round, once it ended (``round``, ``balances``: player ->
  minor units).
- ``server``: a round event the server published (``round``, ``event``, ``clause``, ``faces``, ``reason``).
- ``fault``: a fault applied, healed or skipped, or an incident (``op``, ``detail``).
- ``note``: something the harness did (``who``, ``what``, ``detail``); ``who: monitor``, ``what: alarm``: the bias
  monitor's alarm on the rounds so far (:mod:`harness.live.monitor`).
- ``verdict``: the oracle on one round (``round``, ``ok``, ``expected``, ``differences``) or, with ``final``
  true, on the whole run (``summary``, ``ok``, ``differences``).
- ``end``: the command finished (``summary``).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

FEED_FORMAT = 1
#: How deeply the JSON a reader of feeds, traces and manifests accepts may nest arrays and objects.
MAX_JSON_DEPTH = 64
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=str, ensure_ascii=False)


def _chunker() -> Callable[[Any, int], Iterable[str]]:
    """One compact JSON encoder made once (``json.dumps`` with options makes a new one a call), as a function of
    (object, 0) giving the text's pieces: the C encoder without the circular-reference check (feed data are plain
    trees), else the standard one."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return lambda obj, _level: (_ENCODER.encode(obj),)
    chunks: Callable[[Any, int], Iterable[str]] = make(
        None, str, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
    return chunks


_CHUNKS = _chunker()


class FeedKind(StrEnum):
    BENCH = "bench"
    ROUND = "round"
    TABLE = "table"
    FRAME = "frame"
    BET = "bet"
    BALANCE = "balance"
    SERVER = "server"
    FAULT = "fault"
    NOTE = "note"
    VERDICT = "verdict"
    END = "end"


KINDS = frozenset(k.value for k in FeedKind)
# The fixed part of a line after its time: the kind, then the data's key (``"seq"`` and ``"t"`` come first).
_KIND_PART = {k: f',"kind":"{k.value}","data":' for k in FeedKind}


def encode_line(seq: int, t: float, kind: FeedKind, data: Mapping[str, Any]) -> str:
    """One event as its JSON line (no newline): ``seq``, ``t``, ``kind``, ``data``, in that order, compact; ``t`` as
    given (the feed rounds it to the µs), data values that are not JSON-ready written with ``str``."""
    return '{"seq":' + str(seq) + ',"t":' + repr(t) + _KIND_PART[kind] + "".join(_CHUNKS(data, 0)) + "}"


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One event of the feed: its number, feed time (s), kind and JSON-ready data."""

    seq: int
    t: float
    kind: FeedKind
    data: Mapping[str, Any]

    def to_json(self) -> str:
        """One JSON line (no newline): ``seq``, ``t`` (µs precision), ``kind``, ``data``, in that order."""
        return encode_line(self.seq, round(self.t, 6), self.kind, self.data)

    @classmethod
    def from_json(cls, line: str) -> FeedEvent:
        """Parse one line of a feed file.

        Raises:
            ValueError: not a feed event (bad JSON, a missing or mistyped field, an unknown kind).
        """
        obj = loads_shallow(line)
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        seq, t, kind, data = obj.get("seq"), obj.get("t"), obj.get("kind"), obj.get("data", {})
        if not isinstance(seq, int) or isinstance(seq, bool):
            raise ValueError(f"seq must be a whole number, got {seq!r}")
        if not isinstance(t, int | float) or isinstance(t, bool):
            raise ValueError(f"t must be a number, got {t!r}")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(sorted(KINDS))}; got {kind!r}")
        if not isinstance(data, dict):
            raise ValueError("data must be an object")
        return cls(seq, float(t), FeedKind(kind), data)


Sink = Callable[[FeedEvent], None]
LineSink = Callable[[str], None]


class Feed:
    """An ordered, append-only stream of events, safe to read from other threads while published.

    Publishing numbers an event, times it (``offset`` added, never earlier than the last one, rounded to the µs),
    encodes it once as its JSON line when anyone takes lines (a line sink in :attr:`writers`, or ``keep``) and hands
    that line to each line sink and, as a :class:`FeedEvent`, to each event sink in :attr:`sinks`. With ``keep``
    (the default) the lines are kept in :attr:`lines` (line ``n`` is event ``n``); readers on other threads take
    :meth:`lines_since` (what the live page streams) or :meth:`since` (the events, parsed back from their lines:
    what a reader of the file would get).
    """

    def __init__(self, *, keep: bool = True) -> None:
        self.lines: list[str] = []
        self.sinks: list[Sink] = []
        self.writers: list[LineSink] = []
        self.keep = keep
        self.offset = 0.0
        self.last_t = 0.0
        self.closed = False
        self._lock = threading.Lock()
        self._seq = 0

    @property
    def events(self) -> list[FeedEvent]:
        """Every kept event (parsed from the kept lines: a copy)."""
        return self.since(0)

    def publish(self, kind: FeedKind, t: float, **data: Any) -> None:
        """Publish one event at feed time ``offset + t`` (never earlier than the last one). Data values must be
        JSON-ready (others are written with ``str``)."""
        self._append(kind, self.offset + t, data)

    def publish_last(self, kind: FeedKind, **data: Any) -> None:
        """:meth:`publish` at the time of the last event (for what concludes the events before it)."""
        self._append(kind, self.last_t, data)

    def add(self, event: FeedEvent) -> None:
        """Append an event read from elsewhere (a file another process writes), renumbered in this feed's order."""
        self._append(event.kind, event.t, event.data)

    def _append(self, kind: FeedKind, at: float, data: Mapping[str, Any]) -> None:
        keep, writers, sinks = self.keep, self.writers, self.sinks
        with self._lock:
            at = round(at, 6)
            if at < self.last_t:
                at = self.last_t
            seq = self._seq
            self._seq = seq + 1
            self.last_t = at
            if not (keep or writers):
                line = ""
            else:
                line = encode_line(seq, at, kind, data)
                if keep:
                    self.lines.append(line)
        for writer in writers:
            writer(line)
        if sinks:
            event = FeedEvent(seq, at, kind, data)
            for sink in sinks:
                sink(event)

    def continue_from(self, gap_s: float = 1.0) -> None:
        """Start a new bench timeline (a new rig whose clock restarts at 0) ``gap_s`` after the last event."""
        with self._lock:
            self.offset = self.last_t + gap_s if self._seq else 0.0

    def lines_since(self, first: int) -> list[str]:
        """The kept events' JSON lines from number ``first`` on (a copy; empty when none yet)."""
        with self._lock:
            return self.lines[first:]

    def since(self, first: int) -> list[FeedEvent]:
        """The kept events from number ``first`` on (a copy; empty when none yet)."""
        return [FeedEvent.from_json(line) for line in self.lines_since(first)]

    @property
    def count(self) -> int:
        """Events published so far."""
        return self._seq

    def close(self) -> None:
        """Mark the feed finished (readers stop waiting for more). Sinks are the caller's to close."""
        self.closed = True


class JsonlSink:
    """A line sink (:attr:`Feed.writers`) that writes each line, with its newline, to ``out``: gathered, and
    written ``flush_every`` lines at a time (then flushed). The stream stays the caller's: :meth:`close` writes
    what is gathered and flushes, never closes it."""

    def __init__(self, out: IO[str], flush_every: int = 256) -> None:
        self.out = out
        self.flush_every = flush_every
        self._lines: list[str] = []

    def __call__(self, line: str) -> None:
        lines = self._lines
        lines.append(line)
        if len(lines) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Write the gathered lines and flush the stream."""
        if self._lines:
            self.out.write("\n".join(self._lines) + "\n")
            self._lines.clear()
        self.out.flush()

    def close(self) -> None:
        self.flush()


class LineFollower:
    """Follows a file other processes append whole lines to (a certification run's pytest workers, one ``write`` of
    one line each): a daemon thread reads what was appended every ``poll_s`` seconds and hands the complete,
    non-blank lines (bytes, without their newline) to ``on_lines``, in the order they were written. A missing file
    is read as empty until it appears. :meth:`stop` reads once more, after the thread ended, and returns the
    unterminated rest (``b""`` when the file ended with a newline); ``on_lines`` is never called after it."""

    def __init__(self, path: Path, on_lines: Callable[[list[bytes]], None], poll_s: float, name: str) -> None:
        self.path = path
        self.on_lines = on_lines
        self.poll_s = poll_s
        self._offset = 0
        self._rest = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, join_s: float = 10.0) -> bytes:
        self._stop.set()
        self._thread.join(timeout=join_s)
        self._read()
        rest, self._rest = self._rest, b""
        return rest

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            self._read()

    def _read(self) -> None:
        data = b""
        with contextlib.suppress(FileNotFoundError), self.path.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
            self._offset += len(data)
        if not data:
            return
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        whole = [line for line in lines if line.strip()]
        if whole:
            self.on_lines(whole)


def loads_shallow(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)`` for input from a file: arrays and objects nested at most ``max_depth`` deep.

    Raises:
        ValueError: not JSON (the decoder's reason) or nested deeper than ``max_depth`` (checked before parsing, so
            no recursion limit is ever reached).
    """
    if text.count("[") + text.count("{") > max_depth:
        depth = 0
        for token in _JSON_TOKEN.finditer(text):
            mark = token.group()
            if mark in "[{":
                depth += 1
                if depth > max_depth:
                    raise ValueError(f"JSON nested more than {max_depth} arrays/objects deep")
            elif mark in "]}":
                depth -= 1
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError(f"JSON nested more than {max_depth} arrays/objects deep") from None


def read_feed(lines: Iterable[str], source: str = "feed") -> list[FeedEvent]:
    """Parse a feed file's lines (blank lines skipped).

    Raises:
        ValueError: a line that is not a feed event, naming ``source``, the line number and what is wrong.
    """
    out: list[FeedEvent] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(FeedEvent.from_json(line))
        except ValueError as exc:
            raise ValueError(f"{source} line {number}: {exc}") from None
    return out
