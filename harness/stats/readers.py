"""Readers for the two CSV formats the audit takes: OUTCOMES.csv (one row per round), BETS.csv (one per bet).

OUTCOMES.csv: ``round_id,status,faces,reds,reshakes,ended_at`` — status settled|void|cancelled (a live
server's ``in_progress`` row with empty faces, reds and ended_at is skipped); faces 4 chars of R/W (token 0
first), empty unless settled (may also be empty on a settled round when tokens are not identified); reds 0-4,
empty unless settled; reshakes a whole number >= 0; ended_at a number (seconds) or ISO-8601 time.

BETS.csv (bet record / game recall export): ``bet_id,round_id,player_id,placed_at,settled_at,bet_type,wagered,
result,returned,round_status,outcome,reds,balance_before,balance_after`` — result
win|lose|push|refund|pending; ``wagered``/``returned`` integer minor units; round_status
in_progress|settled|void|cancelled; outcome 4 chars R/W or empty. Extra columns are ignored; missing ones are
an error. Every problem names the line and the column.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from harness.errors import InputError
from harness.records import ROUND_END_STATUSES, BetResult, RoundStatus
from simulator.bets import BetType

_E = TypeVar("_E", bound=StrEnum)

OUTCOME_COLUMNS = ("round_id", "status", "faces", "reds", "reshakes", "ended_at")
BET_COLUMNS = (
    "bet_id",
    "round_id",
    "player_id",
    "placed_at",
    "settled_at",
    "bet_type",
    "wagered",
    "result",
    "returned",
    "round_status",
    "outcome",
    "reds",
    "balance_before",
    "balance_after",
)
ROUND_STATUSES = ROUND_END_STATUSES  # an OUTCOMES.csv status
BET_ROUND_STATUSES = tuple(RoundStatus)  # a BETS.csv round_status
BET_RESULTS = tuple(BetResult)


class RecordError(InputError):
    """A CSV file that cannot be read as the named format; the message names the line and column."""


@dataclass(frozen=True, slots=True)
class RoundOutcome:
    """One round of an outcome stream. ``faces``/``reds`` are ``None`` unless the round settled."""

    round_id: str
    status: RoundStatus
    faces: str | None
    reds: int | None
    reshakes: int


@dataclass(frozen=True, slots=True)
class BetRecord:
    bet_id: str
    round_id: str
    player_id: str
    bet_type: BetType
    wagered: int
    result: BetResult
    returned: int
    round_status: RoundStatus
    outcome: str | None
    reds: int | None


@dataclass(frozen=True, slots=True)
class OutcomeArrays:
    """An outcome stream as arrays, in round order. ``reds``/``patterns`` are -1 where unknown."""

    status: tuple[RoundStatus, ...]
    reds: npt.NDArray[np.int64]
    patterns: npt.NDArray[np.int64]
    reshakes: npt.NDArray[np.int64]

    @property
    def settled(self) -> npt.NDArray[np.bool_]:
        return self.reds >= 0

    @property
    def identified(self) -> bool:
        """True when every settled round carries its faces (tokens identified)."""
        settled = self.settled
        return bool(settled.any()) and bool(np.all(self.patterns[settled] >= 0))


def detect_format(path: Path) -> str:
    """``"outcomes"`` or ``"bets"`` from the header row.

    Raises:
        RecordError: an unreadable or empty file, or a header that matches neither format.
    """
    header = _header(path)
    if set(BET_COLUMNS) <= set(header):
        return "bets"
    if set(OUTCOME_COLUMNS) <= set(header):
        return "outcomes"
    raise RecordError(
        f"{path}: header matches neither OUTCOMES.csv ({','.join(OUTCOME_COLUMNS)}) "
        f"nor BETS.csv ({','.join(BET_COLUMNS)}); got {','.join(header)}"
    )


def read_outcomes(path: Path) -> list[RoundOutcome]:
    """Parse an OUTCOMES.csv file; rows of a round still ``in_progress`` (a live server's current round, with
    empty faces, reds and ended_at) are skipped.

    Raises:
        RecordError: naming the first bad line and column.
    """
    rounds = (outcome_row(row, line) for line, row in _rows(path, OUTCOME_COLUMNS))
    return [r for r in rounds if r is not None]


def outcome_row(row: dict[str, str], line: int) -> RoundOutcome | None:
    """One OUTCOMES.csv row (column name → stripped text; ``line`` for messages) as a :class:`RoundOutcome`, or
    None for a live server's ``in_progress`` row with empty faces, reds and ended_at.

    Raises:
        RecordError: naming the line, the column, what was expected and what was found.
    """
    if row["status"] == RoundStatus.IN_PROGRESS and not (row["faces"] or row["reds"] or row["ended_at"]):
        return None
    return _outcome_row(row, line)


def read_bets(path: Path) -> list[BetRecord]:
    """Parse a BETS.csv file. Raises :class:`RecordError` naming the first bad line and column."""
    return [_bet_row(row, line) for line, row in _rows(path, BET_COLUMNS)]


def rounds_from_bets(bets: Iterable[BetRecord]) -> list[RoundOutcome]:
    """One :class:`RoundOutcome` per round in the bet record, in order of first appearance.

    Rounds still in progress are left out. Re-shakes are not in a bet record: reported as 0.

    Raises:
        RecordError: two bets of one round that disagree on its status or outcome.
    """
    seen: dict[str, RoundOutcome] = {}
    for bet in bets:
        if bet.round_status == RoundStatus.IN_PROGRESS:
            continue
        faces = bet.outcome if bet.round_status == RoundStatus.SETTLED else None
        reds = bet.reds if bet.round_status == RoundStatus.SETTLED else None
        this = RoundOutcome(bet.round_id, bet.round_status, faces, reds, 0)
        known = seen.setdefault(bet.round_id, this)
        if known != this:
            raise RecordError(f"round {bet.round_id}: bet {bet.bet_id} disagrees with an earlier bet of the round")
    return list(seen.values())


def to_arrays(rounds: Sequence[RoundOutcome]) -> OutcomeArrays:
    """Convert rounds to :class:`OutcomeArrays` (pattern bit j set when token j shows red)."""
    reds = np.array([-1 if r.reds is None else r.reds for r in rounds], dtype=np.int64)
    patterns = np.array([_pattern(r.faces) for r in rounds], dtype=np.int64)
    reshakes = np.array([r.reshakes for r in rounds], dtype=np.int64)
    return OutcomeArrays(tuple(r.status for r in rounds), reds, patterns, reshakes)


def arrays_from_patterns(patterns: npt.NDArray[np.integer]) -> OutcomeArrays:
    """An all-settled :class:`OutcomeArrays` from token patterns (e.g. a seeded generator's output)."""
    pats = patterns.astype(np.int64)
    reds = np.bitwise_count(pats.astype(np.uint8)).astype(np.int64)
    return OutcomeArrays((RoundStatus.SETTLED,) * len(pats), reds, pats, np.zeros(len(pats), dtype=np.int64))


def _pattern(faces: str | None) -> int:
    if not faces:
        return -1
    return sum(1 << j for j, face in enumerate(faces) if face == "R")


def _header(path: Path) -> list[str]:
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            header = next(csv.reader(fh), None)
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not a UTF-8 text file") from None
    if not header:
        raise RecordError(f"{path}: empty file, expected a CSV header row")
    return [h.strip() for h in header]


def _rows(path: Path, columns: Sequence[str]) -> Iterable[tuple[int, dict[str, str]]]:
    header = _header(path)
    missing = [c for c in columns if c not in header]
    if missing:
        raise RecordError(f"{path}: missing column(s) {', '.join(missing)}")
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        next(reader)
        for line, values in enumerate(reader, start=2):
            if not values or all(not v.strip() for v in values):
                continue
            if len(values) != len(header):
                raise RecordError(f"{path}:{line}: {len(values)} fields, header has {len(header)}")
            yield line, {h: v.strip() for h, v in zip(header, values, strict=True)}


def _fail(line: int, column: str, value: str, expected: str) -> RecordError:
    return RecordError(f"line {line}, column {column}: expected {expected}, got {value!r}")


def _int(row: dict[str, str], column: str, line: int, low: int, high: int | None = None) -> int:
    text = row[column]
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        bounds = f"a whole number {low}..{high}" if high is not None else f"a whole number >= {low}"
        raise _fail(line, column, text, bounds)
    return value


def _choice(row: dict[str, str], column: str, line: int, allowed: Sequence[_E]) -> _E:
    """The member of ``allowed`` the column names. Raises RecordError naming the allowed words."""
    value = row[column]
    for member in allowed:
        if member == value:
            return member
    raise _fail(line, column, value, "one of " + "|".join(allowed))


def _faces(row: dict[str, str], column: str, line: int) -> str | None:
    value = row[column].upper()
    if not value:
        return None
    if len(value) != 4 or set(value) - {"R", "W"}:
        raise _fail(line, column, row[column], "4 characters of R/W (token 0 first) or empty")
    return value


def _time(row: dict[str, str], column: str, line: int) -> None:
    text = row[column]
    try:
        float(text)
    except ValueError:
        try:
            datetime.fromisoformat(text)
        except ValueError:
            raise _fail(line, column, text, "a number of seconds or an ISO-8601 time") from None


def _settled_outcome(row: dict[str, str], line: int, settled: bool, faces_col: str) -> tuple[str | None, int | None]:
    faces = _faces(row, faces_col, line)
    if not settled:
        if faces is not None or row["reds"]:
            raise _fail(
                line,
                "reds" if row["reds"] else faces_col,
                row["reds"] or row[faces_col],
                "empty unless settled",
            )
        return None, None
    reds = _int(row, "reds", line, 0, 4)
    if faces is not None and faces.count("R") != reds:
        raise _fail(line, "reds", row["reds"], f"{faces.count('R')} (the R count of {faces_col} {faces})")
    return faces, reds


def _outcome_row(row: dict[str, str], line: int) -> RoundOutcome:
    status = _choice(row, "status", line, ROUND_STATUSES)
    faces, reds = _settled_outcome(row, line, status == RoundStatus.SETTLED, "faces")
    _time(row, "ended_at", line)
    return RoundOutcome(row["round_id"], status, faces, reds, _int(row, "reshakes", line, 0))


def _bet_row(row: dict[str, str], line: int) -> BetRecord:
    try:
        bet_type = BetType(row["bet_type"])
    except ValueError:
        raise _fail(line, "bet_type", row["bet_type"], "one of " + "|".join(BetType)) from None
    round_status = _choice(row, "round_status", line, BET_ROUND_STATUSES)
    result = _choice(row, "result", line, BET_RESULTS)
    faces, reds = _settled_outcome(row, line, round_status == RoundStatus.SETTLED, "outcome")
    return BetRecord(
        row["bet_id"],
        row["round_id"],
        row["player_id"],
        bet_type,
        _int(row, "wagered", line, 1),
        result,
        _int(row, "returned", line, 0),
        round_status,
        faces,
        reds,
    )
