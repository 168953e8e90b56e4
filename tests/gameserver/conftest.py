"""Fixtures for the game server tests: a real server process per test module that asks for one, and five
device ends on real ptys."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gameserver.gs_ptys import PtyDevice
from tests.support.gs_process import ServerProcess, write_config


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Factory: ``start_server(db=None, extra_args=(), **engine)`` starts a server (stopped at teardown)."""
    started: list[ServerProcess] = []

    def start(db: Path | None = None, extra_args: tuple[str, ...] = (), **engine: Any) -> ServerProcess:
        config = write_config(tmp_path / f"config{len(started)}.yaml", **engine)
        server = ServerProcess(db or tmp_path / "ledger.db", ["--config", str(config), *extra_args])
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def table() -> Iterator[dict[str, PtyDevice]]:
    """Five device ends on real ptys (bowl, shaker, reader, console, lamp), closed at teardown."""
    devices = {name: PtyDevice(name.upper()) for name in ("bowl", "shaker", "reader", "console", "lamp")}
    yield devices
    for device in devices.values():
        device.close()
