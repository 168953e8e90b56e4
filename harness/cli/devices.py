"""``xocdia-hil devices``: run the emulated table in real time with its five devices on real serial ports.

Prints, per device, the path or URL a game server (or a person with ``python -m serial.tools.miniterm``) opens::

    xocdia-hil devices --profile compressed --seed 7 --transport pty
    xocdia-hil devices --transport rfc2217:7000          # ports 7000-7004, like a lab's ser2net
    xocdia-hil devices --lamp fixed --no-ack             # no server: the table paces itself; watch with miniterm

Runs until Ctrl-C or ``--duration`` seconds. The clock is :class:`harness.wire.realtime.SelectEnvironment`: it waits
on the device fds, so server frames are answered as they arrive.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from harness.bench.devices.emulated import EmulatedTable
from harness.bench.tabletap import TableTap
from harness.cli.common import CliError, add_dialect_option, non_negative_int
from harness.feed import Feed, FeedEvent, FeedKind
from harness.files import load_profile
from harness.live.session import FeedSession, add_feed_options
from harness.wire.dialects import DEFAULT_DIALECT, LineSpec, load_dialect, plan_lines
from harness.wire.realtime import SelectEnvironment
from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.base import Transport, TransportClosed
from harness.wire.transports.line import DEFAULT_LINE, LineSettings, LineSettingsError
from harness.wire.transports.netserver import SerialServer
from harness.wire.transports.paced import pace_lines
from harness.wire.transports.pty import PtyPort

TRANSPORT_HELP = "pty (default), rfc2217:PORT or socket:PORT (five TCP ports from PORT)"


#: Wire revisions the emulated devices can speak (docs/protocol.md): 1.1 added the round tag, 1.2 the event time.
REVISIONS = ("1.0", "1.1", "1.2")


def parse_transport(text: str) -> tuple[str, int]:
    """``pty`` -> ("pty", 0); ``rfc2217:7000`` -> ("rfc2217", 7000). Raises ArgumentTypeError naming the
    value."""
    if text == "pty":
        return "pty", 0
    kind, _, port = text.partition(":")
    if kind in ("rfc2217", "socket") and port.isdigit() and 1 <= int(port) <= 65531:
        return kind, int(port)
    raise argparse.ArgumentTypeError(f"expected {TRANSPORT_HELP}; got {text!r}")


def parse_line(text: str) -> LineSettings:
    """``9600`` or ``9600:8N1`` (data bits, parity N/E/O/M/S, stop bits 1, 1.5 or 2). Raises ArgumentTypeError
    naming the value and the allowed forms."""
    baud, _, frame = text.partition(":")
    frame = frame or "8N1"
    try:
        stop = float(frame[2:]) if len(frame) >= 3 else None
        return LineSettings(int(baud), int(frame[0]), frame[1], stop if stop is not None else 1)
    except (ValueError, IndexError, LineSettingsError) as exc:
        raise argparse.ArgumentTypeError(f"expected BAUD or BAUD:8N1 (e.g. 9600:7E2); got {text!r} ({exc})") from None


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "devices",
        help="run the emulated table's devices on real serial ports (pty or RFC 2217 / TCP)",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    p.add_argument("--profile", default="compressed", help="profile name or YAML path (default compressed)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="root seed (default 0)")
    p.add_argument("--transport", type=parse_transport, default=("pty", 0), help=TRANSPORT_HELP)
    p.add_argument(
        "--lamp",
        choices=("server", "fixed"),
        default="server",
        help="server: a game server drives the lamp port (default); fixed: the table opens rounds itself",
    )
    p.add_argument(
        "--revision",
        choices=REVISIONS,
        default=REVISIONS[-1],
        help="wire revision the server speaks: 1.0 sends neither optional field, 1.1 adds the round tag, "
        "1.2 (default) also the event time at= (docs/protocol.md §6)",
    )
    add_dialect_option(p)
    p.add_argument(
        "--line",
        type=parse_line,
        default=DEFAULT_LINE,
        metavar="BAUD[:8N1]",
        help="line speed the devices send at, e.g. 9600 or 9600:7E2 (default 115200:8N1; docs/devices.md)",
    )
    p.add_argument("--no-ack", action="store_true", help="do not wait for ACKs (nothing answers a terminal)")
    p.add_argument("--duration", type=positive_float, default=None, help="stop after this many seconds")
    p.add_argument("--trace", type=Path, default=None, help="save the serial trace to PATH.jsonl, PATH.txt")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print each round's state changes")
    p.add_argument("--json", action="store_true", help="print the ports and the closing summary as JSON")
    add_feed_options(p, pace=False)
    p.set_defaults(func=run)


def _print_rounds(event: FeedEvent) -> None:
    """A feed sink: each round's state changes and lamp commands as one line each, as they happen."""
    d = event.data
    if event.kind == FeedKind.ROUND:
        state = str(d["state"])
        if state == "ended":
            state = f"{d['status']} {d.get('faces') or d.get('clause') or ''}".rstrip()
        print(f"{event.t:9.2f}  round {d['round']}: {state}", flush=True)
    elif event.kind == FeedKind.FRAME and d.get("lamp"):
        print(f"{event.t:9.2f}  lamp {d['msg']}", flush=True)
    elif event.kind == FeedKind.FRAME and d.get("dir") == "link":
        print(f"{event.t:9.2f}  {d['line']} line {d['msg']}{' (' + d['error'] + ')' if d.get('error') else ''}")


def run(args: argparse.Namespace) -> int:
    with FeedSession(args.record, args.live, "devices", hold=args.hold) as session:
        return _run(args, session)


def _open_transports(kind: str, base_port: int, link_dir: Path, lines: list[LineSpec]) -> dict[str, Transport]:
    """One transport per line: a pty (a ``tcp`` line: a raw TCP port), or TCP ports from ``base_port`` in line
    order."""
    opened: dict[str, Transport] = {}
    try:
        for i, line in enumerate(lines):
            name = line.name
            if kind == "pty" and line.medium == "tcp":
                opened[name] = SerialServer(name, "127.0.0.1", 0, rfc2217=False)
            elif kind == "pty":
                opened[name] = PtyPort(name, link_dir)
            else:
                opened[name] = SerialServer(name, "127.0.0.1", base_port + i, rfc2217=kind == "rfc2217")
    except TransportClosed as exc:
        for transport in opened.values():
            transport.close()
        raise CliError(str(exc)) from None
    return opened


def _run(args: argparse.Namespace, session: FeedSession) -> int:
    profile = load_profile(args.profile)
    if args.trace is not None and not args.trace.parent.is_dir():  # checked now: the trace is written at the end
        raise CliError(f"--trace {args.trace}: folder {args.trace.parent} does not exist")
    kind, base_port = args.transport
    lines = plan_lines(load_dialect(args.dialect or DEFAULT_DIALECT, field="--dialect"))
    link_dir = Path(tempfile.mkdtemp(prefix="xocdia-devices-"))
    transports = _open_transports(kind, base_port, link_dir, lines)
    env = SelectEnvironment()
    paced: dict[str, Transport] = dict(transports)
    pace_lines(paced, {line.name: line.name for line in lines}, args.line, lambda: float(env.now))
    recorder = TraceRecorder(clock=lambda: float(env.now)) if args.trace is not None else None
    wired: dict[str, Transport] = {
        line.name: TracingTransport(paced[line.name], recorder, line.trace_name)
        if recorder is not None
        else paced[line.name]
        for line in lines
    }
    table = EmulatedTable(
        profile,
        args.seed,
        wired,
        lines=lines,
        env=env,
        server_lamp=args.lamp == "server",
        require_ack=not args.no_ack,
        round_tags=args.revision != "1.0",
        event_times=args.revision == "1.2",
    )
    env.fds = table.hub.fds
    env.on_ready = table.wake
    feed = session.feed if session.feed is not None else Feed(keep=False)
    if not args.quiet and not args.json:
        feed.sinks.append(_print_rounds)
    if feed.sinks or feed.writers or session.server is not None:
        TableTap(table, feed, lines, lambda: float(env.now), recorder, bench="devices", seed=args.seed)
    ports = {}
    for line in lines:
        transport = transports[line.name]
        extra = f" -> {transport.slave_path}" if isinstance(transport, PtyPort) else ""
        carried = "" if len(line.roles) == 1 else f"  ({', '.join(r.value for r in line.roles)})"
        ports[line.name] = transport.address
        if not args.json:
            print(f"{line.name.upper():<8} {transport.address}{extra}{carried}")
    if args.json:
        print(json.dumps({"ports": ports}), flush=True)
    else:
        print(f"watch one: {sys.executable} -m serial.tools.miniterm {transports[lines[0].name].address} 115200")
        if args.lamp == "server":
            print("the table waits for a game server's OPEN on the LAMP line (--lamp fixed: it opens rounds itself)")
    sys.stdout.flush()
    try:
        env.sync()
        if args.duration is not None:
            env.run(until=env.now + args.duration)
        else:
            env.run()
    except KeyboardInterrupt:
        pass
    finally:
        table.hub.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(link_dir)
        if recorder is not None:
            with open(f"{args.trace}.jsonl", "w", encoding="utf-8") as out:
                recorder.write_jsonl(out)
            with open(f"{args.trace}.txt", "w", encoding="utf-8") as out:
                recorder.write_text(out)
    ended = table.model.rounds_ended
    lag_ms = env.max_lag * 1000
    if args.json:
        print(json.dumps({"seconds": round(env.now, 3), "rounds_ended": ended, "max_lag_ms": round(lag_ms, 3)}))
        return 0
    print(f"stopped after {env.now:.1f} s; {ended} rounds ended at the table; max lag {lag_ms:.1f} ms")
    return 0
