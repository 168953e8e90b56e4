"""A real ``xocdia-server`` process for tests, and a small stdlib HTTP client for it."""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

PLAYERS = {
    "alice": ("alice-token-1", 100_000),
    "bob": ("bob-token-22", 50_000),
    "carol": ("carol-token-3", 1_000),
}
SUPERVISOR_TOKEN = "boss-token-99"
#: Top-level config for tests that play protocol 1.0 devices: untagged results and lifts count (compatibility mode).
UNTAGGED_OK = {"untagged_reports": "accept"}


def write_config(path: Path, top: dict[str, Any] | None = None, **engine: Any) -> Path:
    """A config file with three players, one supervisor, the given engine settings and top-level keys."""
    doc: dict[str, Any] = {
        **(top or {}),
        "engine": engine,
        "players": [{"id": p, "token": t, "balance": b} for p, (t, b) in PLAYERS.items()],
        "supervisors": [{"id": "boss", "token": SUPERVISOR_TOKEN}],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


class ServerProcess:
    """``python -m gameserver.cli`` as a subprocess; :meth:`start` waits (bounded) for /health."""

    def __init__(self, db: Path, args: list[str], preexec: Callable[[], None] | None = None) -> None:
        """``preexec`` runs in the child before the server starts (a resource limit, say)."""
        self.db = db
        self.args = args
        self.preexec = preexec
        self.proc: subprocess.Popen[str] | None = None
        self._pump_thread: threading.Thread | None = None
        self.host = "127.0.0.1"
        self.port = 0
        self._lines: queue.Queue[str] = queue.Queue()

    def start(self, timeout: float = 15.0) -> ServerProcess:
        cmd = [sys.executable, "-m", "gameserver.cli", "--db", str(self.db), "--port", "0", *self.args]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=self.preexec
        )
        self._pump_thread = threading.Thread(target=self._pump, daemon=True)
        self._pump_thread.start()
        deadline = time.monotonic() + timeout
        line = ""
        while "listening on" not in line:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                err = self.proc.stderr.read() if self.proc.poll() is not None and self.proc.stderr else ""
                self.stop()
                raise RuntimeError(f"server did not start: {err.strip()}")
            try:
                line = self._lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
        self.port = int(line.rsplit(":", 1)[1])
        while time.monotonic() < deadline:
            try:
                if self.call("GET", "/health")[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("server never became healthy")

    def _pump(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line.strip())

    def call(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """One HTTP request; returns (status, parsed JSON or text). A body goes as ``application/json`` unless
        ``headers`` say otherwise."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        sent = {"Authorization": f"Bearer {token}"} if token else {}
        if data is not None:
            sent["Content-Type"] = "application/json"
        headers = {**sent, **(headers or {})}
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            text = resp.read().decode()
            ctype = resp.getheader("content-type") or ""
            return resp.status, json.loads(text) if "json" in ctype else text
        finally:
            conn.close()

    def kill9(self) -> None:
        """SIGKILL: no shutdown code runs."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """Terminate (then kill) within a bounded time, then close the process's pipes (the stdout reader ends at
        the pipe's EOF)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self._pump_thread is not None:
            self._pump_thread.join(timeout=2)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()

    def wait_for(self, predicate: Any, timeout: float = 10.0, what: str = "condition") -> Any:
        """Poll ``predicate()`` until it returns something truthy; bounded."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}")
