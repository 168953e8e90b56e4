"""``xocdia-hil bench check B [--timeout S] [--json]``: what a bench needs, checked before anything runs on it.

    xocdia-hil bench check bench.yaml

It loads the bench file and its adapter class, reaches the server (a URL answers HTTP; a command is found), opens
every device line (a pyserial URL opens; a pty pair can be made), and lists what the adapter can optionally do
(its capabilities, docs/adapters.md). Every problem is one line, ``bench NAME: WHAT: PROBLEM``, and the exit status
is 2 when there is any (0 otherwise); the checks run side by side, each within ``--timeout`` seconds, so a bench
whose server is down is reported in a few seconds. ``xocdia-hil certify`` runs the same checks first and runs no
scenario on a bench that fails them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from harness.bench.adapters import capabilities
from harness.bench.adapters.base import GameServerAdapter
from harness.bench.adapters.loader import load_adapter
from harness.bench.config import Bench, load_bench
from harness.cli.common import add_dialect_option
from harness.errors import InputError

#: Seconds each check may take (the server's answer, a line's opening) before it is a problem.
DEFAULT_TIMEOUT_S = 3.0
#: Calls an adapter may override; the interface's default refuses them (docs/adapters.md).
OPTIONAL_CALLS = ("place_bet_for_round", "correct")


@dataclass
class BenchCheck:
    """What :func:`check_bench` found: one line per problem (empty: the bench is ready), what was checked and
    found good, and the adapter's capabilities."""

    bench: str
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    capabilities: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not self.problems


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("bench", help="check a bench before running on it: server, device lines, adapter")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    c = actions.add_parser("check", help="reach the server, open every device line, list the adapter's capabilities")
    c.add_argument("bench", help="bench file or shipped name (xocdia-hil fixtures benches)")
    c.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds each check may take (default {DEFAULT_TIMEOUT_S:g})",
    )
    c.add_argument("--json", action="store_true", help="print one JSON object: problems, checked, capabilities")
    add_dialect_option(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise InputError(f"--timeout {args.timeout:g}: must be a number of seconds > 0")
    result = check_bench(load_bench(args.bench, args.dialect), args.timeout)
    if args.json:
        print(
            json.dumps(
                {
                    "bench": result.bench,
                    "ready": result.ready,
                    "problems": result.problems,
                    "checked": result.checked,
                    "capabilities": result.capabilities,
                },
                indent=2,
            )
        )
        return 0 if result.ready else 2
    for line in result.checked:
        print(f"ok: {line}")
    print(f"adapter capabilities: {', '.join(result.capabilities) or 'none beyond the interface'}")
    for problem in result.problems:
        print(problem, file=sys.stderr)
    if result.ready:
        print(f"bench {result.bench}: ready")
    return 0 if result.ready else 2


def check_bench(bench: Bench, timeout_s: float = DEFAULT_TIMEOUT_S) -> BenchCheck:
    """Check ``bench``: its adapter loads, its server is reached, each device line opens. The checks run side by
    side and each has ``timeout_s`` (a check still running then is a problem), so the whole takes about
    ``timeout_s`` at most. Never raises for what it checks: every failure is a line of :attr:`BenchCheck.problems`,
    ``bench NAME: WHAT: PROBLEM``."""
    result = BenchCheck(bench.name)
    checks: dict[str, Callable[[], str]] = {}
    try:
        adapter = load_adapter(bench.server.adapter, bench.server.adapter_options())
    except InputError as exc:
        result.problems.append(f"bench {bench.name}: {exc}")
    else:
        result.checked.append(f"adapter {bench.server.adapter} loads")
        result.capabilities = adapter_capabilities(adapter)
    if bench.server.kind == "url":
        checks[f"server {bench.server.url}"] = lambda: _reach_url(bench.server.url, timeout_s)
    elif bench.server.kind == "command":
        checks[f"server command {bench.server.command[0]}"] = lambda: _find_command(bench.server.command[0])
    for line in bench.lines:
        if bench.transport == "url":
            url = bench.device_urls[line.name]
            checks[f"line {line.name} ({url})"] = lambda url=url: _open_serial(url, timeout_s)  # type: ignore[misc]
        elif bench.transport == "pty":
            checks[f"line {line.name} (pty)"] = _open_pty
    if not checks:
        return result
    pool = ThreadPoolExecutor(max_workers=len(checks), thread_name_prefix="bench-check")
    futures = {what: pool.submit(check) for what, check in checks.items()}
    for what, future in futures.items():
        try:
            found = future.result(timeout=timeout_s + 1.0)
        except FutureTimeout:
            result.problems.append(f"bench {bench.name}: {what}: no answer within {timeout_s:g} s")
            continue
        if found:
            result.problems.append(f"bench {bench.name}: {what}: {found}")
        else:
            result.checked.append(what)
    pool.shutdown(wait=False, cancel_futures=True)  # a check stuck past its time is left to end on its own
    return result


def adapter_capabilities(adapter: GameServerAdapter) -> list[str]:
    """The optional capabilities (:mod:`harness.bench.adapters.capabilities`) ``adapter`` offers, and the optional
    calls it overrides, by name; a capability that is present but off says so (``Restartable (off)``)."""
    found = []
    for name in capabilities.__all__:
        protocol = getattr(capabilities, name)
        if isinstance(adapter, protocol):
            off = isinstance(adapter, capabilities.Restartable) and name in ("Restartable", "Faultable")
            found.append(f"{name} (off)" if off and not _can_restart(adapter) else name)
    for call in OPTIONAL_CALLS:
        if getattr(type(adapter), call) is not getattr(GameServerAdapter, call):
            found.append(call)
    return found


def _can_restart(adapter: GameServerAdapter) -> bool:
    try:
        return bool(adapter.can_restart)  # type: ignore[attr-defined]
    except Exception:  # an adapter's property that fails before start: not known, so not claimed
        return False


def _reach_url(url: str, timeout_s: float) -> str:
    """``""`` when the server at ``url`` answers HTTP at all (any status: it is there); else the problem."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as reply:
            reply.read(0)
    except urllib.error.HTTPError:
        return ""
    except urllib.error.URLError as exc:
        reason = exc.reason
        text = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
        return f"not reachable ({text})"
    except (OSError, TimeoutError) as exc:
        return f"not reachable ({exc.strerror if isinstance(exc, OSError) and exc.strerror else exc or 'timed out'})"
    return ""


def _find_command(program: str) -> str:
    """``""`` when ``program`` is on PATH, beside this interpreter, or a file that exists; else the problem."""
    here = os.path.dirname(sys.executable)
    if shutil.which(program, path=os.pathsep.join([here, os.environ.get("PATH", "")])) or os.path.isfile(program):
        return ""
    return "not found on PATH nor beside this Python (install xocdia-hil, or fix server.command)"


def _open_serial(url: str, timeout_s: float) -> str:
    """``""`` when the pyserial URL opens (then it is closed again); else the problem."""
    import serial

    try:
        port = serial.serial_for_url(url, timeout=timeout_s, write_timeout=timeout_s, do_not_open=True)
        port.open()
    except (serial.SerialException, OSError, ValueError) as exc:
        return f"cannot open ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    port.close()
    return ""


def _open_pty() -> str:
    """``""`` when a pty pair can be made on this machine; else the problem."""
    try:
        leader, follower = os.openpty()
    except OSError as exc:
        return f"cannot make a pty pair ({exc.strerror})"
    os.close(leader)
    os.close(follower)
    return ""
