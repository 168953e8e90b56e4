"""``xocdia-hil bench check B [--tags EXPR] [--features DIR ...] [--timeout S] [--json]``: what a bench needs,
checked before anything runs on it.

    xocdia-hil bench check bench.yaml

It loads the bench file and its adapter class, reaches the server (a URL answers HTTP; a command is found), opens every
device line (a pyserial URL opens; a ``listen://`` address can be bound, and is released; an ``mqtt://`` broker takes
the line, which is disconnected again; a pty pair can be made), on a bench whose server is attached by URL reads what
identifies itself at the far end of each ``url`` line (the server's HELLO, within ``--timeout``: a line whose far end
identifies as a device, sends no frame of the dialect, or (``listen://``) never dials, is a problem; one that stays
silent is said to, as a server's end may wait for the device to speak first; so is a dialect with no ``identities``),
lists what the adapter can optionally do (its capabilities, docs/adapters.md), and, on a bench that declares an account
pool (``accounts``, docs/benches.md), checks that the pool opens every player of the selected scenarios with the
balance the scenario gives it (``Given player X has a balance of N``). Every problem is one line,
``bench NAME: WHAT: PROBLEM``, and the exit status is 2 when there is any (0 otherwise); the checks run side by side,
each within ``--timeout`` seconds, so a bench whose server is down is reported in a few seconds. ``xocdia-hil
certify`` runs the same checks first and runs no scenario on a bench that fails them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bench.adapters import capabilities
from harness.bench.adapters.base import GameServerAdapter
from harness.bench.adapters.loader import load_adapter
from harness.bench.config import Bench, load_bench
from harness.cert.gherkin_lint import feature_files
from harness.cert.report.clauses import matches
from harness.cli.common import CliError, add_dialect_option
from harness.errors import InputError
from harness.files import FEATURES
from harness.wire.dialects.base import LineSpec
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Hello, Source
from harness.wire.transports.base import TransportClosed
from harness.wire.transports.listen import ListenPort, is_listen_url, parse_listen_url
from harness.wire.transports.mqtt import MqttPort, is_mqtt_url

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
    #: What the account check did, in one line (``""``: it was not asked for); ``accounts_checked`` is False where
    #: the bench has no account pool to check (the bench or its adapter creates every scenario's wallets).
    accounts: str = ""
    accounts_checked: bool = False
    #: On a bench whose server is attached by URL and whose lines are ``url`` lines: per line, what identified
    #: itself at the far end (the server's HELLO: unit and firmware), or that the line's dialect declares none.
    identities: list[str] = field(default_factory=list)

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
    c.add_argument("--tags", default="", help="the scenarios whose opening balances are checked, as certify's --tags")
    c.add_argument(
        "--features",
        action="append",
        default=[],
        help="folder of .feature files whose balances are checked, repeatable (default: 'shipped', the shipped suite)",
    )
    c.add_argument("--json", action="store_true", help="print one JSON object: problems, checked, capabilities")
    add_dialect_option(c)
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        raise InputError(f"--timeout {args.timeout:g}: must be a number of seconds > 0")
    bench = load_bench(args.bench, args.dialect)
    matches(args.tags, ())  # a tag expression that does not parse is an InputError
    needs = balances_needed(_folders(args.features), args.tags, bench.name)
    result = check_bench(bench, args.timeout, needs)
    if args.json:
        print(
            json.dumps(
                {
                    "bench": result.bench,
                    "ready": result.ready,
                    "problems": result.problems,
                    "checked": result.checked,
                    "capabilities": result.capabilities,
                    "accounts": {"checked": result.accounts_checked, "what": result.accounts},
                    "identities": result.identities,
                },
                indent=2,
            )
        )
        return 0 if result.ready else 2
    for line in result.checked:
        print(f"ok: {line}")
    for line in result.identities:
        print(line)
    print(f"adapter capabilities: {', '.join(result.capabilities) or 'none beyond the interface'}")
    print(result.accounts)
    for problem in result.problems:
        print(problem, file=sys.stderr)
    if result.ready:
        print(f"bench {result.bench}: ready")
    return 0 if result.ready else 2


def _folders(names: list[str]) -> list[Path]:
    """The folders of ``--features`` (``shipped``, the default, is the shipped suite). Raises CliError naming a
    folder with no ``.feature`` file in it."""
    folders = []
    for name in names or ["shipped"]:
        folder = FEATURES if name == "shipped" else Path(name)
        if not any(folder.rglob("*.feature")):
            raise CliError(f"--features {name}: no .feature files there (a folder, or 'shipped' for the shipped suite)")
        folders.append(folder)
    return folders


def check_bench(
    bench: Bench, timeout_s: float = DEFAULT_TIMEOUT_S, needs: list[BalanceNeed] | None = None
) -> BenchCheck:
    """Check ``bench``: its adapter loads, its server is reached, each device line opens, and (with ``needs``, the
    selected scenarios' opening balances, :func:`balances_needed`) its account pool gives every balance
    (:func:`check_accounts`). The reaching and opening run side by side and each has ``timeout_s`` (a check still
    running then is a problem), so the whole takes about ``timeout_s`` at most. Never raises for what it checks:
    every failure is a line of :attr:`BenchCheck.problems`, ``bench NAME: WHAT: PROBLEM``, the account pool's last."""
    result = BenchCheck(bench.name)
    if needs is not None:
        result.accounts, pool_problems = check_accounts(bench, needs)
        result.accounts_checked = bench.accounts is not None
    else:
        pool_problems = []
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
        url = bench.device_urls.get(line.name, "")
        if bench.transport == "url" and bench.server.kind == "url" and not is_mqtt_url(url):
            # the server runs: its end of each line answers
            if line.dialect.capabilities.identities:
                checks[f"line {line.name} ({url})"] = lambda line=line, url=url: _read_identity(  # type: ignore[misc]
                    line, url, timeout_s, result.identities
                )
                continue
            result.identities.append(
                f"line {line.name}: dialect {line.dialect.name} declares no identities (no HELLO): only opened"
            )
        if bench.transport == "url" and is_listen_url(bench.device_urls[line.name]):
            url = bench.device_urls[line.name]
            checks[f"line {line.name} ({url})"] = lambda url=url: _bind_listen(url)  # type: ignore[misc]
        elif bench.transport == "url" and is_mqtt_url(bench.device_urls[line.name]):
            url = bench.device_urls[line.name]
            check = _reach_broker(line.name, url, timeout_s)
            checks[f"line {line.name} ({url})"] = check
        elif bench.transport == "url":
            url = bench.device_urls[line.name]
            checks[f"line {line.name} ({url})"] = lambda url=url: _open_serial(url, timeout_s)  # type: ignore[misc]
        elif bench.transport == "pty":
            checks[f"line {line.name} (pty)"] = _open_pty
    if not checks:
        result.problems += pool_problems
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
    order = {f"line {line.name}:": i for i, line in enumerate(bench.lines)}
    result.identities.sort(key=lambda text: order.get(text.split(" ", 2)[0] + " " + text.split(" ", 2)[1], 0))
    result.problems += pool_problems
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


def _bind_listen(url: str) -> str:
    """``""`` when the ``listen://`` address can be bound and listened on (then it is released at once: the run binds
    it again); else the problem, e.g. ``cannot listen on 127.0.0.1:4001 (Address already in use)``."""
    address = parse_listen_url(url)  # validated with the bench file
    try:
        ListenPort("check", address.host, address.port).close()
    except TransportClosed as exc:
        cause = exc.__cause__
        why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(exc)
        return f"cannot listen on {address.hostport} ({why})"
    return ""


def _reach_broker(line: str, url: str, timeout_s: float) -> Callable[[], str]:
    """A check that gives ``""`` when the line's ``mqtt://`` broker takes the line (connects and subscribes it
    within ``timeout_s``; then it disconnects at once); else the problem in one line, e.g. ``cannot reach the MQTT
    broker at 127.0.0.1:1883 (Connection refused)``."""

    def check() -> str:
        try:
            MqttPort(line, url, connect_timeout_s=timeout_s).close()
        except TransportClosed as exc:
            return str(exc).removeprefix(f"{line}: ")
        return ""

    return check


class _Line:
    """One ``url`` line opened at the bench's device end for :func:`_read_identity`: dialled (a pyserial URL) or
    listened on (``listen://``, the server dials it); :meth:`read` returns what arrived within a short wait."""

    def __init__(self, name: str, url: str, timeout_s: float) -> None:
        self.listen: ListenPort | None = None
        self.port: Any = None
        if is_listen_url(url):
            address = parse_listen_url(url)
            self.listen = ListenPort(name, address.host, address.port)  # TransportClosed: cannot bind
        else:
            import serial

            self.port = serial.serial_for_url(url, timeout=0.05, write_timeout=timeout_s, do_not_open=True)
            self.port.open()

    @property
    def connected(self) -> bool:
        return self.listen is None or self.listen.connected

    def read(self, now: float) -> bytes:
        if self.listen is not None:
            self.listen.tick(now)
            return self.listen.read(0.05) if self.listen.connected else b""
        return bytes(self.port.read(4096))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.listen is not None:
                self.listen.close()
            if self.port is not None:
                self.port.close()


def _read_identity(line: LineSpec, url: str, timeout_s: float, found: list[str]) -> str:
    """Open ``line`` at the bench's device end (dial its pyserial URL, or listen on its ``listen://`` address and
    wait for the server to dial) and read, for up to ``timeout_s`` seconds and without answering, what its far end
    sends, decoded in the line's dialect. The far end must be the game server's end of the line: its HELLO (``SRV-
    unit``, protocol, firmware) is appended to ``found``; a server end that speaks only other frames (the polls of a
    bus master, heartbeats) is appended as such, and so is one that says nothing (a server's end may wait for the
    device's HELLO). Returns ``""`` then; otherwise the problem: the line does not open, no server dialled, only
    bytes that are no frame of the dialect came, or the far end identifies as a device (a HELLO from ``BOWL-...``:
    the URL reaches another device end, not the server)."""
    try:
        opened = _Line(line.name, url, timeout_s)
    except TransportClosed as exc:
        cause = exc.__cause__
        why = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(exc)
        return f"cannot listen on {url.removeprefix('listen://')} ({why})"
    except Exception as exc:  # pyserial's SerialException, OSError, ValueError: any failure to open is the answer
        return f"cannot open ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
    decoder = line.dialect.codec().decoder()
    spoke: list[str] = []
    bad: list[BadFrame] = []
    deadline = time.monotonic() + timeout_s
    connected = False
    try:
        while (now := time.monotonic()) < deadline:
            try:
                data = opened.read(now)
            except (TransportClosed, OSError) as exc:
                return f"the far end closed the line before it identified itself ({exc})"
            connected = connected or opened.connected
            for item in decoder.feed(data) if data else []:
                if isinstance(item, BadFrame):
                    bad.append(item)
                    continue
                message = item.message
                if isinstance(message, Hello) and item.src is Source.SERVER:
                    found.append(
                        f"line {line.name}: the server's end identified itself: {message.id}"
                        f" (protocol {message.proto}, firmware {message.fw})"
                    )
                    return ""
                if isinstance(message, Hello):
                    return (
                        f"the far end identifies as {message.id} (firmware {message.fw}), a {item.src.value} device,"
                        " not the game server's end of the line"
                    )
                if item.src is Source.SERVER and message.TYPE not in spoke:
                    spoke.append(message.TYPE)
            if spoke and time.monotonic() >= deadline - timeout_s / 2:
                break  # the server's end speaks; give its HELLO half the time, not all of it
    finally:
        opened.close()
    if spoke:
        found.append(
            f"line {line.name}: the server's end answers ({', '.join(spoke)}) but sent no HELLO within {timeout_s:g} s"
        )
        return ""
    if not connected:
        return f"no connection from the server within {timeout_s:g} s"
    if bad:
        return (
            f"the far end sent {sum(len(b.raw) for b in bad)} bytes that are no {line.dialect.name} frame"
            f" ({bad[0].reason.value}: {bad[0].detail}) and no HELLO within {timeout_s:g} s"
        )
    found.append(
        f"line {line.name}: the far end said nothing within {timeout_s:g} s (a server's end that waits for the"
        " device to speak first: the line opens, its identity is not read)"
    )
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


@dataclass(frozen=True, slots=True)
class BalanceNeed:
    """A selected scenario's player and the opening balance it is given (``Given player X has a balance of N``,
    in the scenario or its Background): ``where`` is the scenario's ``file:line``, ``scenario`` its title."""

    where: str
    scenario: str
    player: str
    balance: int


_BALANCE_STEP = re.compile(r"(?:Given|When|Then|And|But|\*)\s+player\s+(\w+)\s+has a balance of\s+([\d,]+)\s*$")
_SCENARIO = ("Scenario:", "Scenario Outline:", "Scenario Template:", "Example:")


def balances_needed(folders: list[Path], tags: str = "", bench_name: str = "") -> list[BalanceNeed]:
    """Every opening balance the scenarios under ``folders`` that match ``tags`` give their players, in file order;
    a player given two balances in one scenario counts with the last. A scenario tagged ``@bench:NAME`` for another
    bench than ``bench_name`` runs no table, so it needs none. Tags are the feature's, its Rule's and the
    scenario's. A balance written as an outline's ``<placeholder>`` is not read (it is not known before the
    Examples row runs).

    Raises:
        InputError: a feature file that cannot be read as UTF-8 text (one line naming it).
    """
    needs: list[BalanceNeed] = []
    for path in feature_files(folders):
        needs += _file_needs(path, tags, bench_name)
    return needs


def _file_needs(path: Path, tags: str, bench_name: str) -> list[BalanceNeed]:
    shown = _shown(path)
    pending: list[str] = []
    feature_tags: list[str] = []
    outer: list[str] = []  # the feature's tags, and in a Rule its Rule's too
    feature_background: dict[str, int] = {}
    background = feature_background  # in a Rule: the feature's, then the Rule's own
    scenarios: list[tuple[str, str, list[str], dict[str, int]]] = []
    target: dict[str, int] | None = None
    fence = ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{shown}: cannot read it as UTF-8 text ({exc})") from None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if fence:
            fence = "" if line.startswith(fence) else fence
            continue
        if line.startswith(('"""', "```")):
            fence = line[:3]
            continue
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            pending += line.split()
            continue
        if line.startswith("Feature:"):
            feature_tags, outer, pending, target = pending, pending, [], None
        elif line.startswith("Rule:"):
            outer, pending, target = feature_tags + pending, [], None
            background = dict(feature_background)
        elif line.startswith("Background:"):
            target, pending = background, []
        elif line.startswith(_SCENARIO):
            title = line.split(":", 1)[1].strip()
            target = dict(background)
            scenarios.append((f"{shown}:{number}", title, outer + pending, target))
            pending = []
        elif line.startswith(("Examples:", "Scenarios:")):
            target, pending = None, []
        elif target is not None and (step := _BALANCE_STEP.fullmatch(line)):
            target[step.group(1)] = int(step.group(2).replace(",", ""))
    needs = []
    for where, title, scenario_tags, players in scenarios:
        benches = {t.removeprefix("@bench:") for t in scenario_tags if t.startswith("@bench:")}
        if (benches and bench_name not in benches) or not matches(tags, scenario_tags):
            continue
        needs += [BalanceNeed(where, title, player, money) for player, money in players.items()]
    return needs


def _shown(path: Path) -> str:
    """``path`` as a lab reads it: under the shipped suite ``features/...``, else relative to here when it can be."""
    for base, prefix in ((FEATURES, "features/"), (Path.cwd(), "")):
        with contextlib.suppress(ValueError):
            return prefix + path.resolve().relative_to(base.resolve()).as_posix()
    return str(path)


def check_accounts(bench: Bench, needs: list[BalanceNeed]) -> tuple[str, list[str]]:
    """Check ``needs`` against the bench's account pool (``accounts``). Returns what was checked, in one line, and
    one problem a line, ``bench NAME: FILE:LINE "SCENARIO": player P needs a balance of N; WHY``, for each balance
    the pool cannot give: no account of that id, or one that opens with another balance. On a bench with no pool
    (the harness or the adapter creates every scenario's wallets) nothing is checked and the line says so."""
    if bench.accounts is None:
        if bench.server.kind == "url":
            return "wallets: no account pool declared (accounts:): the adapter creates each scenario's players", []
        return f"wallets: the bench creates each scenario's players itself (server.kind {bench.server.kind})", []
    pool = bench.accounts
    problems = []
    for need in needs:
        has = pool.get(need.player)
        if has == need.balance:
            continue
        why = (
            f"the account pool has no {need.player}" if has is None else f"the pool's {need.player} opens with {has:,}"
        )
        problems.append(
            f'bench {bench.name}: {need.where} "{need.scenario}": player {need.player} needs a balance of '
            f"{need.balance:,}; {why}"
        )
    return f"account pool: {len(pool)} accounts for {len(needs)} opening balances of the selected scenarios", problems
