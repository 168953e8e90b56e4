"""Test players created through the supervisor: ``POST /v1/supervisor/players``.

A certification harness attached to a running server by URL creates the players of each scenario here, each with
its own id, token and opening balance, instead of a lab funding accounts by hand. Body::

    {"players": [{"id": "alice-7f3a", "token": "secret-at-least-16-chars", "balance": 10000}, ...]}

Guarantees: the request is checked whole before anything is created (ids like the config's, printable-ASCII tokens
of 16 to 200 characters, whole balances from 0 to 10^15, at most 100 players, no id or token twice); then each
wallet is opened in the engine (its ``wallet_opened`` event is logged like a configured one) and the token accepted
from then on. An id that already has a wallet (or appears twice) is refused with ``wallet_exists`` (409), a token
already in use (or twice) with ``token_exists`` (409), all before anything is created.
"""

from __future__ import annotations

import re
from typing import Any

from gameserver.http_input import ApiError, integer

_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")  # as the config's player ids
_TOKEN = re.compile(r"^[!-~]{16,200}$")  # printable ASCII, no space
MAX_PLAYERS = 100
MAX_BALANCE = 10**15


def parse_players(data: dict[str, Any], tokens_in_use: set[str]) -> list[tuple[str, str, int]]:
    """The (id, token, balance) of each player in a request body.

    Raises:
        ApiError: 422 ``invalid_field`` naming the field and what it allows; 409 ``token_exists`` or
            ``wallet_exists`` (an id twice in the request).
    """
    extra = sorted(set(data) - {"players"})
    if extra:
        raise ApiError(422, "invalid_field", f"unknown field {extra[0]!r}; allowed: players")
    players = data.get("players")
    if not isinstance(players, list) or not 1 <= len(players) <= MAX_PLAYERS:
        raise ApiError(422, "invalid_field", f"players must be a list of 1 to {MAX_PLAYERS} players")
    out: list[tuple[str, str, int]] = []
    for i, entry in enumerate(players):
        where = f"players[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"id", "token", "balance"}:
            raise ApiError(422, "invalid_field", f"{where} must have exactly id, token and balance")
        pid, token, balance = entry["id"], entry["token"], integer(entry["balance"])
        if not isinstance(pid, str) or not _ID.match(pid):
            raise ApiError(422, "invalid_field", f"{where}.id must be 1-64 of A-Z a-z 0-9 _ . : -")
        if not isinstance(token, str) or not _TOKEN.match(token):
            raise ApiError(422, "invalid_field", f"{where}.token must be 16-200 printable ASCII characters, no space")
        if balance is None or not 0 <= balance <= MAX_BALANCE:
            raise ApiError(422, "invalid_field", f"{where}.balance must be a whole number from 0 to {MAX_BALANCE}")
        if token in tokens_in_use or any(token == t for _, t, _ in out):
            raise ApiError(409, "token_exists", f"{where}.token is already in use")
        if any(pid == p for p, _, _ in out):
            raise ApiError(409, "wallet_exists", f"{where}.id appears twice in the request")
        out.append((pid, token, balance))
    return out
