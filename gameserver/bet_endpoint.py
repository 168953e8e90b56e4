"""``POST /v1/bets``, the API's hot path, as a bare ASGI application.

Same contract as every endpoint of :mod:`gameserver.api` (docs/server.md, "API"): the bearer token and the body are
taken by :mod:`gameserver.http_input`'s rules, every rejection is ``{"error": {"code", "message"}}`` with a 4xx
status and changes nothing, an unexpected failure is ``500 internal_error``. A bet is answered ``201 {bet,
replayed: false}`` only once the service has committed it (``200 {..., replayed: true}`` for an idempotent
replay). The body is JSON as Starlette's ``JSONResponse`` writes it, byte for byte.

It is reached without Starlette's request, response and middleware objects: :meth:`Api.app` hands it every
``POST /v1/bets`` directly, and the Starlette route holds it too (so other methods get Starlette's ``405``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from gameserver.config import Principal
from gameserver.engine import RoundEngine
from gameserver.http_input import ASCII, ApiError, integer, parse_json, principal, receive_body

log = logging.getLogger("gameserver.api")
_FIELDS = frozenset({"client_bet_id", "bet_type", "stake", "round_id"})
#: the encoding of Starlette's JSONResponse, built once
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode


def json_body(content: Any) -> bytes:
    """``content`` encoded as Starlette's ``JSONResponse`` encodes it."""
    return _encode(content).encode("utf-8")


class BetEndpoint:
    """The ASGI application of ``POST /v1/bets``.

    ``tokens`` is read at each request (the API adds provisioned players to it); ``run(command)`` runs a command
    on the engine once its events are committed and raises ApiError for a rejection or an unavailable engine.
    """

    def __init__(
        self, tokens: Mapping[str, Principal], run: Callable[[Callable[[RoundEngine], Any]], Awaitable[Any]]
    ) -> None:
        self.tokens = tokens
        self.run = run

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            status, body = await self._place(scope, receive)
        except ApiError as exc:
            status, body = exc.status, json_body({"error": {"code": exc.code, "message": exc.message}})
        except ClientDisconnect:
            return  # nobody to answer; nothing was submitted
        except Exception:
            log.exception("POST /v1/bets failed")
            status, body = 500, json_body({"error": {"code": "internal_error", "message": "unexpected server error"}})
        headers = [(b"content-length", b"%d" % len(body)), (b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _place(self, scope: Scope, receive: Receive) -> tuple[int, bytes]:
        authorization = content_type = content_length = None
        for name, value in scope["headers"]:  # the first of each, as Starlette's Headers.get
            if name == b"authorization" and authorization is None:
                authorization = value.decode("latin-1")
            elif name == b"content-type" and content_type is None:
                content_type = value.decode("latin-1")
            elif name == b"content-length" and content_length is None:
                content_length = value.decode("latin-1")
        query = scope["query_string"]
        who = principal(authorization, QueryParams(query).get("token") if query else None, self.tokens)
        if who.role != "player":
            raise ApiError(403, "forbidden", "only players place bets")
        data = parse_json(await receive_body(content_length, receive), content_type)
        client_id = data.get("client_bet_id")
        if not isinstance(client_id, str) or not 1 <= len(client_id) <= 64 or not ASCII.match(client_id):
            raise ApiError(422, "invalid_field", "client_bet_id must be a string of 1-64 printable ASCII characters")
        bet_type = data.get("bet_type")
        if not isinstance(bet_type, str):
            raise ApiError(422, "invalid_field", "bet_type must be a string")
        stake = integer(data.get("stake"))
        if stake is None:
            raise ApiError(422, "invalid_field", "stake must be an integer number of minor units")
        round_id = data.get("round_id")
        if round_id is not None and (round_id := integer(round_id)) is None:
            raise ApiError(422, "invalid_field", "round_id must be an integer when given")
        if not _FIELDS.issuperset(data):
            raise ApiError(422, "invalid_field", f"unknown field {sorted(set(data) - _FIELDS)[0]!r}")
        player = who.id
        ack, replayed = await self.run(lambda e: e.place_bet(player, client_id, bet_type, stake, round_id))
        return (200 if replayed else 201), json_body({"bet": ack.to_json(), "replayed": replayed})
