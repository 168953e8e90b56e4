"""The reference server as a child process of the HTTP adapter: its config file, its command line, the port it says
it listens on, SIGKILL and a restart on the same command line.

Guarantees: :meth:`ServerProcess.spawn` with :meth:`ServerProcess.wait_listening` either yields the port the server
printed (``listening on HOST:PORT``) within the bound or raises ``AdapterError("start_failed")`` (a process that
exits) or returns None (no port in time); :meth:`ServerProcess.terminate` ends the process (SIGTERM, then SIGKILL)
and closes the pipes of every process this object started, keeping the server's stderr for evidence. One stdout
reader thread per process started; none is left reading a closed pipe.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import Any

from gameserver.dialects import DIALECTS as SERVER_DIALECTS
from harness.bench.adapters.base import ServerSetup
from harness.errors import AdapterError

START_TIMEOUT_S = 20.0
PUMP_JOIN_S = 2.0  # at stop: how long to wait for an ended process's stdout reader to reach the end


def server_config(setup: ServerSetup, tokens: Mapping[str, str], supervisor: str, boss: str) -> dict[str, Any]:
    """The server's config for a bench run: the players with their tokens and opening balances, one supervisor
    (``supervisor`` with token ``boss``), the bench's timings and table configuration (chip unit, limits, re-shake
    cap, timeouts: :meth:`ServerSetup.reference_engine`), and each device line's dialect, roles and options
    (docs/server.md, "Device dialects"); a line whose dialect declares no ``round_tags`` gets
    ``untagged_reports: accept`` (its devices cannot tag a report, so the server accepts their untagged results and
    lifts on that line alone; the other lines refuse them as ever). Raises ``AdapterError("start_failed")`` naming
    ``devices.dialect`` and the dialects the server speaks when a line speaks another one (a lab's dialect certifies
    on the in-process bench), ``AdapterError("bad_setup")`` naming a table field the reference server cannot follow."""
    for line in setup.lines.values():
        if line.dialect.name not in SERVER_DIALECTS:
            raise AdapterError(
                "start_failed",
                f"devices.dialect: the reference server process speaks {', '.join(SERVER_DIALECTS)}; got"
                f" {line.dialect.name!r} on line {line.name} (a lab's dialect certifies on the in-process bench)",
            )
    config: dict[str, Any] = {
        "engine": setup.reference_engine(),
        "players": [{"id": p.player_id, "token": tokens[p.player_id], "balance": p.balance} for p in setup.players],
        "supervisors": [{"id": supervisor, "token": boss}],
        "heartbeat_timeout_s": setup.heartbeat_s,
    }
    if setup.lines:
        config["devices"] = {
            name: {
                "url": str(setup.devices[name]),
                "dialect": line.dialect.name,
                "roles": [r.value for r in line.roles],
                **({"options": opts} if (opts := line.dialect.server_options()) else {}),
                **({} if line.dialect.capabilities.round_tags else {"untagged_reports": "accept"}),
            }
            for name, line in setup.lines.items()
        }
    return config


class ServerProcess:
    """The server process the adapter started (at most one running), the ones it killed (pipes closed at
    :meth:`terminate`), and the command line of the last one killed, for a restart."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.stderr = ""  # what the process ended by terminate wrote to stderr
        self.argv: list[str] = []  # the command line of the process kill ended (for a restart)
        self._lines: queue.Queue[str] = queue.Queue()
        self._dead: list[subprocess.Popen[str]] = []  # processes ended by kill; their pipes close at terminate
        self._pumps: list[threading.Thread] = []  # one stdout reader per process started

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self, argv: list[str], failure: str) -> None:
        """Start ``argv`` with its stdout read line by line; raises ``AdapterError("start_failed", failure: why)``
        when it cannot be run."""
        try:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            raise AdapterError("start_failed", f"{failure}: {exc.strerror}") from None
        pump = threading.Thread(target=self._pump, daemon=True)
        self._pumps.append(pump)
        pump.start()

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.strip())

    def wait_listening(self) -> int | None:
        """The port the server says it listens on, or None when it says nothing of the kind within
        :data:`START_TIMEOUT_S`; raises ``AdapterError("start_failed")`` with its stderr when it exits first."""
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().strip() if self.proc.stderr else ""
                raise AdapterError("start_failed", f"the server exited ({self.proc.returncode}): {err}")
            try:
                line = self._lines.get(timeout=0.1)
            except queue.Empty:
                continue
            if "listening on" in line:
                return int(line.rsplit(":", 1)[1])
        return None

    def terminate(self) -> None:
        """End the running process (SIGTERM, SIGKILL after 10 s), keep its stderr, and close the pipes of every
        ended process. Idempotent."""
        proc, self.proc = self.proc, None
        try:
            if proc is None or proc.poll() is not None:
                return
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            with contextlib.suppress(Exception):
                self.stderr = proc.stderr.read() if proc.stderr else ""
        finally:
            self._close_pipes([*self._dead, *([proc] if proc is not None else [])])
            self._dead.clear()

    def _close_pipes(self, procs: list[subprocess.Popen[str]]) -> None:
        """Close the pipes of ended processes, once their stdout readers have seen the end (bounded wait)."""
        for pump in self._pumps:
            pump.join(timeout=PUMP_JOIN_S)
        self._pumps = [p for p in self._pumps if p.is_alive()]
        for proc in procs:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()

    def kill(self) -> None:
        """SIGKILL the running process and wait (at most 10 s) until it has exited; keeps its command line in
        :attr:`argv`. Its stdout is left to its reader thread (read to the end) and closed at :meth:`terminate`."""
        proc = self.proc
        assert proc is not None
        self.argv = [str(a) for a in proc.args] if isinstance(proc.args, list | tuple) else []
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()
        self._dead.append(proc)
