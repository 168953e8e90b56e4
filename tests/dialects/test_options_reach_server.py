"""A bench file's ``devices.options`` reach the reference server the local HIL bench starts: the options that govern a
line's server end (``Dialect.server_keys``) are in the config it writes, and the real ``xocdia-server`` reports them
in force for each line in ``/health``."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.config import load_bench
from harness.bench.rig import Rig

BENCHES = Path(__file__).resolve().parents[2] / "fixtures" / "benches"


def _bench(tmp_path: Path, dialect: str, options: str) -> Path:
    text = (BENCHES / "local-hil.yaml").read_text(encoding="utf-8")
    line = "  transport: pty\n"
    assert line in text
    path = tmp_path / f"local-hil-{dialect}.yaml"
    path.write_text(text.replace(line, f"{line}  dialect: {dialect}\n  options: {options}\n"), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("dialect", "options", "line", "in_force"),
    [
        (
            "xocdia-bus",
            "{poll_interval_s: 0.02, retries: 1}",
            "bus",
            {"poll_interval_s": 0.02, "response_timeout_s": 0.02, "retries": 1},
        ),
        ("xocdia-jsonl", "{min_confidence: 0.75}", "reader", {"min_confidence": 0.75}),
    ],
)
def test_local_hil_server_runs_its_lines_with_the_bench_s_options(
    tmp_path: Path, dialect: str, options: str, line: str, in_force: dict[str, Any]
) -> None:
    bench = load_bench(_bench(tmp_path, dialect, options))
    with Rig.build(bench, {"alice": 10_000}) as rig:
        assert isinstance(rig.adapter, HttpAdapter)
        host, port = rig.adapter.address
        with urllib.request.urlopen(f"http://{host}:{port}/health", timeout=10) as reply:
            health = json.load(reply)
    assert health["devices"][line]["dialect"] == dialect
    assert health["devices"][line]["options"] == in_force
