"""Device identity is bound to the line: five devices on real ptys, the server process opening them by path. A
valid READER RESULT sent on any other line, and an untagged replay of the previous round's result on the reader's
own line, settle nothing; the trace, /health and /v1/events show each rejection; the genuine tagged result settles."""

from __future__ import annotations

import json
from pathlib import Path

from gameserver.line_guard import DECIDING, MAX_INCIDENTS, LineGuard
from gameserver.protocol import Frame
from tests.gameserver.gs_ptys import PtyDevice
from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess, write_config


def test_results_from_other_lines_and_untagged_replays_never_settle(
    table: dict[str, PtyDevice], tmp_path: Path
) -> None:
    config = write_config(tmp_path / "c.yaml", betting_s=1.0, round_gap_s=0.2, result_timeout_s=30)
    trace_path = tmp_path / "trace.jsonl"
    args = ["--config", str(config), "--trace", str(trace_path)]
    for name, device in table.items():
        args += ["--device", f"{name}={device.path}"]
    server = ServerProcess(tmp_path / "ledger.db", args).start()
    alice, boss = PLAYERS["alice"][0], SUPERVISOR_TOKEN
    bowl, shaker, reader, console, lamp = (table[n] for n in ("bowl", "shaker", "reader", "console", "lamp"))
    try:
        for device in (bowl, shaker, reader, console):
            device.send("HELLO", (("id", f"{device.src}-0001"), ("proto", "1"), ("fw", "test")))

        def play_to_lift() -> tuple[int, tuple[str, str]]:
            mark = len(lamp.received)
            rid = int(lamp.wait_lamp("OPEN", mark).get("round"))
            tag = ("round", str(rid))
            body = {"client_bet_id": f"a{rid}", "bet_type": "four_red", "stake": 100, "round_id": rid}
            assert server.call("POST", "/v1/bets", alice, body)[0] == 201
            bowl.send("ON", (tag,))
            shaker.send("START", (tag,))
            shaker.send("END", (tag,))
            lamp.wait_lamp("CLOSE", mark, rid)
            bowl.send("OFF", (("touch", "0"), ("token", "-"), tag))
            return rid, tag

        def phase(rid: int) -> str:
            return str(server.call("GET", f"/v1/rounds/{rid}", boss)[1]["round"]["status"])

        # Round A settles on its genuine, tagged read.
        round_a, tag_a = play_to_lift()
        reader.send("RESULT", (("faces", "WWWW"), ("overlap", "0"), tag_a))
        server.wait_for(lambda: phase(round_a) == "settled", what="round A settled")

        # Round B: forged results tagged for B on every other line, and A's read replayed untagged on the reader.
        round_b, tag_b = play_to_lift()
        forged = (("faces", "RRRR"), ("overlap", "0"), tag_b)
        for device in (console, bowl, shaker, lamp):
            device.send("RESULT", forged, src="READER")
        reader.send("RESULT", (("faces", "WWWW"), ("overlap", "0")))  # untagged replay, fresh sequence number
        reader.send("REARRANGED", (("faces", "RRRR"),))  # untagged
        health = server.call("GET", "/health")[1]["devices"]
        assert phase(round_b) == "in_progress"
        for name in ("console", "bowl", "shaker", "lamp"):
            assert health[name]["rejected"] == {"wrong_line": 1}, name
            assert health[name]["role"] == name.upper()
        assert health["reader"]["rejected"] == {"untagged": 2}

        def incident_events() -> list[dict[str, object]]:
            events = server.call("GET", "/v1/events?limit=10000", boss)[1]["events"]
            return [e for e in events if e["kind"] == "device_incident"]

        events = server.wait_for(lambda: len(incident_events()) >= 5 and incident_events(), what="incidents")
        incidents = [(e["data"]["device"], e["data"]["why"]) for e in events]
        # one event per line and reason (the rest only counted)
        wrong = [(n, "wrong_line") for n in ("console", "bowl", "shaker", "lamp")]
        assert sorted(incidents) == sorted([*wrong, ("reader", "untagged")])
        assert all(e["round_id"] == round_b and e["significant"] for e in events)

        # The genuine read settles B on its own faces.
        reader.send("RESULT", (("faces", "RWWW"), ("overlap", "0"), tag_b))
        server.wait_for(lambda: phase(round_b) == "settled", what="round B settled")
        recall = server.call("GET", f"/v1/rounds/{round_b}", boss)[1]
        assert recall["round"]["faces"] == "RWWW"
        assert [b["result"] for b in recall["bets"]] == ["lose"]
    finally:
        server.stop()
    rejects = [json.loads(line) for line in trace_path.read_text().splitlines() if '"reject"' in line]
    wrong = [(n, "wrong_line") for n in ("console", "bowl", "shaker", "lamp")]
    assert sorted((r["device"], r["note"]) for r in rejects) == sorted([*wrong, *[("reader", "untagged")] * 2])
    assert all("READER" in r["bytes"] for r in rejects)


def test_a_line_named_for_no_role_learns_it_and_a_role_change_is_an_incident() -> None:
    guard = LineGuard("port7")
    hello = Frame(1, "BOWL", "HELLO", (("id", "B-1"), ("proto", "1"), ("fw", "x")))
    assert guard.check(hello).accept and guard.role == "BOWL"
    assert not guard.check(Frame(2, "READER", "RESULT", (("faces", "RRRR"), ("overlap", "0")))).accept
    change = guard.check(Frame(1, "READER", "HELLO", (("id", "R-1"), ("proto", "1"), ("fw", "x"))))
    assert (change.accept, change.why, change.log, guard.role) == (True, "role_change", True, "READER")
    assert guard.counts == {"wrong_line": 1, "role_change": 1}
    fixed = LineGuard("reader")
    assert not fixed.check(Frame(1, "CONSOLE", "HELLO", (("id", "C"), ("proto", "1"), ("fw", "x")))).accept
    assert fixed.role == "READER"
    compat = LineGuard("reader", accept_untagged=True)
    assert compat.check(Frame(3, "READER", "RESULT", (("faces", "RRRR"), ("overlap", "0")))).accept
    assert ("READER", "RESULT") in DECIDING


def test_incident_events_per_line_are_bounded() -> None:
    guard = LineGuard("port9")
    logged = 0
    for i in range(3 * MAX_INCIDENTS):
        src = ("BOWL", "READER")[i % 2]
        logged += guard.check(Frame(1, src, "HELLO", (("id", "x"), ("proto", "1"), ("fw", "x")))).log
    assert logged == MAX_INCIDENTS and guard.counts["role_change"] == 3 * MAX_INCIDENTS - 1
