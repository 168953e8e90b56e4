"""The server process: refusing to start with a clear message, and kill -9 mid-round."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess, write_config


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gameserver.cli", *args], capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "port must be 0-65535, got 70000"),
        (["--port", "http"], "port must be an integer 0-65535"),
        (
            ["--port", "0", "--device", "bowl=/dev/does-not-exist-xyz"],
            "cannot open device bowl at '/dev/does-not-exist-xyz'",
        ),
        (["--port", "0", "--device", "bowl"], "device must be NAME=URL"),
        (["--port", "0", "--device", "bowl=nosuchscheme://x"], "cannot open device bowl"),
    ],
)
def test_refuses_bad_arguments_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli("--db", str(tmp_path / "x.db"), *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("xocdia-server: error: ") and message in lines[0]


def test_refuses_an_unwritable_database(tmp_path: Path) -> None:
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = run_cli("--db", str(locked / "sub" / "x.db"), "--port", "0")
    finally:
        locked.chmod(0o700)
    assert result.returncode == 2 and "cannot open database" in result.stderr
    not_a_db = tmp_path / "junk.db"
    not_a_db.write_bytes(b"this is not sqlite" * 100)
    result = run_cli("--db", str(not_a_db), "--port", "0")
    assert result.returncode == 2 and "cannot open database" in result.stderr


def test_refuses_a_port_in_use(start_server: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = start_server(betting_s=600)
    result = run_cli("--db", str(tmp_path / "other.db"), "--port", str(server.port))
    assert result.returncode == 2 and f"cannot listen on 127.0.0.1:{server.port}" in result.stderr


def test_refuses_a_bad_config_naming_the_field(tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("engine:\n  chip_unit: 75\n")
    result = run_cli("--db", str(tmp_path / "x.db"), "--port", "0", "--config", str(config))
    assert (
        result.returncode == 2
        and "engine" in result.stderr
        and "chip_unit must be a positive multiple of 50" in result.stderr
    )
    config.write_text("players:\n  - {id: a, token: short}\n")
    result = run_cli("--db", str(tmp_path / "x.db"), "--port", "0", "--config", str(config))
    assert "players[0].token: a string of at least 8 characters" in result.stderr


def test_kill_9_mid_round_then_restart_settles_every_confirmed_bet_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    config = write_config(tmp_path / "c.yaml", betting_s=600, round_gap_s=600)
    first = ServerProcess(db, ["--config", str(config)]).start()
    try:
        confirmed = []
        for i, (player, (token, _)) in enumerate(sorted(PLAYERS.items())):
            status, body = first.call(
                "POST", "/v1/bets", token, {"client_bet_id": f"k{i}", "bet_type": "even", "stake": 1000}
            )
            assert status == 201
            confirmed.append((player, body["bet"]["bet_id"]))
        first.kill9()  # after the bets are confirmed, before any settlement
    finally:
        first.stop()
    for attempt in range(2):  # a second restart must not refund again
        server = ServerProcess(db, ["--config", str(config)]).start()
        try:
            for player, (token, opening) in PLAYERS.items():
                assert server.call("GET", f"/v1/players/{player}/balance", token)[1]["balance"] == opening
                rows = server.call("GET", f"/v1/players/{player}/bets", token)[1]["bets"]
                assert [(r["result"], r["returned"], r["round_status"]) for r in rows] == [
                    ("refund", 1000, "cancelled")
                ]
            events = server.call("GET", "/v1/events?limit=10000", SUPERVISOR_TOKEN)[1]["events"]
            ended = [
                line["bet_id"]
                for e in events
                if e["kind"] in ("round_settled", "round_voided", "round_cancelled")
                for line in e["data"]["bets"]
            ]
            assert sorted(ended) == sorted(b for _, b in confirmed), attempt
            cancels = [e for e in events if e["kind"] == "round_cancelled"]
            assert len(cancels) == 1 and cancels[0]["data"]["reason"] == "server restart"
            status, body = server.call(
                "POST",
                "/v1/bets",
                PLAYERS["alice"][0],
                {"client_bet_id": "k0", "bet_type": "even", "stake": 1000},
            )
            assert status == 200 and body["replayed"] is True  # the idempotency id survived the crash
        finally:
            server.stop()
