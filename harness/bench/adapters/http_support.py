"""Helpers of the reference HTTP adapter (:mod:`harness.bench.adapters.reference_http`): error codes, finding the
server program, and what it does on a server it is attached to by URL (skipping the event log of earlier
scenarios, creating each scenario's players through ``POST /v1/supervisor/players``)."""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import Any

from harness.bench.adapters.reference_events import bet_row
from harness.errors import AdapterError
from harness.records import BetRecordRow, PlayerSpec

#: ``call(method, path, token, body)`` -> (HTTP status, decoded JSON body); raises AdapterError when unreachable.
Call = Callable[[str, str, str, Any], tuple[int, Any]]
PAGE = 1000


def code_of(data: Any) -> str:
    """The server's error code in a response body (``{"error": {"code": ...}}``), else ``error``."""
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return str(data["error"].get("code", "error"))
    return "error"


def resolve(command: list[str]) -> list[str]:
    """Find the program on PATH or beside this interpreter (a venv's ``bin`` that is not on PATH)."""
    here = os.path.dirname(sys.executable)
    found = shutil.which(command[0], path=os.pathsep.join([here, os.environ.get("PATH", "")]))
    return [found or command[0], *command[1:]]


def log_end(call: Call, boss: str) -> int:
    """The sequence number of the last event in the server's log (0 when empty): a scenario on a server that was
    already running reads only the events after it.

    Raises:
        AdapterError: the log cannot be read (the server's code).
    """
    after = 0
    while True:
        status, data = call("GET", f"/v1/events?after={after}&limit={PAGE}", boss, None)
        if status != 200:
            raise AdapterError(code_of(data), "cannot read the event log")
        rows = data["events"]
        if rows:
            after = max(after, *(int(r["seq"]) for r in rows))
        if len(rows) < PAGE:
            return after


def round_bets(call: Call, boss: str, round_id: str) -> list[BetRecordRow]:
    """Every player's bets of round ``round_id`` by the supervisor's game recall ``GET /v1/rounds/{id}``, as the
    server names the players; ``[]`` for a round id the server cannot have (not a decimal of at most 18 digits) or
    does not know (404).

    Raises:
        AdapterError: the recall is refused otherwise (the server's code).
    """
    if not round_id.isdigit() or len(round_id) > 18:
        return []
    status, data = call("GET", f"/v1/rounds/{round_id}", boss, None)
    if status == 404:
        return []
    if status != 200:
        raise AdapterError(code_of(data), f"cannot read the bets of round {round_id}")
    return [bet_row(raw) for raw in data["bets"]]


def provision(call: Call, boss: str, players: Sequence[PlayerSpec]) -> tuple[dict[str, str], dict[str, str]]:
    """Create the scenario's players on the server, each under a fresh id (``alice-1f2e3d4c``: the scenario's name
    plus a random suffix, so scenarios and workers never share a wallet) with a fresh token and its opening balance.
    Returns (scenario id -> token, scenario id -> server id).

    Raises:
        AdapterError: the server refused (its code: ``forbidden``, ``wallet_exists``, ``invalid_field`` ...).
    """
    if not players:
        return {}, {}
    suffix = secrets.token_hex(4)
    ids = {p.player_id: f"{p.player_id}-{suffix}" for p in players}
    tokens = {p.player_id: secrets.token_urlsafe(24) for p in players}
    body = {"players": [{"id": ids[p.player_id], "token": tokens[p.player_id], "balance": p.balance} for p in players]}
    status, data = call("POST", "/v1/supervisor/players", boss, body)
    if status != 200:
        message = data.get("error", {}).get("message", "") if isinstance(data, dict) else ""
        raise AdapterError(code_of(data), f"cannot create the scenario's players: {message}")
    return tokens, ids
