"""``xocdia-hil simulate``: run the table model standalone and summarise its ground truth.

The run is read as it goes: every :data:`BATCH_ROUNDS` rounds the table's log is handed over (``EventLog.take``),
written to ``--events`` and ``--outcomes`` and counted into the summary, then dropped, so memory stays flat in the
number of rounds; the files and the summary are byte for byte those of the whole log written at the end.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from harness.cli.common import CliError, Progress, non_negative_int, positive_int
from harness.files import load_profile, load_script
from simulator import Profile, Table
from simulator.eventlog import EventLog
from simulator.events import RoundEnded
from simulator.summary import Summary, SummaryBuilder

OUTCOME_COLUMNS = ("round_id", "status", "faces", "reds", "reshakes", "ended_at")
BATCH_ROUNDS = 1000  # rounds of the log held at once


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="run the table model standalone (virtual time) and summarise the outcomes",
        description="Run the seeded table model in virtual time and print a summary of its ground truth.",
    )
    parser.add_argument("--rounds", type=positive_int, required=True, help="rounds to play (>= 1)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="root seed (default 0)")
    parser.add_argument("--profile", default="standard", help="profile name or YAML path (default standard)")
    parser.add_argument("--players", type=non_negative_int, help="seats at the table (default: the profile's)")
    parser.add_argument("--script", type=Path, help="YAML script of forced incidents (see docs/profiles.md)")
    parser.add_argument("--events", type=Path, metavar="FILE.jsonl", help="write the ground-truth event log")
    parser.add_argument("--outcomes", type=Path, metavar="FILE.csv", help="write one CSV row per round")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    script = load_script(args.script) if args.script else None
    for path in (args.events, args.outcomes):
        if path is not None and not path.parent.is_dir():
            raise CliError(f"cannot write {path}: directory {path.parent} does not exist")
    table = Table(profile, seed=args.seed, script=script, players=args.players)
    progress = Progress(args.rounds, "simulating")
    builder = SummaryBuilder()
    with ExitStack() as files:
        events = files.enter_context(_open_out(args.events)) if args.events is not None else None
        outcomes = None
        if args.outcomes is not None:
            outcomes = csv.writer(files.enter_context(_open_out(args.outcomes)), lineterminator="\n")
            outcomes.writerow(OUTCOME_COLUMNS)
        written = 0

        def take(done: int) -> None:
            nonlocal written
            batch = table.log.take()
            if events is not None:
                batch.write_jsonl(events, written)
            if outcomes is not None:
                write_outcome_rows(batch, outcomes)
            builder.add(batch)
            written += len(batch)
            progress.update(done)

        table.run(args.rounds, on_round=take, every=BATCH_ROUNDS)
        progress.close()
        if progress.enabled:
            print(f"simulate: {args.rounds} rounds played, {written:,} events; summarising", file=sys.stderr)
    summary = builder.summary()
    if args.json:
        print(json.dumps(summary.to_dict(args.seed, profile.name), separators=(", ", ": ")))
    else:
        print_summary(summary, profile, args.seed, sys.stdout)
    return 0


def _open_out(path: Path) -> TextIO:
    try:
        return path.open("w", encoding="utf-8", newline="")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror}") from None


def write_outcomes_csv(table: Table, out: TextIO) -> None:
    """OUTCOMES.csv: ``round_id,status,faces,reds,reshakes,ended_at`` (faces/reds empty unless settled)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(OUTCOME_COLUMNS)
    write_outcome_rows(table.log, writer)


def write_outcome_rows(log: EventLog, writer: Any) -> None:
    """The OUTCOMES.csv rows of the rounds ``log`` ends, in order (no header)."""
    for event in log.of(RoundEnded):
        assert isinstance(event, RoundEnded)
        writer.writerow(
            [
                event.round,
                event.status.value,
                event.faces or "",
                "" if event.reds is None else event.reds,
                event.reshakes,
                f"{event.t:.6f}",
            ]
        )


def print_summary(summary: Summary, profile: Profile, seed: int, out: TextIO) -> None:
    """The human-readable summary."""
    settled = sum(summary.reds_histogram)
    print(f"{summary.rounds} rounds, seed {seed}, profile {profile.name}", file=out)
    print(f"settled {settled}, voided or cancelled {summary.voided}", file=out)
    print("outcome by number of reds (settled rounds):", file=out)
    expected = (1, 4, 6, 4, 1)
    for reds, count in enumerate(summary.reds_histogram):
        share = count / settled if settled else 0.0
        print(f"  {reds} red  {count:9d}  {share:7.2%}  (fair {expected[reds] / 16:6.2%})", file=out)
    print(
        f"chi-square vs 1-4-6-4-1/16: {summary.chi_square:.3f} (df 4), p = {summary.chi_square_p:.4f}",
        file=out,
    )
    print("incidents:", file=out)
    for key, value in summary.incidents.items():
        print(f"  {key.replace('_', ' '):22s} {value:9d}", file=out)
    if summary.duration_percentiles:
        parts = ", ".join(f"{k} {v:.2f}" for k, v in summary.duration_percentiles.items())
        print(f"round duration (s, opening to verdict): {parts}", file=out)
