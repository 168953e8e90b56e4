"""Outcome streams from the simulator's ground-truth event log (``xocdia-hil simulate --events FILE.jsonl``).

Only ``round_ended`` events are used: one :class:`~harness.stats.readers.RoundOutcome` per round, with the
table's verdict (settled, void or cancelled), the faces and reds of a settled round and its re-shake count.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.records import RoundStatus
from harness.stats.readers import RecordError, RoundOutcome
from simulator.eventlog import read_jsonl
from simulator.events import Event, RoundEnded


def is_event_log(path: Path) -> bool:
    """True when the first non-blank character of ``path`` opens a JSON object (JSON Lines)."""
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    return line.lstrip().startswith("{")
    except (OSError, UnicodeDecodeError):
        return False
    return False


def rounds_from_events(events: Iterable[Event]) -> list[RoundOutcome]:
    """One outcome per ``RoundEnded`` event, in log order."""
    return [
        RoundOutcome(str(e.round), RoundStatus(e.status), e.faces, e.reds, e.reshakes)
        for e in events
        if isinstance(e, RoundEnded)
    ]


def read_event_log(path: Path) -> list[RoundOutcome]:
    """Read a JSON Lines event log and keep its rounds.

    Raises:
        RecordError: a line that is not a known event (names the line), or a log without any ended round.
    """
    try:
        with path.open(encoding="utf-8") as fh:
            events = read_jsonl(fh)
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot read: {exc}") from None
    except ValueError as exc:
        raise RecordError(f"{path}: {exc}") from None
    rounds = rounds_from_events(events)
    if not rounds:
        raise RecordError(f"{path}: no round_ended events in the log")
    return rounds
