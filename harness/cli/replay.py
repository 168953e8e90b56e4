"""``xocdia-hil replay``: look at a recorded run again, or send a recorded serial trace down a line.

    xocdia-hil replay run.jsonl                       # the run, round by round (verdicts, faults, frames per line)
    xocdia-hil replay run.jsonl --live 8080 --speed 5 # the live page, replaying: pause, step, a time slider
    xocdia-hil replay trace.jsonl                     # a serial trace, readable, heartbeats and ACKs folded
    xocdia-hil replay trace.jsonl --to /dev/ttyUSB0 --port BOWL   # its BOWL chunks, spaced as recorded

A feed file is what ``--record FILE`` wrote (``run``, ``certify``, ``inject``, ``devices``); a serial trace is what a
rig's :class:`~harness.wire.trace.TraceRecorder` wrote (``{"t", "port", "dir", "hex"}`` lines). Exit 0, or 1 when a
replayed run's final verdict or any of its round verdicts failed (one verdict: a round that failed is never
hidden by a final line that passed, which replay then names), 2 for a file that is neither.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from harness.cli.common import CliError
from harness.feed import FeedEvent, FeedKind, read_feed
from harness.live.server import LiveServer, parse_address
from harness.wire.trace import TraceRecord, read_trace, replay
from harness.wire.transports.base import TransportClosed
from harness.wire.transports.url import SerialUrl

_CONTROL = re.compile(rb"\$1 0 \S+ (HB|ACK)\b[^\n]*\n")  # heartbeats and acknowledgements of the ASCII dialect


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("replay", help="replay a recorded run (feed file) or serial trace")
    p.add_argument("file", help="a feed file (--record) or a serial trace (JSON Lines)")
    p.add_argument("--live", metavar="[HOST:]PORT", default=None, help="serve the replay page (Ctrl-C stops it)")
    p.add_argument("--speed", type=float, default=1.0, help="replay speed on the page (default 1: as recorded)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--to", metavar="URL", default=None, help="serial trace: write its chunks to this pyserial URL")
    p.add_argument("--port", default="", help="with --to: the trace's port (BOWL, SHAKER, ...) to send")
    p.add_argument("--dir", default="tx", choices=("tx", "rx"), help="with --to: direction to send (default tx)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CliError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not a text file") from None
    first = next((line for line in lines if line.strip()), "")
    if '"hex"' in first:
        return _trace(args, path, lines)
    try:
        events = read_feed(lines, str(path))
    except ValueError as exc:
        raise CliError(f"{exc} (expected a feed file written by --record, or a serial trace)") from None
    if args.to:
        raise CliError("--to sends a serial trace; a feed file holds decoded frames, not every byte")
    if args.speed <= 0:
        raise CliError(f"--speed must be > 0, got {args.speed:g}")
    if args.live:
        return _serve(args, path, events)
    return _summary(events, args.json)


def _serve(args: argparse.Namespace, path: Path, events: list[FeedEvent]) -> int:
    from harness.feed import Feed

    feed = Feed()
    for event in events:
        feed.add(event)
    feed.close()
    server = LiveServer(feed, *parse_address(args.live), mode="replay", speed=args.speed, title=path.name)
    url = server.start()
    print(f"replay page: {url} ({len(events)} events; Ctrl-C stops it)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _summary(events: list[FeedEvent], as_json: bool) -> int:
    verdicts = [e for e in events if e.kind == FeedKind.VERDICT and not e.data.get("final")]
    final = next((e for e in reversed(events) if e.kind == FeedKind.VERDICT and e.data.get("final")), None)
    frames: Counter[str] = Counter(str(e.data.get("line")) for e in events if e.kind == FeedKind.FRAME)
    errors = sum(1 for e in events if e.kind == FeedKind.FRAME and e.data.get("error"))
    faults = [e for e in events if e.kind == FeedKind.FAULT]
    benches = [e for e in events if e.kind == FeedKind.BENCH]
    failed_rounds = [v for v in verdicts if "scenario" not in v.data and not v.data.get("ok")]
    final_ok = bool(final.data.get("ok", True)) if final is not None else True
    ok = final_ok and not failed_rounds  # one verdict: a failed round fails the run, whatever the final line says
    if as_json:
        out = {
            "events": len(events),
            "benches": [dict(b.data) for b in benches],
            "rounds": [
                {k: v.data.get(k) for k in ("round", "table_round", "ok", "expected", "differences")} for v in verdicts
            ],
            "frames": dict(sorted(frames.items())),
            "frame_errors": errors,
            "faults": [dict(f.data) | {"t": f.t} for f in faults],
            "final": dict(final.data) if final is not None else None,
            "passed": bool(ok),
        }
        print(json.dumps(out, indent=2))
        return 0 if ok else 1
    for b in benches:
        print(f"bench {b.data.get('bench')}{' · ' + str(b.data['label']) if b.data.get('label') else ''}")
    for v in verdicts:
        mark = "ok  " if v.data.get("ok") else "FAIL"
        if "scenario" in v.data:
            print(f"{v.t:10.3f}  scenario {v.data['scenario']}: {v.data.get('outcome')}")
            continue
        print(f"{v.t:10.3f}  round {v.data.get('table_round') or v.data.get('round')}: {mark} {v.data.get('expected')}")
        for d in v.data.get("differences", []):
            print(f"            [{d['clause']}] {d['what']}: expected {d['expected']}, server {d['actual']}")
    for f in faults:
        print(f"{f.t:10.3f}  {f.data.get('op')}: {f.data.get('detail')}")
    print(f"events: {len(events)}; frames: " + ", ".join(f"{k} {v}" for k, v in sorted(frames.items())), end="")
    print(f"; frame errors: {errors}")
    if final is not None:
        print(final.data.get("summary") or ("PASS" if final_ok else "FAIL"))
    if final_ok and failed_rounds:
        rounds = ", ".join(str(v.data.get("table_round") or v.data.get("round")) for v in failed_rounds)
        print(f"FAIL: the recorded final verdict passed, but round verdicts failed (rounds {rounds}); they stand")
    return 0 if ok else 1


def _trace(args: argparse.Namespace, path: Path, lines: list[str]) -> int:
    try:
        records = read_trace(lines)
    except ValueError as exc:
        raise CliError(f"{path}: {exc}") from None
    if args.to:
        if not args.port:
            ports = sorted({r.port for r in records})
            raise CliError(f"--to needs --port (one of {', '.join(ports)})")
        try:
            line = SerialUrl(args.port, args.to)
        except TransportClosed as exc:
            raise CliError(str(exc)) from None
        try:
            sent = replay(records, line, args.port, args.dir, speed=args.speed)
        finally:
            line.close()
        print(f"sent {sent} bytes of {args.port} {args.dir} to {args.to}")
        return 0
    folded = 0
    for rec in records:
        kept = _CONTROL.sub(b"", rec.data)
        if not kept:
            folded += 1
            continue
        print(TraceRecord(rec.t, rec.port, rec.dir, kept, rec.first, rec.last).readable())
    print(f"({len(records)} chunks; {folded} of heartbeats and acknowledgements only, folded)")
    return 0
