"""The published OpenAPI document is complete and true: schemathesis, with every check, against a real server
process, once with a player's token and once with the supervisor's (bounded examples, fixed seed)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
MAX_EXAMPLES = 25


@pytest.mark.parametrize("token", [PLAYERS["alice"][0], SUPERVISOR_TOKEN], ids=["player", "supervisor"])
def test_schemathesis_finds_no_failure(start_server: Callable[..., ServerProcess], token: str) -> None:
    server = start_server(betting_s=600, round_gap_s=0.2)
    command = [
        str(SCHEMATHESIS), "run", f"http://{server.host}:{server.port}/openapi.json", "--checks", "all",
        "-H", f"Authorization: Bearer {token}", "--max-examples", str(MAX_EXAMPLES), "--seed", "20261201",
        "--no-color",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failures" not in done.stdout.split("SUMMARY")[-1].lower()
    assert server.call("GET", "/health")[0] == 200  # and the server is still serving
