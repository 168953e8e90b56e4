"""Comparing two evidence packs (``xocdia-hil evidence diff PACK_A PACK_B``): what changed in the system's
identification and in the verdicts between two runs ("is this a major change?").

The identifications compared are each pack's at its start (what was tested), through
:func:`harness.evidence.identity.identity_changes`; the verdicts are each scenario's outcome (by node id) and each
clause's result, with the scenarios and clauses only one pack has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.evidence.identity import Identification, identity_changes
from harness.evidence.manifest import PackError, read_manifest
from harness.evidence.verdicts import VERDICTS_FILE


def _read_json(folder: Path, name: str) -> Any:
    try:
        return json.loads((folder / name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PackError(f"{folder / name}: cannot be read ({exc.strerror})") from None
    except ValueError as exc:
        raise PackError(f"{folder / name}: not JSON ({exc})") from None


def pack_diff(a: Path, b: Path) -> tuple[list[str], list[str]]:
    """The identification changes and the verdict changes from pack ``a`` to pack ``b``, one line each.

    Raises:
        PackError: either is not a readable pack.
    """
    ma, _ = read_manifest(a)
    mb, _ = read_manifest(b)
    ia = Identification.from_json(_read_json(a, ma["identification"]["start"]))
    ib = Identification.from_json(_read_json(b, mb["identification"]["start"]))
    identity = identity_changes(ia, ib)
    va, vb = _read_json(a, VERDICTS_FILE), _read_json(b, VERDICTS_FILE)
    verdict: list[str] = []
    if va.get("verdict") != vb.get("verdict"):
        verdict.append(f"verdict: {va.get('verdict')} -> {vb.get('verdict')}")
    sa, sb = va.get("scenarios", {}), vb.get("scenarios", {})
    for nodeid in sorted(set(sa) | set(sb)):
        left, right = sa.get(nodeid), sb.get(nodeid)
        title = (left or right or {}).get("scenario", nodeid)
        if left is None:
            verdict.append(f"scenario {title}: only in B ({right['outcome']})")
        elif right is None:
            verdict.append(f"scenario {title}: only in A ({left['outcome']})")
        elif left.get("outcome") != right.get("outcome"):
            verdict.append(f"scenario {title}: {left.get('outcome')} -> {right.get('outcome')}")
    ca, cb = va.get("clauses", {}), vb.get("clauses", {})
    for clause in sorted(set(ca) | set(cb)):
        left_r = (ca.get(clause) or {}).get("result", "absent")
        right_r = (cb.get(clause) or {}).get("result", "absent")
        if left_r != right_r:
            verdict.append(f"clause {clause}: {left_r} -> {right_r}")
    return identity, verdict
