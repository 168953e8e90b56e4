"""The audit of a recorded outcome stream: fairness tests, the live monitor and, for bets, measured RTP.

Sources: OUTCOMES.csv, BETS.csv (several are merged) or the simulator's JSON Lines event log. A bet record
also gets measured RTP beside theoretical and a settlement check against the harness paytable.

Verdict: the audit fails when no fairness test is applicable (too few rounds: inconclusive), when
Holm-corrected fairness testing rejects, when the monitor alarms, or when a bet's ``returned`` disagrees with
the harness paytable. Measured RTP outside its 99 % interval is reported, not failed: with eleven lines at 99
% one such line is expected in about one audit in ten of a fair game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from harness.judge import paytable
from harness.records import DECIDED_RESULTS, REFUNDED_STATUSES, BetResult, RoundStatus
from harness.stats import plots
from harness.stats.event_log import is_event_log, read_event_log
from harness.stats.exact import bet_math
from harness.stats.fairness import FairnessReport, fairness_report
from harness.stats.measured import RtpLine, measured_rtp
from harness.stats.monitor import Alarm, BiasMonitor, Look
from harness.stats.readers import (
    BetRecord,
    OutcomeArrays,
    RecordError,
    detect_format,
    read_bets,
    read_outcomes,
    rounds_from_bets,
    to_arrays,
)
from simulator.bets import BetType

NOTIONAL_STAKE = 100
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AuditResult:
    source: Path
    kind: str
    fairness: FairnessReport
    alarm: Alarm | None
    looks: tuple[Look, ...]
    rtp: tuple[RtpLine, ...] = ()
    mismatches: tuple[str, ...] = ()  # bet ids whose ``returned`` disagrees with the paytable
    plots: tuple[Path, ...] = field(default=())

    @property
    def passed(self) -> bool:
        """Every check passed and at least one fairness test could be run (an empty stream shows nothing)."""
        f = self.fairness
        return f.conclusive and f.passed and self.alarm is None and not self.mismatches

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (exact RTPs as decimal strings)."""
        f = self.fairness
        return {
            "source": str(self.source),
            "format": self.kind,
            "passed": self.passed,
            "conclusive": f.conclusive,
            "rounds": f.rounds,
            "settled": f.settled,
            "void_or_cancelled": f.voided,
            "below_certification_minimum": f.below_certification_minimum,
            "alpha": f.alpha,
            "correction": "holm",
            "tests": [
                {
                    "name": t.name,
                    "statistic": t.statistic,
                    "df": t.df,
                    "p_value": t.p_value,
                    "threshold": t.threshold,
                    "rejected": t.rejected,
                    "note": t.note,
                }
                for t in f.tests
            ],
            "monitor": None
            if self.alarm is None
            else {
                "alarm_at_round": self.alarm.round,
                "z": self.alarm.z,
                "direction": self.alarm.direction,
                "p_red_estimate": self.alarm.p_red_estimate,
            },
            "rtp": [_rtp_dict(line) for line in self.rtp],
            "settlement_mismatches": list(self.mismatches),
            "plots": [str(p) for p in self.plots],
        }


def decimal(value: Fraction, places: int = 6) -> str:
    """A fraction as a decimal string rounded half-up to ``places`` (exact for terminating fractions)."""
    scaled = value * 10**places
    whole = int(scaled + Fraction(1, 2)) if scaled >= 0 else -int(-scaled + Fraction(1, 2))
    sign = "-" if whole < 0 else ""
    digits = str(abs(whole)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")


def _rtp_dict(line: RtpLine) -> dict[str, Any]:
    band = line.interval
    return {
        "bet": line.bet.value if line.bet else "all",
        "bets": line.bets,
        "wagered": line.wagered,
        "returned": line.returned,
        "rtp": None if line.rtp is None else decimal(line.rtp),
        "theoretical": decimal(line.theoretical),
        "confidence": line.confidence,
        "interval": None if band is None else [round(band[0], 6), round(band[1], 6)],
        "consistent": line.consistent,
        "refunded_bets": line.refunded_bets,
        "refunded": line.refunded,
        "pending_bets": line.pending_bets,
    }


def settlement_mismatches(bets: list[BetRecord]) -> tuple[str, ...]:
    """Bet ids whose ``returned``/``result`` disagree with the paytable (refunds must return the stake)."""
    bad: list[str] = []
    for b in bets:
        if b.round_status in REFUNDED_STATUSES:
            ok = b.result == BetResult.REFUND and b.returned == b.wagered
        elif b.round_status == RoundStatus.SETTLED and b.reds is not None:
            try:
                want = paytable.returned(b.bet_type, b.reds, b.wagered)
            except ValueError:
                ok = False
            else:
                ok = b.returned == want and b.result == paytable.outcome(b.bet_type, b.reds)
        else:
            ok = b.result == BetResult.PENDING
        if not ok:
            bad.append(b.bet_id)
    return tuple(bad)


def audit_file(path: Path, plot_dir: Path | None = None) -> AuditResult:
    """:func:`audit_files` of one file."""
    return audit_files([path], plot_dir)


def audit_files(paths: Sequence[Path], plot_dir: Path | None = None) -> AuditResult:
    """Read ``paths`` (one format, taken from the headers; rows in file order, files in the order given), run
    every check, and write plots to ``plot_dir`` when given. Several BETS.csv files (e.g. one per player) are
    merged; a round that appears in several must agree everywhere.

    Raises:
        harness.stats.readers.RecordError: a file that cannot be read, files of different formats, or
            disagreeing copies of a round (the message names the file, line and column).
    """
    if not paths:
        raise RecordError("no files to audit")
    kinds = {path: "events" if is_event_log(path) else detect_format(path) for path in paths}
    kind = kinds[paths[0]]
    mixed = [str(p) for p, k in kinds.items() if k != kind]
    if mixed:
        raise RecordError(f"{', '.join(mixed)}: not the format of {paths[0]} ({kind}); audit one format at a time")
    bets: list[BetRecord] = []
    if kind in ("outcomes", "events"):
        reader = read_outcomes if kind == "outcomes" else read_event_log
        stream = to_arrays([r for path in paths for r in _named(path, reader)])
    else:
        bets = [b for path in paths for b in _named(path, read_bets)]
        stream = to_arrays(rounds_from_bets(bets))
    report = fairness_report(stream)
    monitor = BiasMonitor()
    monitor.feed(None if r < 0 else int(r) for r in stream.reds)
    lines = tuple(measured_rtp(bets)) if bets else ()
    mismatches = settlement_mismatches(bets)
    made = _plots(plot_dir, stream, bets, monitor.looks) if plot_dir is not None else ()
    source = paths[0] if len(paths) == 1 else Path(", ".join(str(p) for p in paths))
    return AuditResult(source, kind, report, monitor.alarm, tuple(monitor.looks), lines, mismatches, made)


def _named(path: Path, reader: Callable[[Path], list[T]]) -> list[T]:
    try:
        return reader(path)
    except RecordError as exc:
        message = str(exc)
        raise RecordError(message if message.startswith(str(path)) else f"{path}: {message}") from None


def _plots(out: Path, stream: OutcomeArrays, bets: list[BetRecord], looks: list[Look]) -> tuple[Path, ...]:
    reds = stream.reds[stream.settled]
    decided = [b for b in bets if b.result in DECIDED_RESULTS]
    if decided:
        returned = np.array([b.returned for b in decided], dtype=np.float64)
        wagered = np.array([b.wagered for b in decided], dtype=np.float64)
        theo = np.array([float(bet_math(b.bet_type).rtp) for b in decided])
        sigma = np.array([bet_math(b.bet_type).sigma for b in decided])
        title = "Measured RTP, all decided bets"
    else:
        big = bet_math(BetType.BIG)
        returned = np.array([paytable.returned(BetType.BIG, int(k), NOTIONAL_STAKE) for k in reds], dtype=float)
        wagered = np.full(len(reds), float(NOTIONAL_STAKE))
        theo = np.full(len(reds), float(big.rtp))
        sigma = np.full(len(reds), big.sigma)
        title = f"RTP of Big, notional {NOTIONAL_STAKE} on every settled round"
    made = []
    if len(wagered):
        made.append(plots.rtp_convergence(out / "rtp_convergence.png", returned, wagered, theo, sigma, title))
    made.append(plots.outcome_histogram(out / "outcome_histogram.png", reds))
    made.append(plots.monitor_trace(out / "monitor.png", looks))
    return tuple(made)
