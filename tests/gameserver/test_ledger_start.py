"""The ledger is checked before the server serves: an empty, damaged or foreign file is refused with one line and
exit status 2; ``--new-ledger`` is the only way to start a new ledger over an existing file (moved aside, never
deleted)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.gs_process import PLAYERS, ServerProcess, write_config

PAGE = 4096


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger a real server wrote (wallets, a round, 30 bets), checkpointed into its one file."""
    where = tmp_path_factory.mktemp("ledger")
    db = where / "base.db"
    server = ServerProcess(db, ["--config", str(write_config(where / "c.yaml", betting_s=600))]).start()
    try:
        for i in range(10):
            for token, _ in PLAYERS.values():
                body = {"client_bet_id": f"b{i}", "bet_type": "odd", "stake": 100}
                assert server.call("POST", "/v1/bets", token, body)[0] == 201
    finally:
        server.stop()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert db.stat().st_size >= 8 * PAGE
    return db


def start(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The server's start on ``db``, bounded: a server that serves is stopped by the timeout."""
    cmd = [sys.executable, "-m", "gameserver.cli", "--db", str(db), "--port", "0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20)


def _zero_mid_page(data: bytearray) -> None:
    mid = len(data) // PAGE // 2
    data[mid * PAGE : (mid + 1) * PAGE] = bytes(PAGE)


def _flip_bits(data: bytearray) -> None:
    for i in range(100, len(data), 499):
        data[i] ^= 0x10


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: data.clear(), "the file is empty (0 bytes), not a ledger; start a new one with --new-ledger"),
        (_zero_mid_page, "damaged"),
        (_flip_bits, "damaged"),
    ],
    ids=["zero-bytes", "zeroed-page", "flipped-bits"],
)
def test_a_damaged_or_empty_ledger_is_refused_with_one_line(
    ledger: Path, tmp_path: Path, damage: Callable[[bytearray], None], message: str
) -> None:
    db = tmp_path / "l.db"
    data = bytearray(ledger.read_bytes())
    damage(data)
    db.write_bytes(bytes(data))
    result = start(db)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith(f"xocdia-server: error: cannot open database {str(db)!r}: ")
    assert message in lines[0] and "Traceback" not in result.stderr
    assert db.read_bytes() == bytes(data)  # refused, not touched


def test_a_database_that_is_not_a_ledger_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE things(x)")
    conn.commit()
    conn.close()
    result = start(db)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"xocdia-server: error: cannot open database {str(db)!r}: not a ledger: no table events; "
        "start a new one with --new-ledger"
    )


def test_a_wal_file_without_its_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "gone.db"
    Path(f"{db}-wal").write_bytes(b"\x37\x7f\x06\x82" + bytes(28))
    result = start(db)
    assert result.returncode == 2 and "gone.db-wal or -shm is there without the database" in result.stderr
    assert not db.exists()


def test_new_ledger_moves_the_old_file_aside_and_starts_empty(ledger: Path, tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    db.write_bytes(b"")
    config = write_config(tmp_path / "c.yaml", betting_s=600)
    server = ServerProcess(db, ["--config", str(config), "--new-ledger"]).start()
    try:
        token, balance = PLAYERS["alice"]
        assert server.call("GET", "/v1/players/alice/balance", token) == (
            200,
            {"player_id": "alice", "balance": balance},
        )
    finally:
        server.stop()
    (aside,) = tmp_path.glob("l.db.replaced-*")
    assert aside.read_bytes() == b""  # the old file kept as it was
    healthy = shutil.copy(ledger, tmp_path / "healthy.db")  # opens without the flag, with what it holds
    server = ServerProcess(Path(healthy), ["--config", str(config)]).start()
    try:
        status, body = server.call("GET", "/v1/players/alice/bets", PLAYERS["alice"][0])
        assert status == 200 and len(body["bets"]) == 10  # the round left open was refunded on restart
    finally:
        server.stop()


def test_a_ledger_damaged_while_serving_answers_503_never_500_and_fails_closed(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", betting_s=600)
    server = ServerProcess(tmp_path / "l.db", ["--config", str(config)]).start()
    token = PLAYERS["alice"][0]
    try:
        for i in range(5):
            body = {"client_bet_id": f"b{i}", "bet_type": "odd", "stake": 100}
            assert server.call("POST", "/v1/bets", token, body)[0] == 201
        wal = tmp_path / "l.db-wal"
        data = bytearray(wal.read_bytes())
        data[32:] = bytes(len(data) - 32)  # every page the server committed, zeroed on disk
        wal.write_bytes(bytes(data))
        for path in ("/v1/players/alice/balance", "/v1/players/alice/bets", "/v1/rounds"):
            status, reply = server.call("GET", path, token)
            assert status == 503 and reply["error"]["code"] == "unavailable", (path, reply)
        status, health = server.call("GET", "/health")
        assert status == 503 and health["failures"]["ledger"].startswith("read failed: ")
        status, reply = server.call("POST", "/v1/bets", token, {"client_bet_id": "z", "bet_type": "odd", "stake": 100})
        assert status == 503 and reply["error"]["code"] == "gateway_failure"
    finally:
        server.stop()
