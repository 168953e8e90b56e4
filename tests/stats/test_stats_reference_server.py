"""The audit reads the reference server's own exports: a real ``xocdia-server`` process over HTTP.

Without table devices no round can settle, so the bets here end as refunds of a supervisor-cancelled round
(ERR-3): the test checks that the server's BETS.csv and OUTCOMES.csv are read as the shared formats, that the
refunds are shown apart and out of the RTP denominator, and that every refund returns the stake.
"""

from __future__ import annotations

import http.client
import json
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.stats.audit import audit_files
from simulator.bets import BetType

PLAYER, PLAYER_TOKEN, BOSS_TOKEN = "p1", "stats-player-token-1", "stats-boss-token-1"


class Server:
    """Just enough of a client: one HTTP request per call, bounded by a 10 s socket timeout."""

    def __init__(self, port: int) -> None:
        self.port = port

    def call(self, method: str, path: str, token: str, body: Any = None) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, path, body=data, headers={"Authorization": f"Bearer {token}"})
            resp = conn.getresponse()
            return resp.status, resp.read().decode()
        finally:
            conn.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    config = tmp_path / "server.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "engine": {"betting_s": 600, "round_gap_s": 0.2},
                "players": [{"id": PLAYER, "token": PLAYER_TOKEN, "balance": 100_000}],
                "supervisors": [{"id": "boss", "token": BOSS_TOKEN}],
            }
        )
    )
    cmd = [sys.executable, "-m", "gameserver.cli", "--db", str(tmp_path / "l.db"), "--port", "0"]
    proc = subprocess.Popen([*cmd, "--config", str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=20)
        line = proc.stdout.readline() if ready else ""
        assert "listening on" in line, f"server did not start: {line!r}"
        yield Server(int(line.strip().rsplit(":", 1)[1]))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def wait_for_text(server: Server, path: str, token: str, needle: str) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status, text = server.call("GET", path, token)
        if status == 200 and needle in text:
            return text
        time.sleep(0.05)
    raise AssertionError(f"{path} never contained {needle!r}")


def test_refunds_of_a_cancelled_round_are_apart_and_exact(server: Server, tmp_path: Path) -> None:
    wait_for_text(server, "/health", PLAYER_TOKEN, "")
    for client_id, bet_type, stake in (("c1", "big", 1000), ("c2", "odd", 500)):
        status, body = server.call(
            "POST",
            "/v1/bets",
            PLAYER_TOKEN,
            {"client_bet_id": client_id, "bet_type": bet_type, "stake": stake},
        )
        assert status in (200, 201), body
    status, body = server.call("POST", "/v1/supervisor/cancel", BOSS_TOKEN, {"reason": "stats audit test"})
    assert status == 200, body
    bets_csv = tmp_path / "BETS.csv"
    bets_csv.write_text(wait_for_text(server, f"/v1/players/{PLAYER}/bets.csv", PLAYER_TOKEN, "refund"))
    outcomes_csv = tmp_path / "OUTCOMES.csv"
    outcomes_csv.write_text(wait_for_text(server, "/v1/outcomes.csv", BOSS_TOKEN, "cancelled"))

    bets = audit_files([bets_csv])
    assert bets.kind == "bets" and bets.mismatches == ()
    lines = {line.bet: line for line in bets.rtp}
    assert (lines[BetType.BIG].refunded_bets, lines[BetType.BIG].refunded) == (1, 1000)
    assert (lines[BetType.ODD].refunded_bets, lines[BetType.ODD].refunded) == (1, 500)
    assert lines[None].bets == 0 and lines[None].rtp is None  # refunds are out of the denominator
    assert (bets.fairness.settled, bets.fairness.voided) == (0, 1)

    outcomes = audit_files([outcomes_csv])
    assert outcomes.kind == "outcomes"
    assert (outcomes.fairness.settled, outcomes.fairness.voided) == (0, 1)
