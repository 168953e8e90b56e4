"""What the reference server reports about itself: a SHA-256 inventory of its installed package files, a digest of
its effective configuration, its name and version, and a build digest over the inventory (docs/server.md,
"Identity").

:class:`IdentitySource` takes the identity once when the server starts and again on every :meth:`~IdentitySource.
to_json` (``GET /v1/identity``), so a file changed under a running server shows as a difference between the two.

Guarantees:

- The inventory lists every file under the ``gameserver`` package directory as installed (``gameserver/engine.py``,
  ``gameserver/dialects/ascii/line.py``, ``gameserver/py.typed`` ...), by its path relative to the directory that
  holds the package, with ``/`` separators, each as ``sha256:<64 hex>`` of its bytes. Bytecode caches
  (``__pycache__`` folders, ``*.pyc``) are left out: the interpreter writes them when it imports a module, so they
  are derived from the sources and differ between interpreters.
- ``build`` is ``sha256:`` over the sorted inventory, one ``<digest>  <path>\\n`` line a file: two installs have the
  same build exactly when they hold the same files with the same bytes.
- The configuration's digest is ``sha256:`` over its canonical JSON (keys sorted, no spaces, ASCII) of
  :func:`config_document`: what decides the game (the engine's settings, each line's dialect, roles, options and
  untagged-report policy, the heartbeat timeout, the HTTP limits, the trace's rotation). Players' wallets, tokens
  and the URLs the lines are plugged into are left out: they are a bench's wiring and secrets, not the server's
  configuration, and they change from one run to the next.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from gameserver.config import ServerConfig

__all__ = [
    "NAME",
    "PACKAGE_ROOT",
    "IdentitySource",
    "ServerIdentity",
    "build_digest",
    "config_document",
    "digest_json",
    "package_inventory",
    "server_version",
]

NAME = "xocdia-server"
#: The installed ``gameserver`` package directory (the one this module was imported from).
PACKAGE_ROOT = Path(__file__).resolve().parent
_DISTRIBUTION = "xocdia-hil"


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def package_inventory(root: Path = PACKAGE_ROOT) -> dict[str, str]:
    """Every file under ``root`` (bytecode caches left out), by its path relative to ``root``'s parent with ``/``
    separators (``gameserver/engine.py``), each as ``sha256:<64 hex>``; sorted by path. Raises OSError when a file
    cannot be read."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root.parent)
        if "__pycache__" in rel.parts or path.suffix == ".pyc" or not path.is_file():
            continue
        found[rel.as_posix()] = _sha256(path.read_bytes())
    return dict(sorted(found.items()))


def build_digest(inventory: Mapping[str, str]) -> str:
    """``sha256:`` over the sorted inventory, one ``<digest>  <path>\\n`` line a file."""
    lines = "".join(f"{digest}  {path}\n" for path, digest in sorted(inventory.items()))
    return _sha256(lines.encode("utf-8"))


def digest_json(document: Any) -> str:
    """``sha256:`` over ``document``'s canonical JSON (keys sorted, ``,``/``:`` separators, ASCII)."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return _sha256(text.encode("ascii"))


def config_document(config: ServerConfig, lines: Iterable[str]) -> dict[str, Any]:
    """The identifying part of the effective configuration of a server whose device lines are ``lines`` (their
    names): the engine's settings, the default dialect and each line's dialect, roles, options and untagged-report
    policy as the server applies them, the heartbeat timeout, the HTTP limits and the trace's rotation. Wallets,
    tokens and line URLs are left out (module docstring)."""
    devices = {
        name: {
            "dialect": config.device_dialects.get(name, config.dialect),
            "roles": list(config.device_roles.get(name, ())),
            "options": dict(config.device_options.get(name, {})),
            "untagged_reports": "accept" if config.device_untagged.get(name, config.accept_untagged) else "refuse",
        }
        for name in sorted(set(lines))
    }
    return {
        "engine": asdict(config.engine),
        "dialect": config.dialect,
        "devices": devices,
        "untagged_reports": "accept" if config.accept_untagged else "refuse",
        "heartbeat_timeout_s": config.heartbeat_timeout_s,
        "http": asdict(config.http),
        "trace": {"max_bytes": config.trace_max_bytes, "keep": config.trace_keep},
    }


def server_version() -> str:
    """The installed version of the distribution that ships the server (``xocdia-hil``), or ``unknown``."""
    try:
        return version(_DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class ServerIdentity:
    """The server at one moment: its name and version, the build digest, the digest of its configuration, the
    inventory of its package files and when it was taken (ISO 8601 UTC)."""

    name: str
    version: str
    build: str
    config: str
    files: tuple[tuple[str, str], ...]
    taken_at: str

    def to_json(self) -> dict[str, Any]:
        """The identity as ``GET /v1/identity`` serves it: ``files`` maps each path to its digest."""
        return {
            "name": self.name,
            "version": self.version,
            "build": self.build,
            "config": self.config,
            "files": dict(self.files),
            "taken_at": self.taken_at,
        }


class IdentitySource:
    """Takes the server's identity: once at construction (the server's start, :attr:`at_start`) and again at each
    :meth:`take`. ``config`` is :func:`config_document`'s result; ``clock`` gives POSIX seconds for ``taken_at``.
    Raises OSError when a package file cannot be read."""

    def __init__(
        self, config: Mapping[str, Any], root: Path = PACKAGE_ROOT, clock: Callable[[], float] = time.time
    ) -> None:
        self._config = digest_json(dict(config))
        self._root = root
        self._clock = clock
        self._version = server_version()
        self.at_start = self.take()

    def take(self) -> ServerIdentity:
        """The identity now: the inventory read again from the files."""
        files = package_inventory(self._root)
        at = datetime.fromtimestamp(self._clock(), UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        return ServerIdentity(NAME, self._version, build_digest(files), self._config, tuple(files.items()), at)

    def to_json(self) -> dict[str, Any]:
        """``{"at_start": ..., "now": ...}``: the identity taken at start and one taken now."""
        return {"at_start": self.at_start.to_json(), "now": self.take().to_json()}
