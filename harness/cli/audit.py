"""``xocdia-hil audit FILE...``: fairness tests, live monitor and (for a bet record) measured RTP of CSVs.

FILE is an OUTCOMES.csv (one row per round), a BETS.csv bet-record export (several are merged) or the
simulator's JSON Lines event log; the format is taken from the content (see ``docs/statistics.md``). Exit
status 0 when every check passes, 1 when a check fails (no fairness test applicable, a Holm-corrected fairness
rejection at 99 %, a monitor alarm, or a bet settled against the paytable), 2 on a usage or file error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.cli.common import CliError
from harness.stats.audit import AuditResult, audit_files


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("audit", help="fairness tests, bias monitor and measured RTP of OUTCOMES/BETS CSV")
    p.add_argument(
        "files", type=Path, nargs="+", metavar="FILE", help="OUTCOMES.csv, BETS.csv or an event log (.jsonl)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--plots", type=Path, metavar="DIR", help="write PNG plots into DIR")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    paths: list[Path] = args.files
    for path in paths:
        if not path.is_file():
            raise CliError(f"{path}: no such file")
    if args.plots is not None and args.plots.exists() and not args.plots.is_dir():
        raise CliError(f"--plots {args.plots}: exists and is not a directory")
    if args.plots is not None:
        try:  # before the audit, so a bad folder costs no work and gives one line, not a traceback
            args.plots.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"--plots {args.plots}: cannot create the directory ({exc.strerror})") from None
    result = audit_files(paths, args.plots)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(_text(result))
    return 0 if result.passed else 1


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _text(result: AuditResult) -> str:
    f = result.fairness
    lines = [
        f"Audit of {result.source} ({result.kind}): {f.rounds} rounds, {f.settled} settled, "
        f"{f.voided} void/cancelled (out of every statistic below)",
    ]
    if f.below_certification_minimum:
        lines.append(f"note: {f.settled} settled rounds is below the 10,000 a certification needs (GLI-19 3.4.2)")
    applicable = sum(1 for t in f.tests if t.applicable)
    if not applicable:
        lines.append("INCONCLUSIVE: no fairness test is applicable to so few settled rounds (see the notes)")
    lines.append(
        f"Fairness at {1 - f.alpha:.0%}, Holm's correction over {applicable} applicable tests: "
        f"the i-th smallest p-value is rejected while <= {f.alpha}/({applicable} - i + 1)"
    )
    lines.append(f"  {'test':<22}{'statistic':>11}{'df':>4}{'p-value':>11}{'threshold':>11}  verdict")
    for t in f.tests:
        verdict = "n/a" if not t.applicable else ("REJECT" if t.rejected else "ok")
        lines.append(
            f"  {t.name:<22}{_num(t.statistic, '.3f'):>11}{_num(t.df, 'd'):>4}{_num(t.p_value, '.4g'):>11}"
            f"{_num(t.threshold, '.4g'):>11}  {verdict}  ({t.note})"
        )
    if result.alarm is None:
        lines.append(f"Monitor: no alarm over {len(result.looks)} looks")
    else:
        a = result.alarm
        lines.append(
            f"Monitor: ALARM at settled round {a.round}: z = {a.z:+.2f}, tokens favour {a.direction}, "
            f"P(red) estimate {a.p_red_estimate:.4f}"
        )
    if result.rtp:
        lines.append("Measured RTP (decided bets; refunds and pending apart), theoretical beside, 99 % interval:")
        for line in result.rtp:
            name = line.bet.value if line.bet else "all"
            band = line.interval
            measured = "-" if line.rtp is None else f"{float(line.rtp):.4%}"
            interval = "-" if band is None else f"[{band[0]:.4%}, {band[1]:.4%}]"
            flag = "" if line.consistent in (True, None) else "  outside interval"
            theory = f"{float(line.theoretical):.4%}"
            lines.append(
                f"  {name:<15}{line.bets:>8} bets {measured:>10}  theory {theory}  {interval}"
                f"  refunds {line.refunded_bets}, pending {line.pending_bets}{flag}"
            )
    if result.mismatches:
        shown = ", ".join(result.mismatches[:10])
        lines.append(f"Settlement: {len(result.mismatches)} bet(s) disagree with the paytable: {shown}")
    for plot in result.plots:
        lines.append(f"plot: {plot}")
    lines.append("PASS" if result.passed else "FAIL")
    return "\n".join(lines)
