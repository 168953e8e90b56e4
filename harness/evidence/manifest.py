"""The manifest of an evidence pack (``manifest.json``): what was tested, by what, by whom, when, with what
result, and the SHA-256 of every other file of the pack. Its bytes are what the signature covers
(:mod:`harness.evidence.signing`); its own digest is how a later version names it (``amends``).

The fields (docs/evidence.md maps each to the GLI-19 / ISO/IEC 17025 clause it serves):

- ``format``: :data:`FORMAT`. ``report_id``: unique (uuid4). ``version``: 1 for a run's pack, one more for each
  amendment; ``amends``: the previous version's ``report_id``, ``version`` and ``manifest_sha256``, or null.
- ``kit``: the installed ``xocdia-hil`` version and ``harness_sha256``, a digest of the installed harness package's
  files (:func:`harness.evidence.digest.tree_digest`).
- ``suite``: the suite version and ``features``: each feature file the run read, ``shipped/PATH`` or
  ``FOLDER/PATH``, with its SHA-256.
- ``bench``: its name, file (as copied into the pack), SHA-256 of the file's bytes, dialect, profile, server kind,
  device transport. ``table_configuration``: field -> value as the scenarios followed it. ``seeds``: the bench's
  root seed and the exploration's (null when not given).
- ``host``, ``started_at``/``ended_at`` (ISO 8601 UTC), ``performer``, ``approver`` (options, else the bench
  file's ``evidence`` section, else null), ``selection`` (``--tags``, ``--features``, workers), ``amendment`` (the
  reason of an amended version).
- ``verdict``: PASS or FAIL with certify's exit status and the counts; ``identification``: the files of the start
  and end identification, whether the system identified itself, whether it changed during the run and the changes.
- ``feed``: the chained feed's file, line count, the report id its genesis is made from, and its head.
- ``files``: every other file of the pack (``/``-separated relative path) -> SHA-256.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.evidence.digest import sha256_bytes

FORMAT = "xocdia-hil evidence pack 1"
MANIFEST_FILE = "manifest.json"


class PackError(InputError):
    """A folder that is not a readable evidence pack, or one a pack may not be written into (the message names the
    folder or file and what is wrong)."""


def encode_manifest(manifest: dict[str, Any]) -> bytes:
    """The bytes of ``manifest.json``: indented JSON, keys in the order given, UTF-8, one final newline."""
    return (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def read_manifest(folder: Path) -> tuple[dict[str, Any], bytes]:
    """The manifest of the pack in ``folder`` and its bytes.

    Raises:
        PackError: no ``manifest.json`` there, unreadable, not JSON, or not an evidence pack's manifest.
    """
    path = folder / MANIFEST_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PackError(f"{folder}: not an evidence pack (no {MANIFEST_FILE})") from None
    except OSError as exc:
        raise PackError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        manifest = json.loads(data)
    except ValueError as exc:
        raise PackError(f"{path}: not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise PackError(f"{path}: not an evidence pack's manifest (format must be {FORMAT!r})")
    return manifest, data


def manifest_digest(data: bytes) -> str:
    """The digest a later version records for a manifest's bytes (``amends.manifest_sha256``)."""
    return sha256_bytes(data)
