"""SHA-256 digests as the evidence pack writes them: ``sha256:`` and 64 lowercase hex digits."""

from __future__ import annotations

import hashlib
from pathlib import Path

PREFIX = "sha256:"
_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``."""
    return PREFIX + hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """``sha256:<hex>`` of the file's bytes, read in chunks.

    Raises:
        OSError: the file cannot be read.
    """
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return PREFIX + h.hexdigest()


def tree_digest(folder: Path) -> str:
    """One digest of a folder's files: SHA-256 over each file's path (relative, ``/``-separated) and digest, in
    sorted order, one ``PATH DIGEST`` line each; byte-compiled caches (``__pycache__``, ``*.pyc``) are left out, so
    the digest of an installed package is the same before and after it is imported."""
    lines = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        lines.append(f"{path.relative_to(folder).as_posix()} {sha256_file(path)}\n")
    return sha256_bytes("".join(lines).encode("utf-8"))


def is_digest(text: object) -> bool:
    """True for ``sha256:`` followed by exactly 64 lowercase hex digits."""
    if not isinstance(text, str) or not text.startswith(PREFIX) or len(text) != len(PREFIX) + 64:
        return False
    return all(c in "0123456789abcdef" for c in text[len(PREFIX) :])
