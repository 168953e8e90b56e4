"""``xocdia-hil audit FILE...``: the fairness family, live monitor and (for a bet record) measured RTP of CSVs.

FILE is an OUTCOMES.csv (one row per round), a BETS.csv bet-record export (several are merged) or the
simulator's JSON Lines event log; the format is taken from the content (see ``docs/statistics.md``). The last
line of the text is the decision and its reason. Exit status: 0 PASS; 1 FAIL (a test of the family rejects at
family-wise alpha 1 % after the weighted Holm step-down, the live monitor included, or a bet settled against the
paytable); 3 INSUFFICIENT (nothing rejected, but fewer settled rounds than the 10,000 a certification needs);
2 a usage or file error.

``--follow`` watches one growing OUTCOMES.csv with the live monitor (O(1) work per new round): on an alarm it
prints the alarm and a FAIL line and exits 1 at once; when the file stops growing for ``--idle`` seconds it
audits the whole file as above.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.cli.common import CliError
from harness.stats.audit import EXIT_CODES, AuditResult, Verdict, audit_files, describe
from harness.stats.checks import FairnessCheck
from harness.stats.event_log import is_event_log
from harness.stats.fairness import monitor_design
from harness.stats.follow import follow
from harness.stats.readers import detect_format


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("audit", help="fairness tests, bias monitor and measured RTP of OUTCOMES/BETS CSV")
    p.add_argument(
        "files", type=Path, nargs="+", metavar="FILE", help="OUTCOMES.csv, BETS.csv or an event log (.jsonl)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--plots", type=Path, metavar="DIR", help="write PNG plots into DIR")
    p.add_argument(
        "--follow",
        action="store_true",
        help="watch one growing OUTCOMES.csv: the live monitor alarms as rounds arrive (exit 1 at once); once the "
        "file stops growing for --idle seconds, audit it in full",
    )
    p.add_argument(
        "--idle",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with --follow: stop following after this long without growth (0: follow until an alarm)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    paths: list[Path] = args.files
    if args.follow:
        code = _follow(args)
        if code is not None:
            return code
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
    return result.exit_code


def _follow(args: argparse.Namespace) -> int | None:
    """Follow the one file named; the exit status on an alarm, or None to go on to the full audit."""
    paths: list[Path] = args.files
    if len(paths) != 1:
        raise CliError(f"--follow watches one OUTCOMES.csv, got {len(paths)} files")
    path = paths[0]
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    if args.idle < 0:
        raise CliError(f"--idle must be >= 0 seconds, got {args.idle:g}")
    if path.stat().st_size and not is_event_log(path) and detect_format(path) != "outcomes":
        raise CliError(f"--follow {path}: not an OUTCOMES.csv (round_id,status,faces,reds,reshakes,ended_at)")
    design = monitor_design()
    print(f"following {path}: live monitor, anytime-valid, alarms at p <= {design.alpha:.3g}", flush=True)
    seen = follow(path, design, args.idle)
    if seen.alarm is None:
        print(f"no alarm over {seen.settled} settled rounds; the file stopped growing: full audit", flush=True)
        return None
    a = seen.alarm
    print(
        f"ALARM at settled round {a.round} (round {seen.rounds} of the file): z = {a.z:+.2f}, tokens favour "
        f"{a.direction}, P(red) estimate {a.p_red_estimate:.4f} over rounds 1-{a.round}"
    )
    print(
        f"FAIL: the live monitor's p-value reached its alarm level {design.alpha:.3g} at settled round {a.round}, "
        "so the audit of these rounds fails at family-wise alpha 0.01: stop play and check the table"
    )
    return EXIT_CODES[Verdict.FAIL]


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _verdict(t: FairnessCheck) -> str:
    if not t.applicable:
        return "n/a"
    if t.rejected:
        return "REJECT"
    if t.below_threshold_not_rejected:
        return f"ok: p under its threshold, but the step-down stopped at {t.blocked_by}, so it is not tested"
    return "ok"


def _text(result: AuditResult) -> str:
    f = result.fairness
    lines = [
        f"Audit of {result.source} ({result.kind}): {f.rounds} rounds, {f.settled} settled, "
        f"{f.voided} void/cancelled (out of every statistic below)",
    ]
    applicable = [t for t in f.tests if t.applicable]
    lines.append(
        f"Fairness: {len(applicable)} applicable tests in one family at alpha {f.alpha:g}, weighted Holm step-down "
        f"(total weight {f.applicable_weight:g}): sorted by p/weight, the k-th is rejected while "
        f"p <= alpha x weight / (weight of the k-th and later); adjusted p <= alpha means rejected"
    )
    lines.append(
        f"  {'test':<22}{'statistic':>11}{'df':>5}{'p-value':>11}{'weight':>7}{'step':>5}{'threshold':>11}"
        f"{'adjusted':>10}  verdict"
    )
    for t in sorted(f.tests, key=lambda t: (t.step is None, t.step or 0)):
        lines.append(
            f"  {t.name:<22}{_num(t.statistic, '.3f'):>11}{_num(t.df, 'd'):>5}{_num(t.p_value, '.4g'):>11}"
            f"{t.weight:>7g}{_num(t.step, 'd'):>5}{_num(t.threshold, '.4g'):>11}{_num(t.adjusted_p, '.4g'):>10}"
            f"  {_verdict(t)}  ({t.note})"
        )
    d = result.design
    if result.alarm is None:
        lines.append(
            f"Monitor (anytime-valid, alarms at p <= {d.alpha:.3g}, checked every settled round): no alarm "
            f"over {f.settled} settled rounds"
        )
    else:
        a = result.alarm
        lines.append(
            f"Monitor: ALARM at settled round {a.round}: z = {a.z:+.2f}, tokens favour {a.direction}, "
            f"P(red) estimate {a.p_red_estimate:.4f} over rounds 1-{a.round} (alarm level {d.alpha:.3g})"
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
    for t in f.rejected():
        lines.append(f"rejected: {describe(t)}: p = {t.p_value:.3g}, adjusted p = {t.adjusted_p:.3g}")
    lines.append(result.reason)
    return "\n".join(lines)
