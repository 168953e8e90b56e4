"""Table reports the engine ignored, counted instead of logged: a noisy or hostile device line must not grow the
ledger, which holds money and round facts only.

Counts are kept per (device line, report kind, reason) for the life of the process; the last :data:`SAMPLE`
ignored reports are kept as evidence (time, line, kind, reason, round, faces). Both are in memory only and of
bounded size whatever a line sends (the keys are bounded by the configured lines, the report kinds and the
engine's reasons).
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Any

from gameserver.events import TableReport

SAMPLE = 32


class IgnoredReports:
    """The count of ignored reports and a bounded sample of the latest ones."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.sample: deque[dict[str, Any]] = deque(maxlen=SAMPLE)

    def add(self, at: float, report: TableReport, why: str, round_id: int | None) -> None:
        """Count one ignored report and keep it in the sample (the oldest one drops out)."""
        device, kind = report.device, str(report.kind)
        self.counts[(device, kind, why)] += 1
        self.sample.append(
            {"at": at, "device": device, "report": kind, "why": why, "round_id": round_id, "faces": report.faces}
        )

    def to_json(self) -> dict[str, Any]:
        """``counts``: device → report kind → reason → count; ``sample``: the latest ignored reports, oldest first."""
        counts: dict[str, dict[str, dict[str, int]]] = {}
        for (device, kind, why), n in sorted(self.counts.items()):
            counts.setdefault(device, {}).setdefault(kind, {})[why] = n
        return {"counts": counts, "sample": list(self.sample)}
