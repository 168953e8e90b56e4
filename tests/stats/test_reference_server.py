"""The audit reads the reference server's own exports: a real ``xocdia-server`` process over HTTP.

Without table devices no round can settle, so the bets here end as refunds of a supervisor-cancelled round
(ERR-3): the test checks that the server's BETS.csv and OUTCOMES.csv are read as the shared formats, that the
refunds are shown apart and out of the RTP denominator, and that every refund returns the stake.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.stats.audit import audit_files
from simulator.bets import BetType
from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess, write_config

PLAYER = "alice"
PLAYER_TOKEN = PLAYERS[PLAYER][0]
BOSS_TOKEN = SUPERVISOR_TOKEN


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    config = write_config(tmp_path / "server.yaml", betting_s=600, round_gap_s=0.2)
    proc = ServerProcess(tmp_path / "l.db", ["--config", str(config)]).start()
    try:
        yield proc
    finally:
        proc.stop()


def wait_for_text(server: ServerProcess, path: str, token: str, needle: str) -> str:
    """The text at ``path`` once it contains ``needle`` (bounded wait)."""

    def ready() -> str:
        status, body = server.call("GET", path, token)
        return str(body) if status == 200 and needle in str(body) else ""

    text: str = server.wait_for(ready, what=f"{path} to contain {needle!r}")
    return text


def test_refunds_of_a_cancelled_round_are_apart_and_exact(server: ServerProcess, tmp_path: Path) -> None:
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
