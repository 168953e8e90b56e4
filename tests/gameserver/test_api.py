"""The API against a real server process over HTTP and WebSocket (no devices attached)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.support.gs_process import PLAYERS, SUPERVISOR_TOKEN, ServerProcess

ALICE, BOB, CAROL = (PLAYERS[p][0] for p in ("alice", "bob", "carol"))
BOSS = SUPERVISOR_TOKEN
LONG = {"betting_s": 600, "round_gap_s": 0.2}


def balance(server: ServerProcess, player: str) -> int:
    status, body = server.call("GET", f"/v1/players/{player}/balance", PLAYERS[player][0])
    assert status == 200
    return int(body["balance"])


def bet(
    server: ServerProcess, token: str, client_id: str, bet_type: str = "odd", stake: int = 1000, **extra: Any
) -> tuple[int, Any]:
    return server.call(
        "POST", "/v1/bets", token, {"client_bet_id": client_id, "bet_type": bet_type, "stake": stake, **extra}
    )


def test_place_bet_acknowledges_and_replays_idempotently(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    status, body = bet(server, ALICE, "a-1", "big", 2000)
    assert status == 201 and body["replayed"] is False
    ack = body["bet"]
    assert (ack["player_id"], ack["stake"], ack["balance_before"], ack["balance_after"]) == (
        "alice",
        2000,
        100_000,
        98_000,
    )
    status, again = bet(server, ALICE, "a-1", "big", 2000)
    assert status == 200 and again == {"bet": ack, "replayed": True}
    status, conflict = bet(server, ALICE, "a-1", "big", 3000)
    assert status == 409 and conflict["error"]["code"] == "idempotency_conflict"
    assert balance(server, "alice") == 98_000
    status, record = server.call("GET", "/v1/players/alice/bets", ALICE)
    assert status == 200 and len(record["bets"]) == 1
    row = record["bets"][0]
    assert (row["result"], row["round_status"], row["wagered"], row["returned"]) == (
        "pending",
        "in_progress",
        2000,
        0,
    )


REJECTIONS = [
    # (token, body or raw bytes, status, code)
    (ALICE, {"client_bet_id": "r1", "bet_type": "five_red", "stake": 1000}, 422, "unknown_bet_type"),
    (ALICE, {"client_bet_id": "r2", "bet_type": "odd", "stake": 150}, 422, "stake_not_chip_multiple"),
    (ALICE, {"client_bet_id": "r3", "bet_type": "odd", "stake": 0}, 422, "stake_below_minimum"),
    (ALICE, {"client_bet_id": "r4", "bet_type": "odd", "stake": 1_000_100}, 422, "stake_above_maximum"),
    (CAROL, {"client_bet_id": "r5", "bet_type": "odd", "stake": 2000}, 409, "insufficient_balance"),
    (ALICE, {"client_bet_id": "r6", "bet_type": "odd", "stake": 1000.5}, 422, "invalid_field"),
    (ALICE, {"client_bet_id": "r7", "bet_type": "odd", "stake": "1000"}, 422, "invalid_field"),
    (ALICE, {"client_bet_id": "r8", "bet_type": "odd", "stake": 1000, "extra": 1}, 422, "invalid_field"),
    (ALICE, {"client_bet_id": "r9", "bet_type": "odd", "stake": 1000, "round_id": 99}, 409, "wrong_round"),
    (ALICE, {"bet_type": "odd", "stake": 1000}, 422, "invalid_field"),
    (ALICE, b"{not json", 400, "malformed_json"),
    (ALICE, b"[1, 2]", 400, "malformed_json"),
    (ALICE, b"\xff\xfe", 400, "malformed_json"),
    (ALICE, b'{"client_bet_id": "\\ud800", "bet_type": "odd", "stake": 1000}', 422, "invalid_field"),
    (ALICE, b'{"client_bet_id": "tab\\there", "bet_type": "odd", "stake": 1000}', 422, "invalid_field"),
    (ALICE, b'{"client_bet_id": "s1", "bet_type": "\\ud800", "stake": 1000}', 422, "unknown_bet_type"),
    (None, {"client_bet_id": "r10", "bet_type": "odd", "stake": 1000}, 401, "missing_token"),
    ("not-a-token", {"client_bet_id": "r11", "bet_type": "odd", "stake": 1000}, 401, "invalid_token"),
    (BOSS, {"client_bet_id": "r12", "bet_type": "odd", "stake": 1000}, 403, "forbidden"),
]


def test_every_bad_bet_is_a_4xx_with_a_code_and_changes_nothing(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(**LONG)
    before = {p: balance(server, p) for p in PLAYERS}
    for token, body, status, code in REJECTIONS:
        raw = body if isinstance(body, bytes) else None
        got_status, got = server.call("POST", "/v1/bets", token, None if raw else body, raw=raw)
        assert (got_status, got["error"]["code"]) == (status, code), (body, got)
        assert got["error"]["message"]
    assert {p: balance(server, p) for p in PLAYERS} == before
    assert server.call("GET", "/v1/players/alice/bets", ALICE)[1]["bets"] == []


def test_accounts_are_private(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    for path in ("/v1/players/bob/balance", "/v1/players/bob/bets", "/v1/players/bob/bets.csv"):
        status, body = server.call("GET", path, ALICE)
        assert (status, body["error"]["code"]) == (403, "forbidden")
    assert server.call("GET", "/v1/players/bob/balance", BOSS) == (
        200,
        {"player_id": "bob", "balance": 50_000},
    )
    status, body = server.call("POST", "/v1/supervisor/pause", ALICE, {"reason": "x"})
    assert (status, body["error"]["code"]) == (403, "forbidden")
    assert server.call("GET", "/v1/players/bob/balance")[1]["error"]["code"] == "missing_token"
    assert server.call("GET", "/v1/nowhere", ALICE)[0] == 404
    assert server.call("DELETE", "/v1/bets", ALICE)[0] == 405


def test_pause_resume_cancel_refunds_a_disconnected_players_bets(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(**LONG)
    assert bet(server, BOB, "b-1", "four_red", 5000)[0] == 201  # bob then goes away (DC-1..3)
    assert server.call("POST", "/v1/supervisor/pause", BOSS, {"reason": "camera"})[0] == 200
    status, body = bet(server, ALICE, "a-1")
    assert (status, body["error"]["code"]) == (409, "round_paused")
    status, body = server.call("POST", "/v1/supervisor/pause", BOSS, {})
    assert (status, body["error"]["code"]) == (409, "already_paused")
    assert server.call("POST", "/v1/supervisor/resume", BOSS, {})[0] == 200
    assert bet(server, ALICE, "a-1")[0] == 201
    assert server.call("POST", "/v1/supervisor/cancel", BOSS, {"reason": "table broken"})[0] == 200
    assert balance(server, "bob") == 50_000 and balance(server, "alice") == 100_000
    rows = server.call("GET", "/v1/players/bob/bets", BOB)[1]["bets"]
    assert [(r["result"], r["returned"], r["round_status"], r["balance_after"]) for r in rows] == [
        ("refund", 5000, "cancelled", 50_000)
    ]
    recall = server.call("GET", f"/v1/rounds/{rows[0]['round_id']}", BOSS)[1]
    kinds = [e["kind"] for e in recall["events"]]
    assert kinds.count("round_cancelled") == 1 and "round_paused" in kinds and "round_resumed" in kinds
    assert [e["significant"] for e in recall["events"] if e["kind"] == "round_cancelled"] == [True]


def test_bets_after_close_are_rejected_and_an_unshaken_round_is_void(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(betting_s=0.6, round_gap_s=30)
    assert bet(server, ALICE, "early", "even", 1000)[0] == 201
    server.wait_for(lambda: server.call("GET", "/v1/rounds/current", ALICE)[1]["phase"] == "void", what="void")
    status, body = bet(server, ALICE, "late")
    assert (status, body["error"]["code"]) == (409, "betting_closed")
    rows = server.call("GET", "/v1/players/alice/bets", ALICE)[1]["bets"]
    assert [(r["result"], r["round_status"]) for r in rows] == [("refund", "void")]
    rounds = server.call("GET", "/v1/rounds", ALICE)[1]["rounds"]
    assert rounds[0]["clause"] == "SH-4a"


def test_bet_record_csv_has_the_shared_columns(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    bet(server, ALICE, "c-1", "small", 3000)
    status, text = server.call("GET", "/v1/players/alice/bets.csv", ALICE)
    assert status == 200
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [
        "bet_id", "round_id", "player_id", "placed_at", "settled_at", "bet_type", "wagered", "result",
        "returned", "round_status", "outcome", "reds", "balance_before", "balance_after",
    ]  # fmt: skip
    assert len(rows) == 2
    rec = dict(zip(rows[0], rows[1], strict=True))
    assert (rec["player_id"], rec["bet_type"], rec["wagered"], rec["result"], rec["returned"]) == (
        "alice",
        "small",
        "3000",
        "pending",
        "0",
    )
    assert (rec["outcome"], rec["reds"], rec["settled_at"], rec["balance_before"], rec["balance_after"]) == (
        "",
        "",
        "",
        "100000",
        "97000",
    )
    assert float(rec["placed_at"]) > 0
    status, outcomes = server.call("GET", "/v1/outcomes.csv", BOSS)
    assert outcomes.splitlines()[0] == "round_id,status,faces,reds,reshakes,ended_at"


def test_websocket_streams_round_events_and_hides_other_players_bets(
    start_server: Callable[..., ServerProcess],
) -> None:
    server = start_server(**LONG)
    url = f"ws://127.0.0.1:{server.port}/v1/stream"
    with (
        connect(f"{url}?token={ALICE}", open_timeout=5) as alice_ws,
        connect(url, additional_headers={"Authorization": f"Bearer {BOSS}"}, open_timeout=5) as boss_ws,
    ):
        assert json.loads(alice_ws.recv(timeout=5))["kind"] == "hello"
        assert json.loads(boss_ws.recv(timeout=5))["kind"] == "hello"
        bet(server, BOB, "b-1")
        server.call("POST", "/v1/supervisor/pause", BOSS, {"reason": "check"})
        assert json.loads(boss_ws.recv(timeout=5))["kind"] == "bet_accepted"
        assert json.loads(boss_ws.recv(timeout=5))["kind"] == "round_paused"
        first = json.loads(alice_ws.recv(timeout=5))
        assert first["kind"] == "round_paused" and first["significant"] is True
        bet_id = server.call("GET", "/v1/players/bob/bets", BOB)[1]["bets"][0]["bet_id"]
        server.call("POST", "/v1/supervisor/cancel", BOSS, {"reason": "check"})
        boss_view = json.loads(boss_ws.recv(timeout=5))
        alice_view = json.loads(alice_ws.recv(timeout=5))
        assert boss_view["kind"] == alice_view["kind"] == "round_cancelled"
        assert [line["bet_id"] for line in boss_view["data"]["bets"]] == [bet_id]
        assert alice_view["data"]["bets"] == []  # bob's refund and balance are not alice's business
    for query, code, reason in (("?token=wrong", 4403, "invalid_token"), ("", 4401, "missing_token")):
        with connect(f"{url}{query}", open_timeout=5) as refused, pytest.raises(ConnectionClosed) as closed:
            refused.recv(timeout=5)
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (code, reason)


def test_each_player_stream_carries_its_own_settlement_lines_and_none_of_anothers(
    start_server: Callable[..., ServerProcess],
) -> None:
    """Three players watch one round with two bettors: each bettor's view of the cancellation holds exactly its own
    line, the watcher with no bet gets none, and the supervisor gets both."""
    server = start_server(**LONG)
    url = f"ws://127.0.0.1:{server.port}/v1/stream"
    with (
        connect(f"{url}?token={ALICE}", open_timeout=5) as alice_ws,
        connect(f"{url}?token={BOB}", open_timeout=5) as bob_ws,
        connect(f"{url}?token={CAROL}", open_timeout=5) as carol_ws,
        connect(f"{url}?token={BOSS}", open_timeout=5) as boss_ws,
    ):
        streams = {"alice": alice_ws, "bob": bob_ws, "carol": carol_ws, "boss": boss_ws}
        for ws in streams.values():
            assert json.loads(ws.recv(timeout=5))["kind"] == "hello"
        bet(server, ALICE, "a-1")
        bet(server, BOB, "b-1")
        server.call("POST", "/v1/supervisor/cancel", BOSS, {"reason": "check"})
        ids = {
            p: server.call("GET", f"/v1/players/{p}/bets", PLAYERS[p][0])[1]["bets"][0]["bet_id"]
            for p in ("alice", "bob")
        }
        seen: dict[str, list[str]] = {}
        for who, ws in streams.items():
            while (view := json.loads(ws.recv(timeout=5)))["kind"] != "round_cancelled":
                assert who == "boss" or view["kind"] != "bet_accepted"  # a player never sees another's bet
            seen[who] = sorted(line["bet_id"] for line in view["data"]["bets"])
            assert all(line["player_id"] == who for line in view["data"]["bets"]) or who == "boss"
    assert seen == {"alice": [ids["alice"]], "bob": [ids["bob"]], "carol": [], "boss": sorted(ids.values())}


def test_openapi_document_lists_every_route(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)
    status, doc = server.call("GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.")
    assert set(doc["paths"]) >= {
        "/health", "/v1/bets", "/v1/players/{player_id}/balance", "/v1/players/{player_id}/bets",
        "/v1/players/{player_id}/bets.csv", "/v1/rounds/{round_id}", "/v1/supervisor/pause",
        "/v1/supervisor/resume", "/v1/supervisor/cancel", "/v1/supervisor/correct",
    }  # fmt: skip
    assert doc["components"]["schemas"]["BetRequest"]["properties"]["bet_type"]["enum"] == [
        "four_red", "three_red", "two_red", "one_red", "four_white", "four_of_a_kind",
        "odd", "even", "big", "small",
    ]  # fmt: skip


ANY_CHAR = st.characters(exclude_categories=[])  # lone surrogates and control characters included
JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(ANY_CHAR, max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(ANY_CHAR, max_size=12), inner, max_size=4),
    max_leaves=8,
)
BODIES = st.fixed_dictionaries(
    {},
    optional={
        "client_bet_id": JSONISH,
        "bet_type": st.sampled_from(["odd", "big", "x"]) | JSONISH,
        "stake": st.sampled_from([100, 150, -100, 10**30]) | JSONISH,
        "round_id": JSONISH,
    },
)


def test_no_input_produces_a_5xx(start_server: Callable[..., ServerProcess]) -> None:
    server = start_server(**LONG)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        body=BODIES | JSONISH,
        path=st.sampled_from(["/v1/bets", "/v1/supervisor/correct", "/v1/supervisor/pause"]),
    )
    def probe(body: Any, path: str) -> None:
        token = BOSS if "supervisor" in path else CAROL
        status, reply = server.call("POST", path, token, body)
        assert status < 500, (body, reply)
        if status >= 400:
            assert reply["error"]["code"]

    probe()

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        path=st.sampled_from(
            ["/v1/players/carol/bets?round_id=", "/v1/events?after=", "/v1/events?limit=", "/v1/rounds/"]
        ),
        value=st.sampled_from(["abc", "-1", "%C2%B2", "99999999999999999999999", "1e3", "%00", ""])
        | st.integers().map(str),
    )
    def query(path: str, value: str) -> None:
        status, reply = server.call("GET", path + value, BOSS)
        assert status < 500, (path, value, reply)

    query()
    assert server.call("GET", "/v1/players/carol/bets?round_id=abc", CAROL)[0] == 422
    status, reply = server.call("POST", "/v1/supervisor/pause", BOSS, raw=b'{"reason": "\\udfff"}')
    assert (status, reply["error"]["code"]) == (422, "invalid_field")
    assert server.call("GET", "/health")[0] == 200  # still serving
    status, reply = server.call("POST", "/v1/supervisor/resume", BOSS, raw=b"")  # an empty body is {}
    assert status == 200 or reply["error"]["code"] == "not_paused"
