"""The reference server's identity (``GET /v1/identity``, docs/server.md "Identity") as the reference adapters'
``identify()`` reports it (:class:`~harness.bench.adapters.capabilities.Identifying`).

Guarantees: the components are the server's package files as it reads them now (``gameserver/engine.py`` ...) and
``config``, the digest of its effective configuration; ``build`` is the build digest taken now; ``extra`` carries
when the server took it (``server_taken_at``) and the build it had at its start (``build_at_start``), so a file
changed under a running server shows.
"""

from __future__ import annotations

from typing import Any

from harness.errors import AdapterError

__all__ = ["reported_identity"]


def reported_identity(body: Any) -> dict[str, Any]:
    """``body`` (``{"at_start": {...}, "now": {...}}``) as an ``identify()`` answer.

    Raises:
        AdapterError: ``bad_response`` naming the part of the body that is missing or of the wrong type.
    """
    if not isinstance(body, dict) or not isinstance(body.get("now"), dict):
        raise AdapterError("bad_response", "GET /v1/identity: the body has no 'now' object")
    now, start = body["now"], body.get("at_start")
    files = now.get("files")
    if not isinstance(files, dict):
        raise AdapterError("bad_response", "GET /v1/identity: now.files is not an object of path -> digest")
    extra = {"server_taken_at": str(now.get("taken_at", ""))}
    if isinstance(start, dict):
        extra["build_at_start"] = str(start.get("build", ""))
    return {
        "name": now.get("name"),
        "version": now.get("version"),
        "build": now.get("build"),
        "components": {**files, "config": now.get("config")},
        "extra": extra,
    }
