"""End to end: five table devices on real ptys (driven with the server's own codec from the test side),
the server process opening them by path, and HTTP players; rounds settle, void and re-shake correctly."""

from __future__ import annotations

import os
from pathlib import Path

from tests.gameserver.gs_ptys import PtyDevice
from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, UNTAGGED_OK, ServerProcess, write_config


def test_rounds_settle_void_reshake_and_correct_end_to_end(table: dict[str, PtyDevice], tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", UNTAGGED_OK, betting_s=1.5, round_gap_s=0.2, result_timeout_s=20)
    args = ["--config", str(config), "--trace", str(tmp_path / "trace.jsonl")]
    for name, device in table.items():
        args += ["--device", f"{name}={device.path}"]
    server = ServerProcess(tmp_path / "ledger.db", args).start()
    alice, bob = PLAYERS["alice"][0], PLAYERS["bob"][0]
    bowl, shaker, reader, console, lamp = (table[n] for n in ("bowl", "shaker", "reader", "console", "lamp"))
    try:
        for device in (bowl, shaker, reader, console):
            device.send("HELLO", (("id", f"{device.src}-0001"), ("proto", "1"), ("fw", "test")))

        def bet(token: str, cid: str, bet_type: str, stake: int, round_id: int) -> None:
            body = {"client_bet_id": cid, "bet_type": bet_type, "stake": stake, "round_id": round_id}
            status, reply = server.call("POST", "/v1/bets", token, body)
            assert status == 201, reply

        def shake() -> None:
            bowl.send("ON")
            shaker.send("START")
            shaker.send("END")

        def records(player: str) -> list[dict[str, object]]:
            return list(server.call("GET", f"/v1/players/{player}/bets", PLAYERS[player][0])[1]["bets"])

        # Round A: normal round, settled on RRWR (3 reds).
        mark = len(lamp.received)
        round_a = int(lamp.wait_lamp("OPEN", mark).get("round"))
        bet(alice, "a1", "three_red", 1000, round_a)
        bet(alice, "a2", "odd", 500, round_a)
        bet(bob, "b1", "big", 2000, round_a)
        console.send("TOKENS")
        shake()
        lamp.wait_lamp("CLOSE", mark, round_a)
        bowl.send("OFF", (("touch", "0"), ("token", "-")))
        reader.send("RESULT", (("faces", "RRWR"), ("overlap", "0")))
        server.wait_for(lambda: all(r["result"] != "pending" for r in records("bob")), what="settlement A")
        got = {(r["bet_type"], r["result"], r["returned"], r["outcome"]) for r in records("alice") + records("bob")}
        assert got == {
            ("three_red", "win", 3800, "RRWR"),
            ("odd", "win", 980, "RRWR"),
            ("big", "win", 3920, "RRWR"),
        }
        assert server.call("GET", "/v1/players/alice/balance", alice)[1]["balance"] == 100_000 - 1500 + 3800 + 980
        assert server.call("GET", "/v1/players/bob/balance", bob)[1]["balance"] == 50_000 - 2000 + 3920

        # Round B: the bowl touches token 2 while lifted (SH-5): void, refunded.
        mark = len(lamp.received)
        round_b = int(lamp.wait_lamp("OPEN", mark).get("round"))
        bet(bob, "b2", "small", 1000, round_b)
        shake()
        lamp.wait_lamp("CLOSE", mark, round_b)
        bowl.send("OFF", (("touch", "1"), ("token", "2")))
        void = lamp.wait_lamp("VOID", mark, round_b)
        assert (void.get("round"), void.get("clause")) == (str(round_b), "SH-5")
        server.wait_for(lambda: records("bob")[-1]["result"] == "refund", what="refund B")
        assert server.call("GET", "/v1/players/bob/balance", bob)[1]["balance"] == 50_000 - 2000 + 3920

        # Round C: token standing (SH-3) -> RESHAKE on the lamp, then settled on the new shake.
        mark = len(lamp.received)
        round_c = int(lamp.wait_lamp("OPEN", mark).get("round"))
        bet(alice, "a3", "four_white", 100, round_c)
        shake()
        lamp.wait_lamp("CLOSE", mark, round_c)
        bowl.send("OFF", (("touch", "0"), ("token", "-")))
        reader.send("RESULT", (("faces", "WSWW"), ("overlap", "0")))
        assert lamp.wait_lamp("RESHAKE", mark, round_c).get("reason") == "standing"
        shake()
        bowl.send("OFF", (("touch", "0"), ("token", "-")))
        reader.send("RESULT", (("faces", "WWWW"), ("overlap", "0")))
        server.wait_for(lambda: records("alice")[-1]["result"] == "win", what="settlement C")
        assert records("alice")[-1]["returned"] == 1500
        outcomes = server.call("GET", "/v1/outcomes.csv", alice)[1].splitlines()
        by_round = {line.split(",")[0]: line.split(",")[:5] for line in outcomes[1:]}
        assert [by_round[str(r)] for r in (round_a, round_b, round_c)] == [
            [str(round_a), "settled", "RRWR", "3", "0"],
            [str(round_b), "void", "", "", "0"],
            [str(round_c), "settled", "WWWW", "0", "1"],
        ]
        # Round D: a drop (SH-2) then an overlapping read (SH-1), settled on the rearranged read RRWW.
        mark = len(lamp.received)
        round_d = int(lamp.wait_lamp("OPEN", mark).get("round"))
        bet(bob, "b3", "two_red", 1000, round_d)
        bowl.send("ON")
        shaker.send("START")
        shaker.send("DROP", (("item", "bowl"), ("token", "-")))
        assert lamp.wait_lamp("RESHAKE", mark, round_d).get("reason") == "drop"
        console.send("REASSEMBLED")
        shake()
        lamp.wait_lamp("CLOSE", mark, round_d)
        bowl.send("OFF", (("touch", "0"), ("token", "-")))
        reader.send("RESULT", (("faces", "RUWW"), ("overlap", "1")))
        console.send("REARRANGED")
        assert records("bob")[-1]["result"] == "pending"  # not settled on the overlapped read
        reader.send("REARRANGED", (("faces", "RRWW"),))
        server.wait_for(lambda: records("bob")[-1]["result"] == "win", what="settlement D")
        assert (records("bob")[-1]["returned"], records("bob")[-1]["outcome"]) == (2500, "RRWW")

        # Corrections (GLI 4.18.5) apply to the most recently settled round only.
        boss = SUPERVISOR_TOKEN
        status, reply = server.call("POST", "/v1/supervisor/correct", boss, {"round_id": round_c, "faces": "RWWW"})
        assert (status, reply["error"]["code"]) == (409, "not_correctable")  # only the last settled round (D)
        # The supervisor corrects round D's misread: token 2 was red (RRRW), so bob's two_red loses.
        before = server.call("GET", "/v1/players/bob/balance", bob)[1]["balance"]
        status, _ = server.call("POST", "/v1/supervisor/correct", boss, {"round_id": round_d, "faces": "RRRW"})
        assert status == 200
        assert server.call("GET", "/v1/players/bob/balance", bob)[1]["balance"] == before - 2500
        assert (records("bob")[-1]["result"], records("bob")[-1]["outcome"]) == ("lose", "RRRW")
        recall = server.call("GET", f"/v1/rounds/{round_d}", boss)[1]
        assert recall["round"]["corrected"] is True
        kinds = [e["kind"] for e in recall["events"] if e["significant"]]
        assert kinds == ["reshake", "round_corrected"]
        assert "read_overlap" in [e["kind"] for e in recall["events"]]
        # Round E: round-tagged frames (protocol 1.1): round D's late touch and read are ignored; E settles.
        mark = len(lamp.received)
        round_e = int(lamp.wait_lamp("OPEN", mark).get("round"))
        tag_e, tag_d = ("round", str(round_e)), ("round", str(round_d))
        bet(alice, "a4", "four_red", 100, round_e)
        bowl.send("OFF", (("touch", "1"), ("token", "0"), tag_d))  # would be SH-4b (and SH-5) in round E
        bowl.send("ON", (tag_e,))
        shaker.send("START", (tag_e,))
        shaker.send("END", (tag_e,))
        lamp.wait_lamp("CLOSE", mark, round_e)
        reader.send("RESULT", (("faces", "WWWW"), ("overlap", "0"), tag_d))
        bowl.send("OFF", (("touch", "0"), ("token", "-"), tag_e))
        reader.send("RESULT", (("faces", "RRRR"), ("overlap", "0"), tag_e))
        server.wait_for(lambda: records("alice")[-1]["result"] == "win", what="settlement E")
        assert (records("alice")[-1]["returned"], records("alice")[-1]["outcome"]) == (1500, "RRRR")
        recall = server.call("GET", f"/v1/rounds/{round_e}", boss)[1]
        assert "report_ignored" not in [e["kind"] for e in recall["events"]]  # counted, not logged
        health = server.call("GET", "/health")[1]
        counts = health["ignored_reports"]["counts"]
        assert (counts["bowl"]["bowl_off"], counts["reader"]["result"]) == ({"other_round": 1}, {"other_round": 1})
        assert health["devices"]["lamp"]["peer"] == "LAMP" and health["devices"]["bowl"]["up"] is True
    finally:
        server.stop()
    trace = (tmp_path / "trace.jsonl").read_text()
    assert "READER RESULT faces=RRWR" in trace and "SRV OPEN round=" in trace


def test_a_silent_device_pauses_the_round(tmp_path: Path) -> None:  # ERR-1: device silent during a round
    bowl = PtyDevice("BOWL")
    bowl._running = False  # this device never says anything, not even heartbeats
    bowl._thread.join(timeout=2)
    config = write_config(tmp_path / "c.yaml", {"heartbeat_timeout_s": 0.5}, betting_s=30)
    server = ServerProcess(tmp_path / "ledger.db", ["--config", str(config), "--device", f"bowl={bowl.path}"])
    server.start()
    try:
        state = server.wait_for(
            lambda: (s := server.call("GET", "/v1/rounds/current", PLAYERS["alice"][0])[1])["paused"] and s,
            what="pause",
        )
        assert "link down" in state["paused"] and "bowl" in state["paused"]
        assert server.call("GET", "/health")[1]["devices"]["bowl"]["up"] is False
    finally:
        server.stop()
        os.close(bowl.master)
        os.close(bowl.slave)
