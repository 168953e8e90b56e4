"""The event log: every ground-truth fact of a run, recorded compactly and read back as typed, frozen events.

The model emits each fact as a *record*: a plain tuple ``(EventClass, t, field, ...)`` holding the arguments of
the class's constructor, in field order (``(RoundOpened, t, round, deadline)``). Appending a record is far cheaper
than building the frozen event (docs/performance.md), and most facts of a long run are only ever counted or
written out, never read one by one.

One field may be recorded in a cheaper form: a :class:`~simulator.events.BetSent` record may hold, in place of the
``bet_id``, the player's bet number ``n`` (an ``int``), from which the id ``f"{player}-{n}"`` is formed when the
event is read or written: a run summarised without reading its bets never formats them, and the log is smaller
by the strings.

Guarantees:

- Reading the log (iteration, :attr:`EventLog.events`) gives the typed, frozen events of :mod:`simulator.events`,
  in emission order. Each is built the first time anything reads it, once, and kept: the same log always yields the
  same objects, and a record with the wrong fields raises ``TypeError`` naming its class at that first read.
- :meth:`EventLog.write_jsonl` writes straight from the records, byte for byte what the events' ``to_dict`` gives.
- :meth:`EventLog.counts` and :meth:`EventLog.of` let a reader that only counts most kinds
  (:func:`simulator.summary.summarize`) build just the events it reads field by field.
- Positions are absolute: :attr:`EventLog.end` counts every event ever logged, and :meth:`EventLog.since` reads
  from a position, also after :meth:`EventLog.forget` or :meth:`EventLog.take` left the events before it out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from operator import itemgetter
from typing import IO, Any

from simulator.events import BetSent, Event, event_from_dict, field_names
from simulator.gcpause import gc_paused
from simulator.jsonlines import event_line

#: ``(EventClass, t, field, ...)``: the constructor arguments of one event, in field order (a ``BetSent`` record may
#: hold the player's bet number ``n`` in place of its ``bet_id``, which is then ``f"{player}-{n}"``).
Record = tuple[Any, ...]


def record_of(event: Event) -> Record:
    """The record of a typed event: its class, then its field values in declaration order."""
    return (type(event), *(getattr(event, name) for name in field_names(type(event))))


def _args(record: Record) -> tuple[Any, ...]:
    """The constructor arguments a record stands for (forming a bet's id from its number)."""
    if record[0] is BetSent and len(record) > 4 and type(record[4]) is int:
        _, t, round_no, player, number, *rest = record
        return (t, round_no, player, f"{player}-{number}", *rest)
    return record[1:]


def _build(record: Record) -> Event:
    cls: type[Event] = record[0]
    try:
        return cls(*_args(record))
    except TypeError as exc:
        raise TypeError(f"bad {cls.__name__} record {record[1:]!r}: {exc}") from exc


class EventLog:
    """An append-only log of events in the order they happened, kept as :data:`Record` tuples (:attr:`records`).

    Reading it (iteration, :attr:`events`) gives the typed, frozen events in emission order, each built the first
    time anything reads it and kept; :meth:`write_jsonl` writes straight from the records; :meth:`counts` and
    :meth:`of` let a reader build only the kinds it reads field by field.
    """

    __slots__ = ("_base", "_events", "records")

    def __init__(self) -> None:
        self.records: list[Record] = []  # the model appends here (``Table.emit``)
        self._events: list[Event] = []  # typed events built so far: those of records[: len(_events)]
        self._base = 0  # events forgotten or taken before records[0] (``forget``, ``take``)

    @property
    def end(self) -> int:
        """The absolute position after the last event: every event ever logged, the forgotten ones included."""
        return self._base + len(self.records)

    def since(self, position: int) -> list[Event]:
        """The typed events from absolute ``position`` (``end`` of an earlier read) to the end.

        Raises:
            ValueError: ``position`` is before what the log still holds (it was forgotten) or after its end.
        """
        if not self._base <= position <= self.end:
            raise ValueError(f"event log position {position} is not held: it holds {self._base} to {self.end}")
        return self.events[position - self._base :]

    def forget(self, position: int) -> None:
        """Forget the events before absolute ``position`` (clamped to :attr:`end`), for a reader that judged them:
        :attr:`events` and iteration then start there; :attr:`records` stays the same list object (the table
        appends to it directly). A position already forgotten does nothing."""
        drop = min(position, self.end) - self._base
        if drop <= 0:
            return
        del self.records[:drop]
        del self._events[:drop]  # the typed events are those of the first records: fewer than ``drop`` leaves none
        self._base += drop

    def append(self, event: Event) -> None:
        """Append a typed event (as its record; the event itself is what later reads return)."""
        if len(self._events) == len(self.records):
            self._events.append(event)
        self.records.append(record_of(event))

    def extend(self, events: Iterable[Event]) -> None:
        """Append typed events, in order."""
        for event in events:
            self.append(event)

    def add(self, record: Record) -> Event:
        """Append ``record`` and return its typed event, built now.

        Raises:
            TypeError: the record's fields do not fit its class (nothing is appended).
        """
        event = _build(record)
        self.events  # noqa: B018 - bring the typed events up to date first
        self.records.append(record)
        self._events.append(event)
        return event

    @property
    def events(self) -> list[Event]:
        """Every event, typed, in order: built on first read and kept. The list is the log's own; do not modify it.

        Raises:
            TypeError: a record whose fields do not fit its class.
        """
        built = len(self._events)
        if built < len(self.records):
            with gc_paused():  # the events stay alive: collecting while building them would only re-scan the log
                self._events.extend([_build(r) for r in islice(self.records, built, None)])
        return self._events

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def of(self, *classes: type[Event]) -> list[Event]:
        """The events of exactly these types, in order (building only those, if the log was not read before)."""
        wanted = frozenset(classes)
        if len(self._events) == len(self.records):
            return [e for e in self._events if type(e) in wanted]
        with gc_paused():
            return [_build(r) for r in self.records if r[0] in wanted]

    def take(self) -> EventLog:
        """Hand over everything logged so far as a log of its own and forget it here: this log then holds only what
        is logged after (the same ``records`` list object, which the table appends to directly). A reader that
        writes or counts each such batch as it comes keeps memory flat in the run's length."""
        taken = EventLog()
        taken.records = self.records[:]
        taken._events = self._events[:]
        taken._base = self._base
        self._base += len(self.records)
        self.records.clear()
        self._events.clear()
        return taken

    def counts(self) -> Counter[type[Event]]:
        """How many events of each type the log holds (building none)."""
        return Counter(map(itemgetter(0), self.records))

    def write_jsonl(self, out: IO[str], first_seq: int = 0) -> None:
        """Write one JSON object per line, with ``seq`` (0-based position, counted from ``first_seq``: a log
        :meth:`take` handed over continues the numbering of the batches before it) first. Same log → same bytes:
        each line is what ``json.dumps`` (ASCII, no whitespace) writes of ``{"seq": seq, **event.to_dict()}`` (see
        :func:`jsonl_line`)."""
        records = self.records
        for start in range(0, len(records), _WRITE_BATCH):  # one write per batch of lines: fewer calls into ``out``
            batch = records[start : start + _WRITE_BATCH]  # a slice: islice would walk from the start every time
            lines = [jsonl_line(seq, record) + "\n" for seq, record in enumerate(batch, first_seq + start)]
            out.write("".join(lines))


_WRITE_BATCH = 4096  # lines per write of write_jsonl


def jsonl_line(seq: int, record: Record) -> str:
    """The JSON Lines line (without its newline) of ``record`` at position ``seq``: byte for byte what the JSON
    encoder (ASCII, no whitespace) writes of ``{"seq": seq, **event.to_dict()}``
    (:func:`simulator.jsonlines.event_line`).

    Raises:
        ValueError: the record does not hold one value per field of its class.
        TypeError: a time field that is not a number.
    """
    return event_line(seq, record[0], _args(record))


def read_jsonl(lines: Iterable[str]) -> list[Event]:
    """Parse JSON Lines written by :meth:`EventLog.write_jsonl`. Blank lines are skipped.

    Raises:
        ValueError: a line that is not JSON or not a known event, naming the line number.
    """
    out: list[Event] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(event_from_dict(_json_value(line)))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"line {number}: {exc}") from exc
    return out


# the C scanner that json.loads runs, without its per-call wrappers (an attribute typeshed does not declare)
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"


def _json_value(line: str) -> Any:
    """``json.loads(line)``: a line that is one JSON value between JSON whitespace is scanned directly; any other
    line goes through ``json.loads`` itself, so a bad line raises exactly its error."""
    text = line.strip(_JSON_SPACE)
    try:
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError):
        return json.loads(line)
    return value if end == len(text) else json.loads(line)
