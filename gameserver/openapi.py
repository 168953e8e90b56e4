"""The published OpenAPI 3.1 document of the server's HTTP API (served at ``/openapi.json``).

Contract: every HTTP route the server has is here with every method it answers, every request body and
response body typed, and every status code it can send for client input listed (``503`` only when the ledger
failed). The WebSocket ``/v1/stream`` is not an HTTP operation and is described in ``info.description``.
"""

from __future__ import annotations

from typing import Any

from gameserver.bets import BetType
from gameserver.events import EventKind
from gameserver.model import EngineConfig

_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]
_WHY = {
    "400": "malformed_json, json_too_deep",
    "401": "missing_token, invalid_token, token_in_url",
    "403": "forbidden",
    "404": "not_found, unknown_round, unknown_player, unknown_action",
    "409": "the round or the wallet does not allow it now (see docs/server.md)",
    "413": "body_too_large (16 KiB)",
    "415": "unsupported_media_type: send application/json (UTF-8)",
    "422": "invalid_field and the stake and bet-type codes",
    "503": "unavailable: the ledger failed; gateway_failure: a device line, the trace or the ledger failed",
}
_STREAM = (
    "WebSocket `/v1/stream` (not an HTTP operation): the token in `Authorization: Bearer` or `?token=`; sends "
    "`{kind: hello, table}` then every event (an Event) as JSON text; a player sees no other player's bets. A "
    "refused connection is accepted and closed with code 4401 (missing_token) or 4403 (invalid_token)."
)


#: A SHA-256 digest as the identity gives it (gameserver/identity.py).
_DIGEST = {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: str, description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(schema)}}}


def _op(
    summary: str, ok: dict[str, Any], errors: str, *, body: str | None = None, required: bool = True, auth: bool = True
) -> dict[str, Any]:
    responses = dict(ok)
    for code in errors.split():
        responses[code] = {**_json("Error", _WHY[code])}
    op: dict[str, Any] = {"summary": summary, "responses": responses}
    if auth:
        op["security"] = _AUTH
    if body:
        op["requestBody"] = {"required": required, "content": {"application/json": {"schema": _ref(body)}}}
    return op


_CSV = {"200": {"description": "CSV", "content": {"text/csv": {"schema": {"type": "string"}}}}}
_PLAYER = {"name": "player_id", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
_ROUND_Q = {
    "name": "round_id",
    "in": "query",
    "required": False,
    "schema": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999_999},
}
_READ = "401 403 404 422 503"
_INT = {"type": "integer"}
_STR = {"type": "string"}
_NUM = {"type": "number"}


def _obj(props: dict[str, Any], required: list[str] | None = None, more: bool = False) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": more}
    schema["required"] = list(props) if required is None else required
    return schema


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _schemas(config: EngineConfig) -> dict[str, Any]:
    bet_types = [t.value for t in BetType]
    faces4 = {"type": "string", "pattern": "^[RW]{4}$"}
    reason = {"type": "string", "maxLength": 200, "pattern": "^[ -~]*$"}
    table = {
        "round_id": _nullable(_INT),
        "phase": _nullable({"type": "string", "enum": ["betting", "closed", "settled", "void", "cancelled"]}),
        "paused": _nullable(_STR),
        "closes_at": _NUM,
        "bets": _INT,
        "reshakes": _INT,
        "faces": _nullable(_STR),
    }
    status = {"type": "string", "enum": ["in_progress", "settled", "void", "cancelled"]}
    return {
        "Error": _obj({"error": _obj({"code": _STR, "message": _STR})}),
        "BetRequest": _obj(
            {
                "client_bet_id": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[ -~]+$"},
                "bet_type": {"type": "string", "enum": bet_types},
                "stake": {
                    "type": "integer",
                    "description": "minor units",
                    "minimum": config.min_stake,
                    "maximum": config.max_stake,
                    "multipleOf": config.chip_unit,
                },
                "round_id": {"type": ["integer", "null"]},
            },
            ["client_bet_id", "bet_type", "stake"],
        ),
        "Bet": _obj(
            {
                "bet_id": _INT,
                "client_bet_id": _STR,
                "player_id": _STR,
                "round_id": _INT,
                "bet_type": {"type": "string", "enum": bet_types},
                "stake": _INT,
                "placed_at": _NUM,
                "balance_before": _INT,
                "balance_after": _INT,
            }
        ),
        "BetAck": _obj({"bet": _ref("Bet"), "replayed": {"type": "boolean"}}),
        "Balance": _obj({"player_id": _STR, "balance": _INT}),
        "BetRecordRow": _obj(
            {
                "bet_id": _INT,
                "round_id": _INT,
                "player_id": _STR,
                "placed_at": _NUM,
                "settled_at": _nullable(_NUM),
                "bet_type": _STR,
                "wagered": _INT,
                "result": {"type": "string", "enum": ["pending", "win", "lose", "refund"]},
                "returned": _INT,
                "round_status": status,
                "outcome": _STR,
                "reds": _nullable(_INT),
                "balance_before": _INT,
                "balance_after": _INT,
                "client_bet_id": _STR,
            }
        ),
        "BetRecord": _obj({"bets": {"type": "array", "items": _ref("BetRecordRow")}}),
        "Round": _obj(
            {
                "round_id": _INT,
                "status": status,
                "phase": {"type": "string", "enum": ["betting", "closed", "settled", "void", "cancelled"]},
                "opened_at": _NUM,
                "closes_at": _NUM,
                "ended_at": _nullable(_NUM),
                "faces": _nullable(_STR),
                "reds": _nullable(_INT),
                "reshakes": _INT,
                "clause": _STR,
                "reason": _STR,
                "corrected": {"type": "boolean"},
            }
        ),
        "Rounds": _obj({"rounds": {"type": "array", "items": _ref("Round")}}),
        "Recall": _obj(
            {
                "round": _ref("Round"),
                "bets": {"type": "array", "items": _ref("BetRecordRow")},
                "events": {"type": "array", "items": _ref("Event")},
            },
            ["round", "bets"],
        ),
        "Event": _obj(
            {
                "seq": _INT,
                "at": _NUM,
                "kind": {"type": "string", "enum": [k.value for k in EventKind]},
                "round_id": _nullable(_INT),
                "significant": {"type": "boolean"},
                "data": {"type": "object", "description": "the kind's fields (docs/server.md)"},
            }
        ),
        "Events": _obj({"events": {"type": "array", "items": _ref("Event")}}),
        "ServerIdentity": _obj(
            {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "build": _DIGEST,
                "config": _DIGEST,
                "files": {"type": "object", "additionalProperties": _DIGEST, "description": "path -> digest"},
                "taken_at": {"type": "string", "description": "ISO 8601 UTC"},
            }
        ),
        "Identity": _obj({"at_start": _ref("ServerIdentity"), "now": _ref("ServerIdentity")}),
        "TableState": {
            "type": "object",
            "properties": table,
            "required": ["round_id", "phase"],
            "additionalProperties": False,
        },
        "Health": {
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "failed"]},
                "table": _ref("TableState"),
                "ignored_reports": _obj(
                    {"counts": {"type": "object"}, "sample": {"type": "array", "items": {"type": "object"}}}
                ),
                "devices": {"type": "object"},
                "failures": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["status", "table", "ignored_reports"],
        },
        "SupervisorAction": _obj({"reason": reason}, []),
        "Correction": _obj({"round_id": _INT, "faces": faces4}),
        "SupervisorResult": _obj({"ok": {"const": True}, "table": _ref("TableState")}),
        "NewPlayers": _obj(
            {
                "players": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 100,
                    "items": _obj(
                        {
                            "id": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$"},
                            "token": {"type": "string", "pattern": "^[!-~]{16,200}$"},
                            "balance": {"type": "integer", "minimum": 0, "maximum": 10**15},
                        }
                    ),
                }
            }
        ),
        "PlayersCreated": _obj({"ok": {"const": True}, "players": {"type": "array", "items": _STR}}),
    }


def openapi_document(config: EngineConfig | None = None) -> dict[str, Any]:
    """The OpenAPI document for a server with ``config``'s stake rules (a fresh dict each call)."""
    paths: dict[str, Any] = {
        "/health": {
            "get": _op(
                "Liveness, table state, device lines, ignored reports",
                {"200": _json("Health"), "503": _json("Health", "a part failed: `failures` names it")},
                "",
                auth=False,
            )
        },
        "/openapi.json": {
            "get": _op(
                "This document",
                {"200": {"description": "OpenAPI", "content": {"application/json": {"schema": {"type": "object"}}}}},
                "",
                auth=False,
            )
        },
        "/v1/bets": {
            "post": _op(
                "Place a bet (confirmed once committed; idempotent per client_bet_id)",
                {"201": _json("BetAck", "confirmed"), "200": _json("BetAck", "replay of a confirmed bet")},
                "400 401 403 404 409 413 415 422 503",
                body="BetRequest",
            )
        },
        "/v1/players/{player_id}/balance": {
            "get": {
                **_op("Balance (own account, or any for a supervisor)", {"200": _json("Balance")}, "401 403 404 503"),
                "parameters": [_PLAYER],
            }
        },
        "/v1/players/{player_id}/bets": {
            "get": {**_op("Bet record", {"200": _json("BetRecord")}, _READ), "parameters": [_PLAYER, _ROUND_Q]}
        },
        "/v1/players/{player_id}/bets.csv": {
            "get": {**_op("Bet record as BETS.csv", _CSV, _READ), "parameters": [_PLAYER, _ROUND_Q]}
        },
        "/v1/rounds": {"get": _op("Every round", {"200": _json("Rounds")}, "401 503")},
        "/v1/rounds/current": {"get": _op("The table state", {"200": _json("TableState")}, "401 503")},
        "/v1/rounds/{round_id}": {
            "get": {
                **_op("Game recall of one round (events for a supervisor)", {"200": _json("Recall")}, "401 404 503"),
                "parameters": [
                    {"name": "round_id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 0}}
                ],
            }
        },
        "/v1/outcomes.csv": {
            "get": {
                **_op("OUTCOMES.csv (?after=N: the rounds numbered above N)", _CSV, "401 422 503"),
                "parameters": [
                    {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}}
                ],
            }
        },
        "/v1/identity": {
            "get": _op("The server's identity at its start and now (supervisor)", {"200": _json("Identity")}, "401 403")
        },
        "/v1/events": {
            "get": {
                **_op("Event log (supervisor)", {"200": _json("Events")}, "401 403 422 503"),
                "parameters": [
                    {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 2**62}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10_000}},
                ],
            }
        },
    }
    for action, summary in (
        ("pause", "Pause the round (ERR-1)"),
        ("resume", "Resume a paused round (ERR-2)"),
        ("cancel", "Cancel the round and refund every bet (ERR-3)"),
        ("open", "Open a round (when auto_open is off)"),
    ):
        paths[f"/v1/supervisor/{action}"] = {
            "post": _op(
                summary,
                {"200": _json("SupervisorResult")},
                "400 401 403 409 413 415 422 503",
                body="SupervisorAction",
                required=False,
            )
        }
    paths["/v1/supervisor/correct"] = {
        "post": _op(
            "Correct a misread outcome of the last settled round",
            {"200": _json("SupervisorResult")},
            "400 401 403 409 413 415 422 503",
            body="Correction",
        )
    }
    paths["/v1/supervisor/players"] = {
        "post": _op(
            "Create test players, each with a wallet, an opening balance and a token",
            {"200": _json("PlayersCreated")},
            "400 401 403 409 413 415 422 503",
            body="NewPlayers",
        )
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "xocdia-hil reference game server", "version": "1", "description": _STREAM},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": _schemas(config or EngineConfig()),
        },
    }
