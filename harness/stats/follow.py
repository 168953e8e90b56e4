"""Following a live outcome stream: the live monitor fed as rounds arrive, at a flat cost per round.

Two sources give the rounds that arrived since the last poll, each read once:

* :class:`OutcomeTail`, a growing OUTCOMES.csv file: only the bytes appended since the last poll are read
  (complete lines; a line still being written waits for its newline);
* :class:`ServerOutcomes`, a server's OUTCOMES.csv over HTTP (the reference server's ``GET /v1/outcomes.csv``):
  each poll asks for ``?after=N``, N the highest round number already read, and keeps only rows numbered above
  N, so a server that ignores ``after`` is still read from where the follower stopped, never from round 1 again.
  A round still ``in_progress`` (and any row after it) is read again on the next poll, once it has ended.

:class:`Follower` keeps the state between polls (a :class:`harness.stats.monitor.BiasMonitor`, the rounds read in
a compact :class:`OutcomeLog` for the closing audit, the alarms raised); :func:`follow` is its polling loop with
an idle stop, a round limit and a periodic status. Work per new round is one row parse and one O(1) monitor
update, however many rounds were read before.
"""

from __future__ import annotations

import csv
import time
import urllib.error
import urllib.request
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from harness.records import RoundStatus
from harness.stats.monitor import Alarm, BiasMonitor, MonitorDesign
from harness.stats.readers import OUTCOME_COLUMNS, OutcomeArrays, RecordError, RoundOutcome, outcome_row

#: The reference server's outcomes endpoint, appended to a URL given without a path.
OUTCOMES_PATH = "/v1/outcomes.csv"


class OutcomeSource(Protocol):
    """Where a follower reads rounds: each :meth:`poll` returns the rounds ended since the previous one."""

    @property
    def name(self) -> str:
        """The source as a user names it (a path or a URL)."""
        ...

    def poll(self) -> list[RoundOutcome]:
        """The rounds that ended since the last call, in round order, each returned once.

        Raises:
            SourceUnavailable: the source cannot be reached now (a later poll may succeed).
            RecordError: what was read is not OUTCOMES.csv (the message names the line and column).
        """
        ...


class SourceUnavailable(RecordError):
    """A source that cannot be read now: a file that cannot be opened, a server that does not answer or answers
    with an HTTP error. The message names the source and the cause."""


class OutcomeTail:
    """The rounds appended to an OUTCOMES.csv since the last :meth:`poll`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._pending = b""
        self._header: list[str] | None = None
        self._line = 0

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def offset(self) -> int:
        """Bytes of the file read so far; each poll reads from here to the end, never the earlier bytes again."""
        return self._offset

    def poll(self) -> list[RoundOutcome]:
        """Read the complete lines appended since the last call and return their rounds, in file order (a
        live server's ``in_progress`` rows are skipped).

        Raises:
            SourceUnavailable: the file cannot be read.
            RecordError: its header lacks a column of OUTCOMES.csv, or a row is bad (the message names the
                file, line and column).
        """
        try:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError as exc:
            raise SourceUnavailable(f"{self.path}: cannot read: {exc.strerror or exc}") from None
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
                self._header = _check_header(values, str(self.path))
                continue
            row = _row(values, self._header, f"{self.path}:{self._line}")
            if row is None:
                continue
            try:
                round_ = outcome_row(row, self._line)
            except RecordError as exc:
                raise RecordError(f"{self.path}: {exc}") from None
            if round_ is not None:
                out.append(round_)
        return out


class ServerOutcomes:
    """The rounds a server's OUTCOMES.csv gained since the last :meth:`poll`, by round number.

    ``url`` is the CSV's address, or a server's base URL (``http://host:port``), to which ``/v1/outcomes.csv``
    is added. ``token`` goes in ``Authorization: Bearer``. Round ids must be whole numbers that increase down
    the file (the reference server's rounds).
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0) -> None:
        """Raises:
        ValueError: not an http(s) URL, or ``timeout`` <= 0.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url}: not an http:// or https:// URL")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if parts.path in ("", "/"):
            parts = parts._replace(path=OUTCOMES_PATH)
        self._parts = parts
        self._query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "after"]
        self.url = urlunsplit(parts)
        self.token = token
        self.timeout = timeout
        self.last_round: int | None = None  # the highest round number read (every round up to it has ended)
        self.requests = 0
        self.bytes_read = 0

    @property
    def name(self) -> str:
        return self.url

    def request_url(self) -> str:
        """The address the next poll asks: the CSV's URL with ``after=`` the last round read (none at first)."""
        query = list(self._query)
        if self.last_round is not None:
            query.append(("after", str(self.last_round)))
        return urlunsplit(self._parts._replace(query=urlencode(query)))

    def poll(self) -> list[RoundOutcome]:
        """One GET; the ended rounds numbered above :attr:`last_round`, in order.

        Raises:
            SourceUnavailable: no connection, a timeout or an HTTP error status (named with the server's
                error message when it sent one).
            RecordError: the reply is not OUTCOMES.csv, a round id is not a whole number, or a row is bad
                (the message names the URL, line and column).
        """
        url = self.request_url()
        request = urllib.request.Request(url, headers={"Accept": "text/csv"})
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                body: bytes = reply.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read(500).decode("utf-8", "replace").strip()
            raise SourceUnavailable(
                f"{self.url}: HTTP {exc.code} {exc.reason}{': ' + detail if detail else ''}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SourceUnavailable(f"{self.url}: cannot read: {reason}") from None
        self.bytes_read += len(body)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordError(f"{self.url}: not UTF-8 text") from None
        reader = csv.reader(text.splitlines())
        header = _check_header(next(reader, []), self.url)
        out: list[RoundOutcome] = []
        for line, values in enumerate(reader, start=2):
            row = _row(values, header, f"{self.url}:{line}")
            if row is None:
                continue
            text_id = row["round_id"]
            if not text_id.isdigit():
                raise RecordError(
                    f"{self.url}: line {line}, column round_id: expected a whole number (following a server reads "
                    f"its rounds by number), got {text_id!r}"
                )
            number = int(text_id)
            if self.last_round is not None and number <= self.last_round:
                continue  # read before: a server that ignores after= sends every row
            if row["status"] == RoundStatus.IN_PROGRESS:
                break  # the current round, and anything after it, is read again once it has ended
            try:
                round_ = outcome_row(row, line)
            except RecordError as exc:
                raise RecordError(f"{self.url}: {exc}") from None
            if round_ is not None:
                out.append(round_)
            self.last_round = number
        return out


def _check_header(values: list[str], where: str) -> list[str]:
    header = [v.strip() for v in values]
    missing = [c for c in OUTCOME_COLUMNS if c not in header]
    if missing:
        raise RecordError(f"{where}: missing column(s) {', '.join(missing)}")
    return header


def _row(values: list[str], header: list[str], where: str) -> dict[str, str] | None:
    if not values or all(not v.strip() for v in values):
        return None
    if len(values) != len(header):
        raise RecordError(f"{where}: {len(values)} fields, header has {len(header)}")
    return {h: v.strip() for h, v in zip(header, values, strict=True)}


_STATUSES = tuple(RoundStatus)


class OutcomeLog:
    """Rounds read, kept compactly (a few bytes a round) for the audit that closes a follow."""

    def __init__(self) -> None:
        self._status = array("b")
        self._reds = array("b")
        self._patterns = array("b")
        self._reshakes = array("l")

    def __len__(self) -> int:
        return len(self._status)

    def append(self, r: RoundOutcome) -> None:
        """Keep one round."""
        self._status.append(_STATUSES.index(r.status))
        self._reds.append(-1 if r.reds is None else r.reds)
        pattern = -1 if not r.faces else sum(1 << j for j, face in enumerate(r.faces) if face == "R")
        self._patterns.append(pattern)
        self._reshakes.append(r.reshakes)

    def arrays(self) -> OutcomeArrays:
        """The rounds kept, as :func:`harness.stats.readers.to_arrays` gives them."""
        return OutcomeArrays(
            tuple(_STATUSES[i] for i in self._status),
            np.array(self._reds, dtype=np.int64),
            np.array(self._patterns, dtype=np.int64),
            np.array(self._reshakes, dtype=np.int64),
        )


@dataclass(frozen=True, slots=True)
class FollowAlarm:
    """An alarm raised while following. ``alarm``: the monitor's (its ``round`` counts settled rounds since the
    record started); ``rounds``: rounds read when it was raised; ``round_id``: the round that raised it;
    ``record``: 1 for the first record, one more after each alarm a follower kept going past."""

    alarm: Alarm
    rounds: int
    round_id: str
    record: int


@dataclass(frozen=True, slots=True)
class FollowStatus:
    """Where a follower stands: rounds read (``settled`` of them), the current record's settled rounds, its
    z = S/√n and the alarm boundary for |z| there (None before a settled round), its anytime p-value, the
    alarms so far and the last round read."""

    rounds: int
    settled: int
    record_settled: int
    z: float | None
    boundary: float | None
    p_value: float
    alarms: int
    last_round_id: str | None


class Follower:
    """One source fed to one live monitor, state kept between polls.

    ``keep_going``: after an alarm, start a new record (:meth:`BiasMonitor.reset`) and go on; each record has
    the whole false-alarm bound ``design.alpha`` of its own. Otherwise the first alarm ends the follow (:attr:`done`).
    ``max_rounds`` > 0: stop once that many rounds were read (rounds past it in the same poll are not used).
    """

    def __init__(
        self, source: OutcomeSource, design: MonitorDesign, keep_going: bool = False, max_rounds: int = 0
    ) -> None:
        """Raises:
        ValueError: ``max_rounds`` < 0.
        """
        if max_rounds < 0:
            raise ValueError(f"max_rounds must be >= 0, got {max_rounds}")
        self.source = source
        self.design = design
        self.keep_going = keep_going
        self.max_rounds = max_rounds
        self.monitor = BiasMonitor(design)
        self.log = OutcomeLog()
        self.alarms: list[FollowAlarm] = []
        self.settled = 0
        self.last_round_id: str | None = None

    @property
    def rounds(self) -> int:
        """Rounds read (settled, void and cancelled)."""
        return len(self.log)

    @property
    def done(self) -> bool:
        """True after an alarm (unless keeping going) or once ``max_rounds`` rounds were read."""
        if self.alarms and not self.keep_going:
            return True
        return 0 < self.max_rounds <= self.rounds

    def step(self) -> tuple[int, list[FollowAlarm]]:
        """Poll the source once and feed its new rounds to the monitor: the rounds used and the alarms raised.

        Raises:
            SourceUnavailable, RecordError: as the source's ``poll``.
        """
        raised: list[FollowAlarm] = []
        used = 0
        for r in self.source.poll():
            if self.done:
                break
            used += 1
            self.log.append(r)
            self.last_round_id = r.round_id
            if r.reds is None:
                continue
            self.settled += 1
            alarm = self.monitor.update(r.reds)
            if alarm is not None:
                raised.append(FollowAlarm(alarm, self.rounds, r.round_id, len(self.alarms) + 1))
                self.alarms.append(raised[-1])
                if self.keep_going:
                    self.monitor.reset()
        return used, raised

    def status(self) -> FollowStatus:
        """The current :class:`FollowStatus`."""
        m = self.monitor
        n = m.rounds
        return FollowStatus(
            self.rounds,
            self.settled,
            n,
            m.z,
            self.design.boundary(n) if n else None,
            m.p_value,
            len(self.alarms),
            self.last_round_id,
        )


@dataclass(frozen=True, slots=True)
class FollowResult:
    """What following saw: every round read (``rounds``), the settled ones, the first alarm if one was raised,
    every alarm (``alarms``), why it stopped (``stopped``: ``alarm``, ``idle`` or ``max_rounds``) and the rounds
    read (``log``)."""

    rounds: int
    settled: int
    alarm: Alarm | None
    alarms: tuple[FollowAlarm, ...] = ()
    stopped: str = ""
    log: OutcomeLog | None = None


def follow(
    path: Path | OutcomeSource,
    design: MonitorDesign,
    idle: float,
    poll: float = 0.2,
    on_rounds: Callable[[int, int], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    *,
    keep_going: bool = False,
    max_rounds: int = 0,
    on_alarm: Callable[[FollowAlarm], None] | None = None,
    status_every: float = 0.0,
    on_status: Callable[[FollowStatus], None] | None = None,
    on_unavailable: Callable[[SourceUnavailable], None] | None = None,
) -> FollowResult:
    """Watch ``path`` (a growing OUTCOMES.csv) or another :class:`OutcomeSource` as it grows, feeding each new
    settled round to the monitor, until an alarm (unless ``keep_going``), until ``max_rounds`` > 0 rounds were
    read, or until nothing new arrived for ``idle`` seconds (``idle`` <= 0: never). ``on_rounds(rounds,
    settled)`` is called after each poll that brought rounds, ``on_alarm`` with each alarm, ``on_status`` every
    ``status_every`` > 0 seconds. A source that cannot be read on the first poll raises; on a later poll it is
    passed to ``on_unavailable`` (when given) and tried again, the time counting as idle.

    Raises:
        SourceUnavailable: the first poll failed, or a later one with no ``on_unavailable``.
        RecordError: what was read is not OUTCOMES.csv.
        ValueError: ``poll`` <= 0, ``max_rounds`` < 0.
    """
    if poll <= 0:
        raise ValueError(f"poll must be > 0 seconds, got {poll}")
    source = OutcomeTail(path) if isinstance(path, Path) else path
    follower = Follower(source, design, keep_going, max_rounds)
    polls = 0
    last_growth = last_status = clock()
    while True:
        polls += 1
        try:
            used, raised = follower.step()
        except SourceUnavailable as exc:
            if polls == 1 or on_unavailable is None:
                raise
            on_unavailable(exc)
            used, raised = 0, []
        for alarm in raised:
            if on_alarm is not None:
                on_alarm(alarm)
        now = clock()
        if used:
            last_growth = now
            if on_rounds is not None:
                on_rounds(follower.rounds, follower.settled)
        if follower.done:
            stopped = "alarm" if follower.alarms and not keep_going else "max_rounds"
            return _result(follower, stopped)
        if idle > 0 and not used and now - last_growth >= idle:
            return _result(follower, "idle")
        if status_every > 0 and on_status is not None and now - last_status >= status_every:
            last_status = now
            on_status(follower.status())
        sleep(poll)


def _result(follower: Follower, stopped: str) -> FollowResult:
    first = follower.alarms[0].alarm if follower.alarms else None
    return FollowResult(follower.rounds, follower.settled, first, tuple(follower.alarms), stopped, follower.log)
