"""The audit of a recorded outcome stream: the family of fairness tests, the live monitor and, for bets,
measured RTP, ending in one decision.

Sources: OUTCOMES.csv, BETS.csv (several are merged) or the simulator's JSON Lines event log. A bet record
also gets measured RTP beside theoretical and a settlement check against the harness paytable.

Decision (:class:`Verdict`): FAIL when the weighted Holm step-down over every test of the family (the monitor
included, one family-wise α = 1 %) rejects, or when a bet's ``returned`` disagrees with the harness paytable;
otherwise INSUFFICIENT when fewer settled rounds than the certification minimum (10,000, GLI-19 3.4.2) were
recorded; otherwise PASS. A rejection on fewer rounds is still a FAIL: the budget holds at any length. Measured
RTP outside its 99 % interval is reported, not failed: with eleven lines at 99 % one such line is expected in
about one audit in ten of a fair game.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from harness.judge import paytable
from harness.records import DECIDED_RESULTS, REFUNDED_STATUSES, BetResult, RoundStatus
from harness.stats import plots
from harness.stats.checks import FairnessCheck
from harness.stats.event_log import is_event_log, read_event_log
from harness.stats.exact import bet_math
from harness.stats.fairness import (
    CATALOGUE,
    CERTIFICATION_MINIMUM,
    FairnessReport,
    fairness_report,
    monitor_design,
)
from harness.stats.measured import RtpLine, measured_rtp
from harness.stats.monitor import Alarm, Look, MonitorDesign, first_alarms, looks_of
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
_LOOKS_FOR = {k.kind: k.looks_for for k in CATALOGUE}


class Verdict(StrEnum):
    """The audit's decision, in the words a certificate uses."""

    PASS = "PASS"
    FAIL = "FAIL"
    INSUFFICIENT = "INSUFFICIENT"


#: The exit status of ``xocdia-hil audit`` per verdict (2 is a usage or file error).
EXIT_CODES = {Verdict.PASS: 0, Verdict.FAIL: 1, Verdict.INSUFFICIENT: 3}


def describe(test: FairnessCheck) -> str:
    """The test's name, the token(s) it looked at and what it looks for, e.g.
    ``"frequency_t0 (token 0: one token red more or less than half the time)"``."""
    where = ""
    if test.tokens:
        where = ("token " if len(test.tokens) == 1 else "tokens ") + " and ".join(str(t) for t in test.tokens) + ": "
    return f"{test.name} ({where}{_LOOKS_FOR.get(test.kind, test.kind)})"


@dataclass(frozen=True, slots=True)
class AuditResult:
    """Everything one audit found. ``alarm``: the live monitor's alarm replayed over the record (the monitor's
    p-value is also a test of ``fairness``); ``looks``: its trace for the plot."""

    source: Path | str  # a file (or several, joined) or, for a followed server, its URL
    kind: str
    fairness: FairnessReport
    alarm: Alarm | None
    looks: tuple[Look, ...]
    rtp: tuple[RtpLine, ...] = ()
    mismatches: tuple[str, ...] = ()  # bet ids whose ``returned`` disagrees with the paytable
    plots: tuple[Path, ...] = field(default=())
    design: MonitorDesign = field(default_factory=monitor_design)

    @property
    def verdict(self) -> Verdict:
        """FAIL (a test of the family rejects or a bet was settled against the paytable), else INSUFFICIENT
        (fewer settled rounds than the certification minimum), else PASS."""
        if not self.fairness.passed or self.mismatches:
            return Verdict.FAIL
        if self.fairness.below_certification_minimum:
            return Verdict.INSUFFICIENT
        return Verdict.PASS

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def reason(self) -> str:
        """The decision in one line: the verdict, what decided it (for FAIL the test, its p-value and adjusted
        p-value) and what it means for certification."""
        f = self.fairness
        alpha = f"{f.alpha:.2g}"
        applicable = sum(t.applicable for t in f.tests)
        rejected = f.rejected()
        if rejected:
            first = rejected[0]
            more = f"; {len(rejected) - 1} more test(s) rejected" if len(rejected) > 1 else ""
            return (
                f"FAIL: {describe(first)} p = {first.p_value:.3g}, Holm-adjusted p = {first.adjusted_p:.3g} <= "
                f"alpha {alpha} over {applicable} tests{more}: a fair table fails an audit at most {f.alpha:.0%} "
                "of the time, so the outcomes are not those of fair, independent tokens at that level and the table "
                "cannot be certified on this record"
            )
        if self.mismatches:
            return (
                f"FAIL: {len(self.mismatches)} bet(s) settled against the paytable (first {self.mismatches[0]}): "
                "the record's payouts are wrong, whatever the outcomes"
            )
        if f.below_certification_minimum:
            return (
                f"INSUFFICIENT: {f.settled} settled rounds, fewer than the {CERTIFICATION_MINIMUM:,} a "
                f"certification needs (GLI-19 3.4.2); no test rejects at alpha {alpha}, which on so few rounds "
                "shows nothing either way: record more rounds"
            )
        return (
            f"PASS: none of {applicable} tests rejects at family-wise alpha {alpha} over {f.settled} settled "
            "rounds: the outcomes are consistent with fair, independent tokens"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (exact RTPs as decimal strings): the verdict, its exit code and reason, every
        test with its weight, Holm step, threshold and adjusted p-value, the monitor and the RTP lines."""
        f = self.fairness
        return {
            "source": str(self.source),
            "format": self.kind,
            "verdict": self.verdict.value,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "passed": self.passed,
            "conclusive": f.conclusive,
            "rounds": f.rounds,
            "settled": f.settled,
            "void_or_cancelled": f.voided,
            "certification_minimum": CERTIFICATION_MINIMUM,
            "below_certification_minimum": f.below_certification_minimum,
            "alpha": f.alpha,
            "correction": "weighted holm",
            "family_weight": f.applicable_weight,
            "tests": [_test_dict(t) for t in f.tests],
            "monitor": {
                "alarm_alpha": self.design.alpha,
                "rho": self.design.rho,
                "alarm": None
                if self.alarm is None
                else {
                    "alarm_at_round": self.alarm.round,
                    "z": self.alarm.z,
                    "direction": self.alarm.direction,
                    "p_red_estimate": self.alarm.p_red_estimate,
                },
            },
            "rtp": [_rtp_dict(line) for line in self.rtp],
            "settlement_mismatches": list(self.mismatches),
            "plots": [str(p) for p in self.plots],
        }


def _test_dict(t: FairnessCheck) -> dict[str, Any]:
    return {
        "name": t.name,
        "kind": t.kind,
        "tokens": list(t.tokens),
        "looks_for": _LOOKS_FOR.get(t.kind, ""),
        "statistic": t.statistic,
        "df": t.df,
        "p_value": t.p_value,
        "weight": t.weight,
        "step": t.step,
        "threshold": t.threshold,
        "adjusted_p": t.adjusted_p,
        "rejected": t.rejected,
        "blocked_by": t.blocked_by,
        "note": t.note,
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
    source = paths[0] if len(paths) == 1 else Path(", ".join(str(p) for p in paths))
    return audit_stream(stream, source, kind, bets, plot_dir)


def audit_stream(
    stream: OutcomeArrays,
    source: Path | str,
    kind: str = "outcomes",
    bets: Sequence[BetRecord] = (),
    plot_dir: Path | None = None,
) -> AuditResult:
    """Every check over rounds already read (``stream``, in round order; ``bets``, the bet record they came
    from, if any), named ``source`` in the result; plots to ``plot_dir`` when given. ``audit --follow`` closes
    with this over the rounds it followed, never reading the source again."""
    record = list(bets)
    report = fairness_report(stream)
    design = monitor_design(report.alpha)
    alarm, looks = replay_monitor(stream.reds[stream.settled], design)
    lines = tuple(measured_rtp(record)) if record else ()
    mismatches = settlement_mismatches(record)
    made = _plots(plot_dir, stream, record, looks) if plot_dir is not None else ()
    return AuditResult(source, kind, report, alarm, tuple(looks), lines, mismatches, made, design)


def replay_monitor(reds: npt.NDArray[np.int64], design: MonitorDesign) -> tuple[Alarm | None, list[Look]]:
    """The live monitor over the settled ``reds`` as a table would have run it: its alarm (None for none) and
    its looks up to the alarm; the same as feeding :class:`harness.stats.monitor.BiasMonitor` round by round."""
    looks = looks_of(reds, design)
    at = int(first_alarms(reds.reshape(1, -1), design)[0])
    if at < 0:
        return None, looks
    excess = int(reds[:at].sum()) - 2 * at
    z = excess / math.sqrt(at)
    return Alarm(at, z, "red" if excess > 0 else "white", 0.5 + excess / (4 * at)), looks


def _named(path: Path, reader: Callable[[Path], list[T]]) -> list[T]:
    try:
        return reader(path)
    except RecordError as exc:
        message = str(exc)
        raise RecordError(message if message.startswith(str(path)) else f"{path}: {message}") from None


def _plots(out: Path, stream: OutcomeArrays, bets: list[BetRecord], looks: Sequence[Look]) -> tuple[Path, ...]:
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
