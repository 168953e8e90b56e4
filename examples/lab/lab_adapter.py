"""The adapter skeleton that ``xocdia-hil init`` writes, filled in for the reference server's HTTP API as a lab
would fill it in for its own server: from docs/adapters.md (what each method must do) and docs/server.md (the
endpoints, event names and bet-record fields) only. Bench file: ``server: {kind: url, url: ..., adapter:
lab_adapter:LabAdapter, opens_rounds: server, options: {supervisor_token: ...}}``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect

from harness.lab import (
    AdapterError,
    BetRecordRow,
    BetReply,
    GameServerAdapter,
    PlayerSpec,
    RoundEvent,
    RoundEventKind,
    ServerSetup,
)

#: docs/server.md "Event names" -> the adapter interface's round event kinds (the others are not round events).
KINDS = {
    "round_opened": RoundEventKind.OPENED,
    "betting_closed": RoundEventKind.CLOSED,
    "reshake": RoundEventKind.RESHAKE,
    "round_paused": RoundEventKind.PAUSED,
    "round_resumed": RoundEventKind.RESUMED,
    "round_settled": RoundEventKind.SETTLED,
    "round_voided": RoundEventKind.VOID,
    "round_cancelled": RoundEventKind.CANCELLED,
}


class LabAdapter(GameServerAdapter):
    """The staging server, attached by URL; each scenario's players are created with fresh ids and tokens."""

    clock_is_sim_time = False

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        parts = urlsplit(str(self.options.get("url") or ""))
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.token = str(self.options.get("supervisor_token") or os.environ.get("SUPERVISOR_TOKEN", ""))
        self.ids: dict[str, str] = {}  # scenario name -> server id
        self.tokens: dict[str, str] = {}
        self.streams: dict[str, ClientConnection] = {}
        self.stacks: dict[str, contextlib.ExitStack] = {}  # each stream's connection, closed on disconnect
        self.events: list[RoundEvent] = []
        self.after = 0

    # ------------------------------------------------------------------ HTTP
    def _call(self, method: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
            conn.request(method, path, None if body is None else json.dumps(body), headers)
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"{}")
        except (OSError, ValueError) as exc:
            raise AdapterError("unreachable", f"{method} {path}: {exc}") from None
        finally:
            conn.close()

    def _ok(self, status: int, data: Any, what: str) -> Any:
        if status >= 300:
            error = data.get("error", {}) if isinstance(data, dict) else {}
            raise AdapterError(str(error.get("code", "error")), f"{what}: {error.get('message', status)}")
        return data

    def _new_events(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        while True:
            status, data = self._call("GET", f"/v1/events?after={self.after}&limit=1000", self.token)
            page = self._ok(status, data, "event log")["events"]
            rows += page
            if page:
                self.after = int(page[-1]["seq"])
            if len(page) < 1000:
                return rows

    # ------------------------------------------------------------------ the interface
    def start(self, setup: ServerSetup) -> None:
        self._new_events()  # the log so far belongs to earlier scenarios: round_events() reads what follows

    def provision_players(self, players: tuple[PlayerSpec, ...]) -> None:
        suffix = secrets.token_hex(4)
        self.ids = {p.player_id: f"{p.player_id}-{suffix}" for p in players}
        self.tokens = {p.player_id: secrets.token_urlsafe(24) for p in players}
        body = {
            "players": [
                {"id": self.ids[p.player_id], "token": self.tokens[p.player_id], "balance": p.balance} for p in players
            ]
        }
        if players:
            self._ok(*self._call("POST", "/v1/supervisor/players", self.token, body), "create players")

    def stop(self) -> None:
        for player in list(self.streams):
            self.disconnect(player)

    def connect(self, player_id: str) -> None:
        if player_id not in self.streams:
            url = f"ws://{self.host}:{self.port}/v1/stream?token={self.tokens[player_id]}"
            stack = contextlib.ExitStack()
            try:
                ws = stack.enter_context(connect(url, open_timeout=10))
                ws.recv(timeout=10)  # the server's hello: the session is open
            except (OSError, TimeoutError, WebSocketException) as exc:
                stack.close()
                raise AdapterError("unreachable", f"stream of {player_id}: {exc}") from None
            self.streams[player_id], self.stacks[player_id] = ws, stack

    def disconnect(self, player_id: str) -> None:
        ws, stack = self.streams.pop(player_id, None), self.stacks.pop(player_id, None)
        if ws is not None:
            ws.socket.close()  # abrupt: no closing handshake
        if stack is not None:
            with contextlib.suppress(Exception):
                stack.close()

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        if player_id not in self.streams:
            raise AdapterError("not_connected", f"player {player_id!r} is not connected")
        body = {"client_bet_id": client_bet_id, "bet_type": bet_type, "stake": stake}
        base = BetReply(player_id, client_bet_id, bet_type, stake, accepted=False, confirmed=not lose_reply)
        if lose_reply:  # the request leaves, the connection drops before the answer
            conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
            headers = {"Authorization": f"Bearer {self.tokens[player_id]}", "Content-Type": "application/json"}
            conn.request("POST", "/v1/bets", json.dumps(body), headers)
            conn.close()
            self.disconnect(player_id)
            return base
        status, data = self._call("POST", "/v1/bets", self.tokens[player_id], body)
        if status in (200, 201):  # 200: a retry of the same bet, answered with the original acknowledgement
            bet = data["bet"]
            return BetReply(
                player_id,
                client_bet_id,
                bet_type,
                stake,
                accepted=True,
                bet_id=str(bet["bet_id"]),
                round_id=str(bet["round_id"]),
                balance_before=bet["balance_before"],
                balance_after=bet["balance_after"],
            )
        code = data.get("error", {}).get("code", "error") if isinstance(data, dict) else "error"
        return BetReply(player_id, client_bet_id, bet_type, stake, accepted=False, code=str(code))

    def supervise(self, action: str, reason: str = "") -> None:
        body = {"reason": reason} if reason else None
        self._ok(*self._call("POST", f"/v1/supervisor/{action}", self.token, body), f"supervisor {action}")

    def correct(self, round_id: str, faces: str) -> None:
        body = {"round_id": int(round_id), "faces": faces}
        self._ok(*self._call("POST", "/v1/supervisor/correct", self.token, body), f"correct round {round_id}")

    def round_events(self) -> list[RoundEvent]:
        for ws in self.streams.values():  # keep the streams read (their content is not needed)
            try:
                while True:
                    ws.recv(timeout=0)
            except Exception:  # nothing more to read, or the stream closed
                pass
        for raw in self._new_events():
            kind = KINDS.get(raw["kind"])
            if kind is None or raw["round_id"] is None:
                continue
            data = raw.get("data") or {}
            self.events.append(
                RoundEvent(
                    str(raw["round_id"]),
                    kind,
                    float(raw["at"]),
                    str(data.get("clause", "")),
                    str(data.get("faces", "")),
                    str(data.get("reason", "")),
                    raw,
                )
            )
        return list(self.events)

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        path = f"/v1/players/{self.ids.get(player_id, player_id)}/bets"
        rows = self._ok(*self._call("GET", path, self.token), f"bet record of {player_id}")["bets"]
        return [
            BetRecordRow(
                str(r["bet_id"]),
                str(r["round_id"]),
                player_id,
                r["bet_type"],
                int(r["wagered"]),
                r["result"],
                int(r["returned"]),
                r["round_status"],
                r["outcome"] or "",
                int(r["balance_before"]),
                int(r["balance_after"]),
                str(r.get("client_bet_id", "")),
                None if r["reds"] is None else int(r["reds"]),
            )
            for r in rows
        ]

    def balance(self, player_id: str) -> int:
        path = f"/v1/players/{self.ids.get(player_id, player_id)}/balance"
        return int(self._ok(*self._call("GET", path, self.token), f"balance of {player_id}")["balance"])
