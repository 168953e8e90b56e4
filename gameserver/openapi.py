"""The published OpenAPI 3.1 document of the server's API (served at ``/openapi.json``)."""

from __future__ import annotations

from typing import Any

from gameserver.bets import BetType

_ERROR = {"$ref": "#/components/responses/Error"}
_AUTH: list[dict[str, list[str]]] = [{"bearer": []}]


def _op(summary: str, ok: dict[str, Any], *, body: str | None = None, auth: bool = True) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {**ok, "4XX": _ERROR}}
    if auth:
        op["security"] = _AUTH
    if body:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}},
        }
    return op


def _json(schema: str, description: str = "OK") -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }


_CSV = {"200": {"description": "CSV", "content": {"text/csv": {"schema": {"type": "string"}}}}}
_PLAYER = [{"name": "player_id", "in": "path", "required": True, "schema": {"type": "string"}}]


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document (a fresh dict each call)."""
    paths: dict[str, Any] = {
        "/health": {"get": _op("Liveness and table state", {"200": _json("Health")}, auth=False)},
        "/openapi.json": {"get": _op("This document", {"200": {"description": "OpenAPI"}}, auth=False)},
        "/v1/bets": {
            "post": _op(
                "Place a bet (confirmed once committed; idempotent per client_bet_id)",
                {"201": _json("BetAck", "confirmed"), "200": _json("BetAck", "replay of a confirmed bet")},
                body="BetRequest",
            )
        },
        "/v1/players/{player_id}/balance": {
            "get": {
                **_op("Balance (own account, or any for a supervisor)", {"200": _json("Balance")}),
                "parameters": _PLAYER,
            }
        },
        "/v1/players/{player_id}/bets": {
            "get": {**_op("Bet record / game recall", {"200": _json("BetRecord")}), "parameters": _PLAYER}
        },
        "/v1/players/{player_id}/bets.csv": {"get": {**_op("Bet record as BETS.csv", _CSV), "parameters": _PLAYER}},
        "/v1/rounds": {"get": _op("Every round", {"200": {"description": "rounds"}})},
        "/v1/rounds/current": {"get": _op("The current round", {"200": {"description": "table state"}})},
        "/v1/rounds/{round_id}": {
            "get": {
                **_op("Game recall of one round", {"200": {"description": "round, bets, events"}}),
                "parameters": [{"name": "round_id", "in": "path", "required": True, "schema": {"type": "integer"}}],
            }
        },
        "/v1/outcomes.csv": {"get": _op("OUTCOMES.csv", _CSV)},
        "/v1/events": {"get": _op("Event log (supervisor)", {"200": {"description": "events"}})},
        "/v1/stream": {
            "get": _op("WebSocket of round events (token in header or ?token=)", {"101": {"description": "upgrade"}})
        },
    }
    for action, summary in (
        ("pause", "Pause the round (ERR-1)"),
        ("resume", "Resume a paused round (ERR-2)"),
        ("cancel", "Cancel the round and refund every bet (ERR-3)"),
        ("correct", "Correct a misread outcome of the last settled round"),
        ("open", "Open a round (when auto_open is off)"),
    ):
        paths[f"/v1/supervisor/{action}"] = {
            "post": _op(summary, {"200": {"description": "done"}}, body="SupervisorAction")
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": "xocdia-hil reference game server", "version": "1"},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "responses": {"Error": _json("Error", "rejected; nothing changed")},
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {
                            "type": "object",
                            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                            "required": ["code", "message"],
                        }
                    },
                },
                "BetRequest": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["client_bet_id", "bet_type", "stake"],
                    "properties": {
                        "client_bet_id": {"type": "string", "minLength": 1, "maxLength": 64},
                        "bet_type": {"type": "string", "enum": [t.value for t in BetType]},
                        "stake": {
                            "type": "integer",
                            "description": "minor units, a multiple of the chip unit",
                        },
                        "round_id": {"type": "integer"},
                    },
                },
                "BetAck": {
                    "type": "object",
                    "properties": {"bet": {"type": "object"}, "replayed": {"type": "boolean"}},
                },
                "Balance": {
                    "type": "object",
                    "properties": {"player_id": {"type": "string"}, "balance": {"type": "integer"}},
                },
                "BetRecord": {
                    "type": "object",
                    "properties": {"bets": {"type": "array", "items": {"type": "object"}}},
                },
                "Health": {"type": "object", "properties": {"status": {"type": "string"}}},
                "SupervisorAction": {
                    "type": "object",
                    "properties": {
                        "reason": {"type": "string"},
                        "round_id": {"type": "integer"},
                        "faces": {"type": "string", "pattern": "^[RW]{4}$"},
                    },
                },
            },
        },
    }
