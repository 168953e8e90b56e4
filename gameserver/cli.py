"""``xocdia-server``: start the reference game server.

    xocdia-server --db PATH --device NAME=URL ... --port N [--host H] [--config FILE] [--trace FILE] [--new-ledger]

Refuses to start, with one line on stderr and exit status 2, on a bad port, a port in use, an unopenable
device, an unwritable, empty, damaged or foreign database (``--new-ledger`` moves it aside and starts a new one)
or a bad config. Once serving it prints
``xocdia-server: listening on http://HOST:PORT`` on stdout (``--port 0`` picks a free port).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import logging
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import uvicorn

from gameserver.api import Api
from gameserver.config import ConfigError, ServerConfig, load_config
from gameserver.crash_points import CrashFileLedger
from gameserver.dialects import DIALECTS, LineConfigError
from gameserver.events import TableReport
from gameserver.gateway import DeviceError, DeviceGateway, DevicePort, open_serial
from gameserver.identity import IdentitySource, config_document
from gameserver.service import GameService
from gameserver.sqlite_ledger import LedgerError, SqliteLedger, set_aside
from gameserver.trace_file import RotatingTrace


class StartError(Exception):
    """The server cannot start; the message says why."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"xocdia-server: error: {message}\n")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"port must be an integer 0-65535, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535, got {value}")
    return value


def _device(text: str) -> tuple[str, str]:
    name, eq, url = text.partition("=")
    if not eq or not name or not url:
        raise argparse.ArgumentTypeError(f"device must be NAME=URL, got {text!r}")
    return name, url


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = _Parser(prog="xocdia-server", description="Reference Xoc Dia game server (system under test).")
    p.add_argument("--db", required=True, help="SQLite database file (created if missing)")
    p.add_argument("--port", required=True, type=_port, help="TCP port for HTTP/WebSocket (0: any free port)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--device", action="append", type=_device, default=[], metavar="NAME=URL",
        help="a table device's pyserial URL; repeatable (the port named 'lamp' gets lamp commands)",
    )  # fmt: skip
    p.add_argument(
        "--dialect", choices=list(DIALECTS), default=None,
        help="the device dialect of every line the config does not set (default: the config's, else xocdia-ascii)",
    )  # fmt: skip
    p.add_argument(
        "--new-ledger", action="store_true",
        help="start a new, empty ledger at --db even when a file is there (it is moved to DB.replaced-TIME)",
    )  # fmt: skip
    p.add_argument("--config", help="YAML config file (players, supervisors, engine settings, devices)")
    p.add_argument("--trace", help="JSON-lines serial trace (default: DB path + '.serial.jsonl' with devices)")
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    p.add_argument(
        "--crash-file",
        help='test hook: a file whose JSON {"round": R, "after": K} makes the process die before statement K+1 '
        "of the ledger write that ends round R (crash points, docs/adapters.md)",
    )
    return p


def _listen(host: str, port: int) -> socket.socket:
    try:
        sock = socket.create_server((host, port), backlog=2048)
    except OSError as exc:
        raise StartError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def serve(args: argparse.Namespace) -> int:
    """Start everything, serve until SIGINT/SIGTERM, then shut down. Raises StartError before serving."""
    _require_server_extra()
    try:
        config = load_config(args.config) if args.config else ServerConfig()
    except ConfigError as exc:
        raise StartError(str(exc)) from None
    devices = {**config.devices, **dict(args.device)}
    try:
        if args.new_ledger and (moved := set_aside(args.db)) is not None:
            print(f"xocdia-server: the ledger at {args.db} was moved to {moved}; starting a new one", file=sys.stderr)
        ledger = CrashFileLedger(args.db, args.crash_file) if args.crash_file else SqliteLedger(args.db)
    except LedgerError as exc:
        raise StartError(str(exc)) from None
    ports: dict[str, DevicePort] = {}
    trace: RotatingTrace | None = None
    with contextlib.ExitStack() as stack:
        stack.callback(ledger.close)
        for name, url in devices.items():
            try:
                ports[name] = open_serial(name, url)
            except DeviceError as exc:
                for port in ports.values():
                    port.close()
                raise StartError(str(exc)) from None
        sock = _listen(args.host, args.port)
        stack.callback(sock.close)
        if devices:
            trace_path = Path(args.trace or f"{args.db}.serial.jsonl")
            try:
                trace = stack.enter_context(RotatingTrace(trace_path, config.trace_max_bytes, config.trace_keep))
            except OSError as exc:
                raise StartError(f"cannot write trace {str(trace_path)!r}: {exc.strerror}") from None
        try:
            service = GameService(config.engine, ledger, time.time, config.wallets)
        except LedgerError as exc:
            raise StartError(str(exc)) from None
        except (ValueError, KeyError, TypeError, IndexError) as exc:  # rows that read back but make no table state
            raise StartError(f"cannot start from ledger {args.db!r}: damaged: {exc!r}; restore a backup") from None

        def submit(report: TableReport) -> None:
            service.submit(lambda e: e.report(report))

        def incident(device: str, why: str, frame: str) -> None:
            service.submit(lambda e: e.device_incident(device, why, frame))

        def failed(part: str, why: str) -> None:
            service.submit(lambda e: e.part_failed(part, why))

        def recovered(part: str) -> None:
            service.submit(lambda e: e.part_recovered(part))

        default = args.dialect or config.dialect
        dialects = {n: config.device_dialects.get(n, default) for n in ports}
        try:
            gateway = DeviceGateway(
                ports, submit, config.heartbeat_timeout_s, trace, event_clock=time.time,
                accept_untagged=config.accept_untagged, incident=incident, dialects=dialects,
                roles=config.device_roles, reopen=lambda name: open_serial(name, devices[name]),
                options=config.device_options, failed=failed, recovered=recovered, untagged=config.device_untagged,
            )  # fmt: skip
        except LineConfigError as exc:
            raise StartError(str(exc)) from None
        service.subscribe(gateway.on_events)

        def health() -> dict[str, Any]:
            return {"devices": gateway.status(), "failures": gateway.failures()}

        try:
            identity = IdentitySource(config_document(replace(config, dialect=default), ports))
        except OSError as exc:
            raise StartError(f"cannot read the server's own package files: {exc}") from None
        api = Api(service, config.tokens, health, identity.to_json)
        service.start()
        stack.callback(service.stop)
        gateway.start()
        stack.callback(gateway.stop)
        host, port = sock.getsockname()[:2]
        print(f"xocdia-server: listening on http://{host}:{port}", flush=True)
        loop = "uvloop" if sys.platform != "win32" else "asyncio"
        from gameserver.http_protocol import uvicorn_options  # needs httptools: checked above

        limits = config.http.fitted()
        if limits.max_connections < config.http.max_connections:
            logging.getLogger("gameserver.cli").warning(
                "http.max_connections lowered to %d: the open-file limit allows no more", limits.max_connections
            )
        server = uvicorn.Server(
            uvicorn.Config(
                api.app(), loop=loop, ws="websockets-sansio", lifespan="on", access_log=False,
                log_level=args.log_level, proxy_headers=False, **uvicorn_options(limits),
            )
        )  # fmt: skip
        server.run(sockets=[sock])
        return 1 if service.failure else 0
    return 0


def _require_server_extra() -> None:
    """Raises StartError naming ``pip install 'xocdia-hil[server]'`` when its HTTP parser or event loop is missing."""
    wanted = {"httptools": "httptools"} | ({"uvloop": "uvloop"} if sys.platform != "win32" else {})
    missing = [dist for module, dist in wanted.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise StartError(f"needs {', '.join(missing)}, not installed: pip install 'xocdia-hil[server]'")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2: refused to start)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="xocdia-server: %(name)s: %(message)s")
    try:
        return serve(args)
    except StartError as exc:
        print(f"xocdia-server: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
