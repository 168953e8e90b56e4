"""An access request (:class:`~harness.judge.access.AccessRequest`) in the form of the reference server's API, and
the server's answer read back, for both reference adapters (over a socket, or through the ASGI application
in-process): which token, which method and path, which body, and how a status reads as an
:class:`~harness.judge.access.Answer` (docs/server.md, "API")."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.bench.adapters.http_support import code_of
from harness.errors import AdapterError
from harness.judge.access import CORRECT, CREATE_PLAYER, AccessAction, AccessAnswer, AccessRequest, Answer, Credentials

__all__ = ["DENIED_STATUSES", "DENIED_WS_CODES", "HttpAsk", "answer_of", "http_ask", "ws_answer"]

#: HTTP statuses that refuse a request for its credentials (401: none or unknown; 403: not allowed this)
DENIED_STATUSES = frozenset({401, 403})
#: WebSocket close codes of a stream refused for its credentials (``gameserver.api.WS_CLOSE``)
DENIED_WS_CODES = frozenset({4401, 4403})


@dataclass(frozen=True, slots=True)
class HttpAsk:
    """One request to send: ``token`` None sends no ``Authorization`` header; ``body`` None sends no body. A
    ``connect`` is ``GET /v1/stream`` (a WebSocket, ``token`` as its ``?token=``)."""

    method: str
    path: str
    token: str | None
    body: dict[str, Any] | None = None


def http_ask(
    request: AccessRequest, tokens: Mapping[str, str], supervisor: str, ids: Mapping[str, str] | None = None
) -> HttpAsk:
    """``request`` as the reference API takes it: the holder's token from ``tokens`` (player id -> token), the
    ``supervisor`` token, no token, or a fresh token the server never issued; the target account under its id on
    the server (``ids``: scenario player id -> server id, for players created under other ids; default the same).
    A bet names an account other than the holder's in a ``player_id`` field of its body (the API takes the player
    from the token and refuses unknown fields: an account named so is never the server's to take). A correction is
    ``POST /v1/supervisor/correct`` with the round id (a whole number) and the faces as the request has them; a
    player to create is ``POST /v1/supervisor/players`` with the target's server id, a fresh token and the balance.

    Raises:
        AdapterError: ``unknown_player`` when the holder has no token here.
    """
    if request.credentials == Credentials.PLAYER:
        token: str | None = tokens.get(request.holder)
        if token is None:
            raise AdapterError("unknown_player", f"no token for player {request.holder!r}")
    elif request.credentials == Credentials.SUPERVISOR:
        token = supervisor
    elif request.credentials == Credentials.UNKNOWN:
        token = "never-issued-" + secrets.token_hex(8)
    else:
        token = None
    action = request.action
    target = (ids or {}).get(request.target, request.target)
    if action == AccessAction.BET:
        body: dict[str, Any] = {
            "client_bet_id": request.client_bet_id,
            "bet_type": request.bet_type,
            "stake": request.stake,
        }
        if request.target != request.holder:
            body["player_id"] = target
        return HttpAsk("POST", "/v1/bets", token, body)
    if action == AccessAction.BALANCE:
        return HttpAsk("GET", f"/v1/players/{target}/balance", token)
    if action == AccessAction.BET_RECORD:
        return HttpAsk("GET", f"/v1/players/{target}/bets", token)
    if action == AccessAction.SUPERVISE and request.supervisor_action == CORRECT:
        body = {"round_id": int(request.round_id), "faces": request.faces}
        return HttpAsk("POST", "/v1/supervisor/correct", token, body)
    if action == AccessAction.SUPERVISE and request.supervisor_action == CREATE_PLAYER:
        player = {"id": target, "token": secrets.token_urlsafe(24), "balance": request.balance}
        return HttpAsk("POST", "/v1/supervisor/players", token, {"players": [player]})
    if action == AccessAction.SUPERVISE:
        return HttpAsk("POST", f"/v1/supervisor/{request.supervisor_action}", token, {})
    return HttpAsk("GET", "/v1/stream", token)


def answer_of(request: AccessRequest, status: int, data: Any) -> AccessAnswer:
    """The server's HTTP answer to ``request`` (``data``: the decoded JSON body): 2xx accepted (a bet with its bet id
    and round id), 401 or 403 denied, any other status refused; the code from the error body."""
    if 200 <= status < 300:
        bet = data.get("bet") if isinstance(data, dict) else None
        if request.action == AccessAction.BET and isinstance(bet, dict):
            return AccessAnswer(request, Answer.ACCEPTED, "", str(bet.get("bet_id", "")), str(bet.get("round_id", "")))
        return AccessAnswer(request, Answer.ACCEPTED)
    answer = Answer.DENIED if status in DENIED_STATUSES else Answer.REFUSED
    return AccessAnswer(request, answer, code_of(data))


def ws_answer(request: AccessRequest, close_code: int | None, reason: str = "") -> AccessAnswer:
    """The answer to a ``connect``: accepted when the stream opened (``close_code`` None), denied when it was closed
    with a code of :data:`DENIED_WS_CODES`, refused otherwise (``reason``: the close reason, the server's code)."""
    if close_code is None:
        return AccessAnswer(request, Answer.ACCEPTED)
    answer = Answer.DENIED if close_code in DENIED_WS_CODES else Answer.REFUSED
    return AccessAnswer(request, answer, reason or str(close_code))
