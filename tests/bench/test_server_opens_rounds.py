"""Server-opened rounds (``server.opens_rounds: server``): the server opens rounds on its own timer and the rig
follows what it opens, numbering rounds 1, 2, ... from the first that opens after the scenario starts. The suite
passes so in-process (the reference engine with ``auto_open``), and on a bench attached by URL to a separately
started ``xocdia-server`` that opens rounds itself with its own timings, with no player funded by hand."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.bench.config import BenchError, load_bench
from harness.files import FEATURES, FIXTURES
from harness.wire.messages import DEVICES
from tests.faults.test_url_bench import Cables
from tests.support.gs_process import ServerProcess

SUBSET = ("gameplay.feature", "betting.feature", "network.feature", "faults/restarts.feature")
BOSS = "vendor-supervisor-token"


def _certify(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", "certify", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def _features(tmp_path: Path) -> Path:
    folder = tmp_path / "features"
    (folder / "faults").mkdir(parents=True)
    for name in SUBSET:
        shutil.copyfile(FEATURES / name, folder / name)
    return folder


def test_the_field_takes_harness_or_server_only(tmp_path: Path) -> None:
    raw = yaml.safe_load((FIXTURES / "benches" / "in-process.yaml").read_text(encoding="utf-8"))
    assert load_bench("in-process").server.opens_rounds == "harness"
    raw["server"]["opens_rounds"] = "dealer"
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(
        BenchError, match=r"^b.yaml: server.opens_rounds: must be one of harness, server; got 'dealer'$"
    ):
        load_bench(str(path))


def test_in_process_with_server_opened_rounds(tmp_path: Path) -> None:
    raw = yaml.safe_load((FIXTURES / "benches" / "in-process.yaml").read_text(encoding="utf-8"))
    raw["server"]["opens_rounds"] = "server"
    bench = tmp_path / "auto.yaml"
    bench.write_text(yaml.safe_dump(raw), encoding="utf-8")
    done = _certify("--bench", str(bench), "--features", str(_features(tmp_path)), "--report", "r", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:]
    matrix = json.loads((tmp_path / "r" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert matrix["failed"] == 0 and matrix["passed"] == 13 and matrix["not_applicable"] == []


@pytest.fixture
def vendor(tmp_path: Path) -> Iterator[Path]:
    """A reference server started apart, opening rounds on its own timer with its own timings, that knows only its
    supervisor; and the lab's bench file attached to it by URL (players created per scenario)."""
    config = {
        "engine": {
            "betting_s": 2.5,
            "round_gap_s": 0.5,
            "auto_open": True,
            "result_timeout_s": 5.0,
            "pause_timeout_s": 2.0,
        },
        "players": [],
        "supervisors": [{"id": "vendor-boss", "token": BOSS}],
        "heartbeat_timeout_s": 3.0,
    }
    (tmp_path / "vendor.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    cables = Cables(tuple(d.value.lower() for d in DEVICES))
    args = ["--config", str(tmp_path / "vendor.yaml")]
    for name, path in cables.server_paths.items():
        args += ["--device", f"{name}={path}"]
    server = ServerProcess(tmp_path / "vendor.db", args)
    try:
        server.start()
        bench = {
            "name": "vendor-staging",
            "server": {
                "kind": "url",
                "url": f"http://{server.host}:{server.port}",
                "opens_rounds": "server",
                "options": {"supervisor_token": BOSS},
            },
            "devices": {"transport": "url", "urls": dict(cables.bench_paths), "reader_latency_s": 0.1},
            "profile": "certification",
            "seed": 7,
            "players": 0,
            "timing": {"betting_s": 2.5, "round_gap_s": 0.5, "result_timeout_s": 5.0, "step_timeout_s": 30.0},
            "faults_allowed": False,
        }
        path = tmp_path / "vendor-bench.yaml"
        path.write_text(yaml.safe_dump(bench), encoding="utf-8")
        yield path
    finally:
        server.stop()
        cables.close()


def test_a_vendor_server_that_opens_its_own_rounds(vendor: Path, tmp_path: Path) -> None:
    done = _certify("--bench", str(vendor), "--features", str(_features(tmp_path)), "--report", "r", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]
    matrix = json.loads((tmp_path / "r" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert (matrix["passed"], matrix["failed"], len(matrix["not_applicable"])) == (7, 0, 6), done.stdout[-3000:]
    assert all("faults_allowed: false" in r["reason"] or "not marked" in r["reason"] for r in matrix["not_applicable"])
