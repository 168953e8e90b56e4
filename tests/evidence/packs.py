"""A small evidence pack for the tests, sealed by the pack writer's own :func:`~harness.evidence.pack.seal`,
with a real chained feed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.evidence.chain import FEED_FILE, ChainWriter, genesis
from harness.evidence.manifest import FORMAT
from harness.evidence.pack import seal
from harness.evidence.signing import load_private_key
from harness.feed import FeedKind, encode_line


def make_pack(folder: Path, key: Path | None, report_id: str = "r-1", amends: dict[str, Any] | None = None) -> Path:
    """A pack in ``folder``: three feed events chained, a verdicts file, a trace, a start and end identification;
    sealed (every file listed) and, given ``key``, signed."""
    folder.mkdir(parents=True)
    chain = ChainWriter(folder / FEED_FILE, genesis(report_id))
    for n, what in enumerate(("scenario A", "step one", "step two")):
        chain.append(encode_line(n, float(n), FeedKind.NOTE, {"who": "scenario", "what": what}))
    chain.close()
    (folder / "results").mkdir()
    (folder / "results" / "trace.txt").write_text("bowl tx OPEN\nserver rx OK\n", encoding="utf-8")
    (folder / "identification").mkdir()
    ident = {"identified": True, "name": "xocdia-server", "version": "0.1.0", "components": []}
    for name in ("start", "end"):
        (folder / "identification" / f"{name}.json").write_text(json.dumps(ident), encoding="utf-8")
    verdicts = {
        "verdict": "PASS",
        "exit_status": 0,
        "scenarios": {"s.py::test_a": {"scenario": "A", "outcome": "passed", "clauses": {"SH-3": "checked"}}},
        "clauses": {"SH-3": {"result": "PASS"}},
    }
    (folder / "verdicts.json").write_text(json.dumps(verdicts), encoding="utf-8")
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "report_id": report_id,
        "version": 1 if amends is None else int(amends["version"]) + 1,
        "amends": amends,
        "verdict": {"result": "PASS", "exit_status": 0, "scenarios": {"passed": 1}, "clauses": {"PASS": 1}},
        "identification": {"start": "identification/start.json", "end": "identification/end.json", "changed": False},
        "feed": {
            "file": FEED_FILE,
            "lines": chain.count,
            "origin": report_id,
            "genesis": chain.genesis,
            "head": chain.head,
        },
        "files": {},
    }
    seal(folder, manifest, load_private_key(key) if key is not None else None)
    return folder
