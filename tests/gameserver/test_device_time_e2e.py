"""Protocol 1.2 end to end: a real server process reads device frames with ``at=<ms>`` from real ptys. The
bowl's clock is the test's own monotonic clock in ms (its origin unknown to the server), and a lift whose
``BOWL OFF`` is only sent after the close, but carries the device time of a lift during betting, voids the
round SH-4b; in the next round a lift dated after the close settles as usual."""

from __future__ import annotations

import time
from pathlib import Path

from tests.gameserver.gs_ptys import PtyDevice
from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, UNTAGGED_OK, ServerProcess, write_config

ORIGIN = time.monotonic() - 7.0  # the devices "powered up" 7 s before this module was imported


def at() -> tuple[str, str]:
    """The ``at`` field for now on the device clock."""
    return ("at", str(int((time.monotonic() - ORIGIN) * 1000)))


def test_a_late_lift_is_judged_by_its_device_time(table: dict[str, PtyDevice], tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", UNTAGGED_OK, betting_s=1.5, round_gap_s=0.2, result_timeout_s=20)
    args = ["--config", str(config)]
    for name in ("bowl", "shaker", "reader", "lamp"):
        args += ["--device", f"{name}={table[name].path}"]
    server = ServerProcess(tmp_path / "ledger.db", args).start()
    alice = PLAYERS["alice"][0]
    bowl, shaker, reader, lamp = (table[n] for n in ("bowl", "shaker", "reader", "lamp"))
    off = (("touch", "0"), ("token", "-"))

    def play(lift_before_close: bool) -> tuple[int, str]:
        """One round: bet, shake, lift (before or after the close) reported after the close; returns
        (round id, the bet's result)."""
        mark = len(lamp.received)
        rid = int(lamp.wait_lamp("OPEN", mark).get("round"))
        body = {"client_bet_id": f"a{rid}", "bet_type": "two_red", "stake": 1000, "round_id": rid}
        assert server.call("POST", "/v1/bets", alice, body)[0] == 201
        for device, type_ in ((bowl, "ON"), (shaker, "START"), (shaker, "END")):
            device.send(type_, (at(),))  # prompt frames: the server learns each line's offset from them
        lift = at() if lift_before_close else None
        lamp.wait_lamp("CLOSE", mark, rid)
        reader.send("RESULT", (("faces", "RRWW"), ("overlap", "0")))  # untimed, before the lift's report
        bowl.send("OFF", (*off, lift or at()))
        ended = server.wait_for(
            lambda: [r["result"] for r in records_of(rid) if r["result"] != "pending"], what=f"round {rid} ends"
        )
        return rid, str(ended[0])

    def records_of(rid: int) -> list[dict[str, object]]:
        return list(server.call("GET", f"/v1/players/alice/bets?round_id={rid}", alice)[1]["bets"])

    try:
        for device in (bowl, shaker, reader):
            device.send("HELLO", (("id", f"{device.src}-0001"), ("proto", "1"), ("fw", "test")))
        early, result = play(lift_before_close=True)
        assert result == "refund"
        recall = server.call("GET", f"/v1/rounds/{early}", SUPERVISOR_TOKEN)[1]
        voided = [e["data"] for e in recall["events"] if e["kind"] == "round_voided"]
        assert [(d["clause"], d["reason"]) for d in voided] == [
            ("SH-4b", "bowl lifted before betting closed (device time)")
        ]
        late, result = play(lift_before_close=False)
        assert result == "win"
        assert [r["returned"] for r in records_of(late)] == [2500]  # two_red on RRWW: 1000 + 1.5 x 1000
    finally:
        server.stop()
