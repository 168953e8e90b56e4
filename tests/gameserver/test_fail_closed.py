"""The device gateway fails closed: with the trace on a full filesystem (a real file-size limit on the server
process, RLIMIT_FSIZE) /health is non-200 naming the trace within one heartbeat, no bet is accepted, the round in
play is paused, and every bet accepted before is refunded once space is back and the supervisor cancels."""

from __future__ import annotations

import resource
import time
from pathlib import Path

from tests.gameserver.gs_ptys import PtyDevice
from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess, write_config

LIMIT = 4 * 1024 * 1024
HEARTBEAT_S = 3.0


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_a_trace_on_a_full_disk_fails_closed_and_loses_no_bet(table: dict[str, PtyDevice], tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    config = write_config(tmp_path / "c.yaml", {"heartbeat_timeout_s": HEARTBEAT_S}, betting_s=600)
    args = ["--config", str(config), "--trace", str(trace)]
    for name, device in table.items():
        args += ["--device", f"{name}={device.path}"]
    server = ServerProcess(tmp_path / "ledger.db", args, preexec=_limit_file_size).start()
    alice, boss = PLAYERS["alice"][0], SUPERVISOR_TOKEN
    try:
        for name in ("bowl", "shaker", "reader", "console"):
            table[name].send("HELLO", (("id", f"{name}-1"), ("proto", "1"), ("fw", "test")))
        round_id = int(table["lamp"].wait_lamp("OPEN").get("round"))
        body = {"client_bet_id": "before", "bet_type": "odd", "stake": 1000, "round_id": round_id}
        assert server.call("POST", "/v1/bets", alice, body)[0] == 201
        with trace.open("ab") as out:  # the disk fills up: the server may write no byte more to its trace
            out.write(b"x" * (LIMIT - trace.stat().st_size))
        full = time.monotonic()
        status, health = server.wait_for(
            lambda: (r := server.call("GET", "/health"))[0] != 200 and r, timeout=HEARTBEAT_S, what="health non-200"
        )
        assert status == 503 and health["status"] == "failed" and "trace" in health["failures"]
        assert "write failed" in health["failures"]["trace"] and time.monotonic() - full <= HEARTBEAT_S
        status, reply = server.call("POST", "/v1/bets", alice, {**body, "client_bet_id": "after"})
        assert status == 503 and reply["error"]["code"] == "gateway_failure" and "trace" in reply["error"]["message"]
        current = server.call("GET", "/v1/rounds/current", alice)[1]
        assert current["round_id"] == round_id and current["paused"].startswith("gateway_failure: trace: "), current
        assert server.call("POST", "/v1/supervisor/resume", boss)[1]["error"]["code"] == "gateway_failure"
        # the operator frees the space; the trace recovers, bets are taken again; the paused round is cancelled
        trace.write_bytes(b"")
        server.wait_for(lambda: server.call("GET", "/health")[0] == 200, timeout=10, what="health back to 200")
        assert server.call("POST", "/v1/supervisor/cancel", boss, {"reason": "trace failed"})[0] == 200
        bets = server.wait_for(
            lambda: [
                b for b in server.call("GET", "/v1/players/alice/bets", alice)[1]["bets"] if b["result"] != "pending"
            ],
            what="the accepted bet refunded",
        )
        assert [(b["client_bet_id"], b["result"], b["returned"]) for b in bets] == [("before", "refund", 1000)]
        assert server.call("GET", "/v1/players/alice/balance", alice)[1]["balance"] == PLAYERS["alice"][1]
    finally:
        server.stop()


def _limit_to_256k() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))


def test_a_ledger_on_a_full_disk_fails_closed_and_keeps_every_accepted_bet(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    config = write_config(tmp_path / "c.yaml", betting_s=600)
    server = ServerProcess(db, ["--config", str(config)], preexec=_limit_to_256k).start()
    alice = PLAYERS["alice"][0]
    accepted: list[str] = []
    try:
        for i in range(400):
            body = {"client_bet_id": f"b{i}", "bet_type": "odd", "stake": 100}
            status, reply = server.call("POST", "/v1/bets", alice, body)
            if status != 201:
                break
            accepted.append(f"b{i}")
        assert status == 503 and reply["error"]["code"] == "unavailable", reply
        assert accepted, "the disk filled before any bet"
        status, health = server.call("GET", "/health")
        assert status == 503 and health["status"] == "failed" and "ledger" in health["failures"], health
        assert server.call("POST", "/v1/bets", alice, {"client_bet_id": "x", "bet_type": "odd", "stake": 100})[0] == 503
    finally:
        server.stop()
    again = ServerProcess(db, ["--config", str(config)]).start()  # space is back
    try:
        bets = again.call("GET", "/v1/players/alice/bets", alice)[1]["bets"]
        assert [b["client_bet_id"] for b in bets] == accepted  # every accepted bet is there, refunded on restart
        assert {b["result"] for b in bets} == {"refund"}
    finally:
        again.stop()
