"""What the API accepts as a request: the token, and a JSON body read within limits.

Contracts (docs/server.md, "API"):

- an HTTP request authenticates with ``Authorization: Bearer <token>`` only; a token in the URL is refused
  (``401 token_in_url``, even beside a valid header) so that it does not end up in logs and histories; the
  WebSocket alone also takes ``?token=`` (browsers cannot set headers on it);
- a body is read as it streams and refused with ``413 body_too_large`` as soon as it is known to exceed
  :data:`MAX_BODY` bytes (from ``Content-Length`` before reading anything, else after at most ``MAX_BODY`` + one
  chunk), so a large body never sits in memory;
- a body must be sent as ``Content-Type: application/json`` (a ``charset`` parameter, if any, ``utf-8``), else
  ``415 unsupported_media_type``; it must be UTF-8 (``400 malformed_json``), JSON (``400 malformed_json``), an
  object (``400 malformed_json``) nested at most :data:`MAX_DEPTH` arrays/objects deep (``400 json_too_deep``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from starlette.requests import ClientDisconnect, HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.types import Receive

from gameserver.config import Principal

ASCII = re.compile(r"^[ -~]*$")  # printable ASCII: ids and reasons end up in CSV files and logs


def integer(value: Any) -> int | None:
    """A JSON integer (JSON Schema counts ``100.0`` as one), else None; booleans are not integers."""
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    return None


MAX_BODY = 16 * 1024
MAX_DEPTH = 32


class ApiError(Exception):
    """A rejection to send as ``status`` with a stable ``code``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error(status: int, code: str, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The one error body shape."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def authenticate(conn: HTTPConnection, tokens: Mapping[str, Principal], query_ok: bool = False) -> Principal:
    """The principal of the request's bearer token (``query_ok``: ``?token=`` also counts, for the WebSocket).
    Raises ApiError 401 ``missing_token``, ``invalid_token`` or ``token_in_url``."""
    return principal(conn.headers.get("authorization"), conn.query_params.get("token"), tokens, query_ok)


def principal(
    header: str | None, in_query: str | None, tokens: Mapping[str, Principal], query_ok: bool = False
) -> Principal:
    """:func:`authenticate` on the request's ``Authorization`` header and ``token`` query parameter (or None)."""
    if in_query is not None and not query_ok:
        raise ApiError(401, "token_in_url", "send the token as 'Authorization: Bearer <token>', not in the URL")
    token = in_query if header is None else None
    if header is not None:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise ApiError(401, "invalid_token", "Authorization must be 'Bearer <token>'")
    if not token:
        raise ApiError(401, "missing_token", "an Authorization: Bearer <token> header is required")
    who = tokens.get(token)
    if who is None:
        raise ApiError(401, "invalid_token", "unknown token")
    return who


async def read_json(request: Request, required: bool = True) -> dict[str, Any]:
    """The request's JSON object within the limits above; ``{}`` for an absent body when not ``required``."""
    body = await receive_body(request.headers.get("content-length"), request.receive)
    return parse_json(body, request.headers.get("content-type"), required)


async def receive_body(declared: str | None, receive: Receive) -> bytes:
    """The raw body from the ASGI ``receive`` (``declared``: the ``Content-Length`` header), at most
    :data:`MAX_BODY` bytes; raises ApiError 413 without reading past the limit, ClientDisconnect when the client
    went away."""
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        raise ApiError(413, "body_too_large", f"request body over {MAX_BODY} bytes")
    body = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        chunk: bytes = message.get("body", b"")
        body += chunk
        if len(body) > MAX_BODY:
            raise ApiError(413, "body_too_large", f"request body over {MAX_BODY} bytes")
        if not message.get("more_body", False):
            return body


def parse_json(body: bytes, ctype: str | None, required: bool = True) -> dict[str, Any]:
    """``body`` as a JSON object within the limits above (``ctype``: the ``Content-Type`` header, or None);
    ``{}`` for an absent body when not ``required``."""
    if not required and not body.strip():
        return {}
    if ctype is None or not _is_json_utf8(ctype):
        raise ApiError(415, "unsupported_media_type", "send the body as Content-Type: application/json (UTF-8)")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "malformed_json", "the request body is not UTF-8") from None
    if _depth(text) > MAX_DEPTH:
        raise ApiError(400, "json_too_deep", f"JSON nested more than {MAX_DEPTH} levels")
    try:
        data = json.loads(text)
    except ValueError:
        raise ApiError(400, "malformed_json", "the request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "malformed_json", "the request body must be a JSON object")
    return data


def _is_json_utf8(ctype: str) -> bool:
    media, *params = (p.strip().lower() for p in ctype.split(";"))
    if media != "application/json":
        return False
    for param in params:
        key, _, value = param.partition("=")
        if key.strip() == "charset" and value.strip().strip('"') not in ("utf-8", "utf8"):
            return False
    return True


def _depth(text: str) -> int:
    """The deepest nesting of arrays/objects in ``text`` (brackets inside strings do not count)."""
    opened = text.count("[") + text.count("{")
    if opened <= MAX_DEPTH:
        return opened  # an upper bound, and within the limit
    deepest = depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest
