"""Summaries of a run's ground truth: outcome distribution, incidents and round durations.

Pure functions of an event sequence (or of an :class:`~simulator.eventlog.EventLog`, read from its records), so
the same log always gives the same summary.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simulator.eventlog import EventLog
from simulator.events import (
    BetSent,
    BowlLifted,
    Dropped,
    Event,
    LinkDown,
    Paused,
    PauseReason,
    Reshake,
    Resumed,
    Revealed,
    RoundEnded,
    RoundOpened,
    RoundStatus,
    ShakeSkipped,
)

#: Fair tokens: P(k reds) = C(4, k) / 16.
FAIR_RED_PROBABILITIES = (1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16)

INCIDENT_KEYS = (
    "overlaps",
    "drops_bowl",
    "drops_plate",
    "drops_token",
    "standing_tokens",
    "reshakes",
    "touches",
    "forgotten_shakes",
    "early_lifts",
    "pauses",
    "resumed",
    "reshake_cap_exceeded",
    "voided_rounds",
    "cancelled_rounds",
    "bets_sent",
    "disconnects",
)


@dataclass(frozen=True, slots=True)
class Summary:
    rounds: int
    reds_histogram: tuple[int, int, int, int, int]  # settled rounds only; index = number of reds
    voided: int  # void (SH-4a/4b/5) plus cancelled (ERR-3): rounds whose bets are returned
    incidents: dict[str, int]
    chi_square: float
    chi_square_p: float
    duration_percentiles: dict[str, float]  # seconds from opening to the table's verdict

    def to_dict(self, seed: int, profile: str) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "seed": seed,
            "profile": profile,
            "reds_histogram": list(self.reds_histogram),
            "voided": self.voided,
            "incidents": dict(self.incidents),
            "chi_square": round(self.chi_square, 6),
            "chi_square_p": round(self.chi_square_p, 6),
            "round_duration_s": {k: round(v, 6) for k, v in self.duration_percentiles.items()},
        }


def chi_square_fair(histogram: tuple[int, ...]) -> tuple[float, float]:
    """Pearson's chi-square of a red-count histogram against 1-4-6-4-1/16, and its p-value (df = 4).

    For 4 degrees of freedom the survival function is exact in closed form: ``exp(-x/2) * (1 + x/2)``.
    Returns ``(0.0, 1.0)`` for an empty histogram.
    """
    n = sum(histogram)
    if n == 0:
        return 0.0, 1.0
    stat = sum((obs - n * p) ** 2 / (n * p) for obs, p in zip(histogram, FAIR_RED_PROBABILITIES, strict=True))
    return stat, math.exp(-stat / 2) * (1 + stat / 2)


def percentiles(values: Sequence[float], points: tuple[int, ...] = (50, 90, 99)) -> dict[str, float]:
    """Nearest-rank percentiles (``p50`` ...) plus ``max``; empty input gives an empty mapping. Sorted by numpy
    (the same order of the same doubles, without a Python float per value of a float array)."""
    if not values:
        return {}
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    out = {f"p{p}": float(ordered[max(math.ceil(p / 100 * len(ordered)) - 1, 0)]) for p in points}
    out["max"] = float(ordered[-1])
    return out


#: The kinds whose fields the summary reads; every other kind is only counted (from an :class:`EventLog`, without
#: building its typed events).
_DETAILED = (RoundOpened, RoundEnded, Revealed, Dropped, BowlLifted, Paused)


def summarize(events: Iterable[Event] | EventLog) -> Summary:
    """Summarise a run from its events (any order of whole rounds; rounds not ended are ignored)."""
    builder = SummaryBuilder()
    builder.add(events)
    return builder.summary()


class SummaryBuilder:
    """A :func:`summarize` fed in batches, in the order they were logged (e.g. each :meth:`EventLog.take` of a
    running table): the same summary as of the whole log at once, holding only the counts, the openings of rounds
    not ended yet and one float per ended round (its duration) between batches."""

    def __init__(self) -> None:
        self._kinds: Counter[type[Event]] = Counter()
        self._hist = [0, 0, 0, 0, 0]
        self._counts = dict.fromkeys(INCIDENT_KEYS, 0)
        self._opened: dict[int, float] = {}
        self._durations = array("d")
        self.rounds = 0
        self._voided = 0

    def add(self, events: Iterable[Event] | EventLog) -> None:
        """Count the next batch of the run's events."""
        if isinstance(events, EventLog):
            self._kinds.update(events.counts())
            self._detail(events.of(*_DETAILED))
        else:
            listed = list(events)
            self._kinds.update(type(e) for e in listed)
            self._detail([e for e in listed if isinstance(e, _DETAILED)])

    def summary(self) -> Summary:
        """The summary of every batch added so far."""
        counts, kinds, hist = dict(self._counts), self._kinds, self._hist
        counts["bets_sent"] = kinds[BetSent]
        counts["reshakes"] = kinds[Reshake]
        counts["forgotten_shakes"] = kinds[ShakeSkipped]
        counts["resumed"] = kinds[Resumed]
        counts["disconnects"] = kinds[LinkDown]
        histogram = (hist[0], hist[1], hist[2], hist[3], hist[4])
        stat, p = chi_square_fair(histogram)
        return Summary(self.rounds, histogram, self._voided, counts, stat, p, percentiles(self._durations))

    def _detail(self, detailed: Sequence[Event]) -> None:
        hist, counts, opened, durations = self._hist, self._counts, self._opened, self._durations
        rounds = voided = 0
        for e in detailed:
            if isinstance(e, RoundOpened):
                opened.setdefault(e.round, e.t)
            elif isinstance(e, RoundEnded):
                rounds += 1
                if e.status is RoundStatus.SETTLED and e.reds is not None:
                    hist[e.reds] += 1
                else:
                    voided += 1
                    counts["voided_rounds" if e.status is RoundStatus.VOID else "cancelled_rounds"] += 1
                if e.round in opened:
                    durations.append(e.t - opened.pop(e.round))
            elif isinstance(e, Revealed):
                counts["overlaps"] += e.overlap
                counts["standing_tokens"] += "S" in e.faces
            elif isinstance(e, Dropped):
                counts[f"drops_{e.item.value}"] += 1
            elif isinstance(e, BowlLifted):
                counts["touches"] += e.touched
                counts["early_lifts"] += e.early
            elif isinstance(e, Paused):
                counts["pauses"] += 1
                counts["reshake_cap_exceeded"] += e.reason is PauseReason.RESHAKE_CAP
        self.rounds += rounds
        self._voided += voided
