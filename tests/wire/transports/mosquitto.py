"""A real MQTT broker for the tests: Debian's ``mosquitto`` (``apt-get install mosquitto``; ``.ci/run`` installs it),
started on a free loopback port with a config of its own, stopped after. Where it is missing a test that needs it
fails, saying how to install it: the MQTT tests are never skipped."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

START_S = 10.0


def mosquitto_path() -> str:
    """The broker's executable: ``XOCDIA_MOSQUITTO``, else ``mosquitto`` on PATH or in ``/usr/sbin``; fails the test
    (never skips it) when there is none."""
    found = os.environ.get("XOCDIA_MOSQUITTO") or shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    if not os.access(found, os.X_OK):
        pytest.fail(
            f"the MQTT tests need Debian's mosquitto broker, not found at {found}: apt-get install mosquitto "
            "(.ci/run installs it), or set XOCDIA_MOSQUITTO to its path",
            pytrace=False,
        )
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


class Broker:
    """A mosquitto process listening on ``127.0.0.1:port`` (a free port), anonymous clients allowed, nothing
    persisted; its log in ``workdir/mosquitto.log``. :meth:`stop` and :meth:`start` again restart it on the same
    port."""

    def __init__(self, workdir: Path) -> None:
        self.executable = mosquitto_path()
        self.port = free_port()
        self.config = workdir / "mosquitto.conf"
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n"
            "log_type error\nlog_type warning\nlog_type notice\n",
            encoding="utf-8",
        )
        self.log = workdir / "mosquitto.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the broker and wait until it accepts connections (fails the test with its log otherwise)."""
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([self.executable, "-c", str(self.config)], stdout=log, stderr=log)
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail(f"mosquitto did not start on port {self.port}: {self.log.read_text(errors='replace')[-2000:]}")

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after 5 s); idempotent."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def running_broker(workdir: Path) -> Iterator[Broker]:
    """A started :class:`Broker`, stopped after (the body of a pytest fixture)."""
    broker = Broker(workdir)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
