"""``xocdia-hil audit FILE...``: the fairness family, live monitor and (for a bet record) measured RTP of CSVs.

FILE is an OUTCOMES.csv (one row per round), a BETS.csv bet-record export (several are merged) or the
simulator's JSON Lines event log; the format is taken from the content (see ``docs/statistics.md``). The last
line of the text is the decision and its reason. Exit status: 0 PASS; 1 FAIL (a test of the family rejects at
family-wise alpha 1 % after the weighted Holm step-down, the live monitor included, or a bet settled against the
paytable); 3 INSUFFICIENT (nothing rejected, but fewer settled rounds than the 10,000 a certification needs);
2 a usage or file error.

``--follow SOURCE`` watches one growing OUTCOMES.csv, or a server's OUTCOMES.csv by URL (``--token``), with the
live monitor, reading only the rounds that arrived since the last poll (O(1) work per new round): each alarm is a
line; without ``--keep-going`` the first alarm prints a FAIL line and exits 1 at once. Every ``--status`` seconds
a status line. When nothing arrives for ``--idle`` seconds, or ``--max-rounds`` rounds were read, the rounds read
are audited in full as above (exit 0, 1 or 3; 1 whenever an alarm was raised).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from harness.cli.common import CliError
from harness.stats.audit import EXIT_CODES, AuditResult, Verdict, audit_files, audit_stream, describe
from harness.stats.checks import FairnessCheck
from harness.stats.event_log import is_event_log
from harness.stats.fairness import monitor_design
from harness.stats.follow import (
    FollowAlarm,
    FollowResult,
    FollowStatus,
    OutcomeSource,
    OutcomeTail,
    ServerOutcomes,
    SourceUnavailable,
    follow,
)
from harness.stats.readers import RecordError, detect_format

TOKEN_ENV = "XOCDIA_TOKEN"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("audit", help="fairness tests, bias monitor and measured RTP of OUTCOMES/BETS CSV")
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="OUTCOMES.csv, BETS.csv or an event log (.jsonl); with --follow, an OUTCOMES.csv or a server's URL",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--plots", type=Path, metavar="DIR", help="write PNG plots into DIR")
    p.add_argument(
        "--follow",
        action="store_true",
        help="watch one growing OUTCOMES.csv, or a server's OUTCOMES.csv by http(s) URL (a base URL gets "
        "/v1/outcomes.csv): the live monitor alarms as rounds arrive (exit 1 at once); once nothing arrives for "
        "--idle seconds, or --max-rounds rounds were read, audit the rounds read in full",
    )
    p.add_argument(
        "--idle",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="with --follow: stop following after this long without a new round (0: never)",
    )
    p.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="with --follow: seconds between reads (default 0.2 for a file, 1 for a URL)",
    )
    p.add_argument(
        "--max-rounds",
        type=int,
        default=0,
        metavar="N",
        help="with --follow: stop after N rounds read, then audit them (0: no limit)",
    )
    p.add_argument(
        "--status",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="with --follow: print a status line this often (0: none)",
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="with --follow: after an alarm print it, start a new record and go on (exit 1 at the end)",
    )
    p.add_argument(
        "--token",
        default=None,
        metavar="TOKEN",
        help=f"with --follow URL: the bearer token (default: the {TOKEN_ENV} environment variable)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.follow:
        return _follow(args)
    for flag, given in (
        ("--interval", args.interval is not None),
        ("--token", args.token is not None),
        ("--max-rounds", args.max_rounds != 0),
        ("--keep-going", args.keep_going),
    ):
        if given:
            raise CliError(f"{flag} needs --follow")
    paths = [Path(f) for f in args.files]
    for path in paths:
        if not path.is_file():
            raise CliError(f"{path}: no such file")
    _plot_dir(args)
    result = audit_files(paths, args.plots)
    _print(result, args.json)
    return result.exit_code


def _plot_dir(args: argparse.Namespace) -> None:
    if args.plots is not None and args.plots.exists() and not args.plots.is_dir():
        raise CliError(f"--plots {args.plots}: exists and is not a directory")
    if args.plots is not None:
        try:  # before the audit, so a bad folder costs no work and gives one line, not a traceback
            args.plots.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CliError(f"--plots {args.plots}: cannot create the directory ({exc.strerror})") from None


def _print(result: AuditResult, as_json: bool, follow: dict[str, Any] | None = None) -> None:
    if as_json:
        doc = result.to_dict()
        if follow is not None:
            doc["follow"] = follow
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(_text(result))


def _source(args: argparse.Namespace) -> OutcomeSource:
    """The one source named, checked before any following starts."""
    names: list[str] = args.files
    if len(names) != 1:
        raise CliError(f"--follow watches one OUTCOMES.csv or URL, got {len(names)}")
    name = names[0]
    if name.startswith(("http://", "https://")):
        try:
            return ServerOutcomes(name, args.token or os.environ.get(TOKEN_ENV) or None)
        except ValueError as exc:
            raise CliError(f"--follow {exc}") from None
    if "://" in name:
        raise CliError(f"--follow {name}: a URL must start with http:// or https://")
    if args.token is not None:
        raise CliError("--token is for --follow URL, not a file")
    path = Path(name)
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    if path.stat().st_size and (is_event_log(path) or detect_format(path) != "outcomes"):
        raise CliError(f"--follow {path}: not an OUTCOMES.csv (round_id,status,faces,reds,reshakes,ended_at)")
    return OutcomeTail(path)


def _follow(args: argparse.Namespace) -> int:
    """Follow the one source named; the exit status (1 on an alarm, else the closing audit's)."""
    for flag, value, low in (
        ("--idle", args.idle, 0),
        ("--status", args.status, 0),
        ("--max-rounds", args.max_rounds, 0),
    ):
        if value < low:
            raise CliError(f"{flag} must be >= 0, got {value:g}")
    if args.interval is not None and args.interval <= 0:
        raise CliError(f"--interval must be > 0 seconds, got {args.interval:g}")
    source = _source(args)
    interval = args.interval if args.interval is not None else (1.0 if isinstance(source, ServerOutcomes) else 0.2)
    _plot_dir(args)
    out: TextIO = sys.stderr if args.json else sys.stdout  # with --json, stdout carries only the JSON object
    design = monitor_design()

    def say(line: str) -> None:
        print(line, file=out, flush=True)

    def alarmed(a: FollowAlarm) -> None:
        m = a.alarm
        say(
            f"ALARM at settled round {m.round} (round {a.rounds} read, round id {a.round_id}"
            f"{'' if a.record == 1 else f', record {a.record}'}): z = {m.z:+.2f}, tokens favour {m.direction}, "
            f"P(red) estimate {m.p_red_estimate:.4f} over rounds 1-{m.round}"
            + (": a new record starts" if args.keep_going else "")
        )

    def status(s: FollowStatus) -> None:
        say(_status_line(s))

    def unavailable(exc: SourceUnavailable) -> None:
        say(f"warning: {exc}; trying again in {interval:g} s")

    say(
        f"following {source.name}: live monitor, anytime-valid, alarms at p <= {design.alpha:.3g}, "
        f"reading every {interval:g} s"
    )
    try:
        seen = follow(
            source,
            design,
            args.idle,
            interval,
            keep_going=args.keep_going,
            max_rounds=args.max_rounds,
            on_alarm=alarmed,
            status_every=args.status,
            on_status=status,
            on_unavailable=unavailable,
        )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if seen.stopped == "alarm":
        a = seen.alarms[0].alarm
        say(
            f"FAIL: the live monitor's p-value reached its alarm level {design.alpha:.3g} at settled round "
            f"{a.round}, so the audit of these rounds fails at family-wise alpha 0.01: stop play and check the table"
        )
        if args.json:
            _print(_closing_audit(seen, source, args), True, _follow_dict(seen, source))
        return EXIT_CODES[Verdict.FAIL]
    why = {
        "idle": f"nothing new for {args.idle:g} s",
        "max_rounds": f"{args.max_rounds} rounds read (--max-rounds)",
    }[seen.stopped]
    alarms = f"{len(seen.alarms)} alarm(s)" if seen.alarms else "no alarm"
    say(f"{alarms} over {seen.settled} settled rounds; {why}: full audit of the {seen.rounds} rounds read")
    result = _closing_audit(seen, source, args)
    _print(result, args.json, _follow_dict(seen, source))
    return EXIT_CODES[Verdict.FAIL] if seen.alarms else result.exit_code


def _closing_audit(seen: FollowResult, source: OutcomeSource, args: argparse.Namespace) -> AuditResult:
    assert seen.log is not None
    name: Path | str = source.path if isinstance(source, OutcomeTail) else source.name
    try:
        return audit_stream(seen.log.arrays(), name, "outcomes", (), args.plots)
    except RecordError as exc:
        raise CliError(str(exc)) from None


def _follow_dict(seen: FollowResult, source: OutcomeSource) -> dict[str, Any]:
    return {
        "source": source.name,
        "stopped": seen.stopped,
        "rounds_read": seen.rounds,
        "settled": seen.settled,
        "alarms": [
            {
                "record": a.record,
                "alarm_at_round": a.alarm.round,
                "rounds_read": a.rounds,
                "round_id": a.round_id,
                "z": a.alarm.z,
                "direction": a.alarm.direction,
                "p_red_estimate": a.alarm.p_red_estimate,
            }
            for a in seen.alarms
        ],
    }


def _status_line(s: FollowStatus) -> str:
    """One status line: rounds read, the current record's z against its boundary, the anytime p-value."""
    monitor = (
        "no settled round yet"
        if s.z is None or s.boundary is None
        else f"z = {s.z:+.2f} (alarm at |z| >= {s.boundary:.2f}), anytime p = {s.p_value:.3g}"
    )
    record = "" if s.record_settled == s.settled else f", {s.record_settled:,} in this record"
    return (
        f"status: {s.rounds:,} rounds read ({s.settled:,} settled{record}), last round {s.last_round_id or '-'}; "
        f"{monitor}; alarms {s.alarms}"
    )


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
