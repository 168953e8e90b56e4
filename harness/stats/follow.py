"""Following a growing OUTCOMES.csv: the live monitor fed as rounds arrive, at a flat cost per round.

:class:`OutcomeTail` reads only what was appended since the last poll (complete lines; a line still being
written waits for its newline), parses each row once and hands back the new rounds. :func:`follow` feeds their
red counts to a :class:`harness.stats.monitor.BiasMonitor` and stops at the first alarm, or when the file has
not grown for ``idle`` seconds. Work per round is one row parse and one O(1) monitor update, however long the
file already is.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.stats.monitor import Alarm, BiasMonitor, MonitorDesign
from harness.stats.readers import OUTCOME_COLUMNS, RecordError, RoundOutcome, outcome_row


class OutcomeTail:
    """The rounds appended to an OUTCOMES.csv since the last :meth:`poll`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._pending = b""
        self._header: list[str] | None = None
        self._line = 0

    @property
    def offset(self) -> int:
        """Bytes of the file read so far; each poll reads from here to the end, never the earlier bytes again."""
        return self._offset

    def poll(self) -> list[RoundOutcome]:
        """Read the complete lines appended since the last call and return their rounds, in file order (a
        live server's ``in_progress`` rows are skipped).

        Raises:
            RecordError: the file cannot be read, its header lacks a column of OUTCOMES.csv, or a row is bad
                (the message names the file, line and column).
        """
        try:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError as exc:
            raise RecordError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        self._offset += len(data)
        data = self._pending + data
        cut = data.rfind(b"\n") + 1
        self._pending = data[cut:]
        out: list[RoundOutcome] = []
        try:
            text = data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            raise RecordError(f"{self.path}: not a UTF-8 text file") from None
        for values in csv.reader(text.splitlines()):
            self._line += 1
            if self._header is None:
                self._header = [v.strip() for v in values]
                missing = [c for c in OUTCOME_COLUMNS if c not in self._header]
                if missing:
                    raise RecordError(f"{self.path}: missing column(s) {', '.join(missing)}")
                continue
            if not values or all(not v.strip() for v in values):
                continue
            if len(values) != len(self._header):
                raise RecordError(f"{self.path}:{self._line}: {len(values)} fields, header has {len(self._header)}")
            row = {h: v.strip() for h, v in zip(self._header, values, strict=True)}
            try:
                round_ = outcome_row(row, self._line)
            except RecordError as exc:
                raise RecordError(f"{self.path}: {exc}") from None
            if round_ is not None:
                out.append(round_)
        return out


@dataclass(frozen=True, slots=True)
class FollowResult:
    """What following saw: every round read (``rounds``), the settled ones, and the alarm if one was raised."""

    rounds: int
    settled: int
    alarm: Alarm | None


def follow(
    path: Path,
    design: MonitorDesign,
    idle: float,
    poll: float = 0.2,
    on_rounds: Callable[[int, int], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> FollowResult:
    """Watch ``path`` as it grows, feeding each new settled round to the monitor, until an alarm or until the
    file has not grown for ``idle`` seconds (``idle`` <= 0: only an alarm stops it). ``on_rounds(rounds,
    settled)`` is called after each poll that brought new rounds.

    Raises:
        RecordError: as :meth:`OutcomeTail.poll`.
        ValueError: ``poll`` <= 0.
    """
    if poll <= 0:
        raise ValueError(f"poll must be > 0 seconds, got {poll}")
    tail = OutcomeTail(path)
    monitor = BiasMonitor(design)
    rounds = 0
    last_growth = clock()
    while True:
        new = tail.poll()
        if new:
            last_growth = clock()
            for r in new:
                rounds += 1
                if monitor.update(r.reds) is not None:
                    return FollowResult(rounds, monitor.rounds, monitor.alarm)
            if on_rounds is not None:
                on_rounds(rounds, monitor.rounds)
        elif idle > 0 and clock() - last_growth >= idle:
            return FollowResult(rounds, monitor.rounds, None)
        sleep(poll)
