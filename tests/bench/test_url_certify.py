"""certify on a bench attached by URL to a reference server it did not start, with no accounts funded by hand:
each scenario's players are created through the supervisor (``POST /v1/supervisor/players``), each scenario reads
only its own rounds, scenarios the bench cannot run (unplugging a line it does not own, killing a server it did not
start) are reported as not applicable with their reason and the run exits 0; two or more workers are refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import tests.faults.test_url_bench as url_bench
from harness.files import FEATURES
from tests.faults.test_url_bench import Staging, staging  # noqa: F401  (the fixture)


@pytest.fixture(autouse=True)
def roomy_timing(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The staging server and bench with a longer betting period: scenarios run in real time on a shared machine."""
    raw = yaml.safe_load(url_bench.TEMPLATE.read_text(encoding="utf-8"))
    raw["timing"] |= {"betting_s": 2.5, "step_timeout_s": 30.0}
    path = tmp_path_factory.mktemp("template") / "url-staging.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    monkeypatch.setattr(url_bench, "TEMPLATE", path)


def _lab_bench(stage: Staging, tmp_path: Path) -> Path:
    """The staging bench without hand-funded players: the adapter creates them per scenario."""
    raw = yaml.safe_load(stage.bench_file.read_text(encoding="utf-8"))
    del raw["server"]["options"]["players"]
    path = tmp_path / "lab-bench.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def _certify(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", "certify", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def test_a_url_bench_passes_with_the_scenarios_it_cannot_run_listed(staging: Staging, tmp_path: Path) -> None:  # noqa: F811
    features = tmp_path / "features"
    (features / "faults").mkdir(parents=True)
    for name in ("gameplay.feature", "network.feature", "faults/restarts.feature"):
        shutil.copyfile(FEATURES / name, features / name)
    bench = _lab_bench(staging, tmp_path)
    done = _certify("--bench", str(bench), "--features", str(features), "--report", "r", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    matrix = json.loads((tmp_path / "r" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert (matrix["passed"], matrix["failed"]) == (2, 0), done.stdout[-3000:]
    reasons = {r["scenario"]: r["reason"] for r in matrix["not_applicable"]}
    assert len(reasons) == 6  # the unplugged table network, and the server killed in each of five phases
    assert any("cannot be unplugged" in r for r in reasons.values())
    assert sum("cannot kill and restart it" in r for r in reasons.values()) == 5
    assert "not applicable on this bench: 6 scenarios (reasons in the clause matrix)" in done.stdout
    assert "clauses not exercised on this bench: ERR-3, DC-3" in done.stdout or "ERR-3" in matrix["unexercised"]
    text = (tmp_path / "r" / "clause-matrix.md").read_text(encoding="utf-8")
    assert "Scenarios not applicable to this bench:" in text


def test_two_workers_on_a_url_bench_are_refused_in_one_line(staging: Staging, tmp_path: Path) -> None:  # noqa: F811
    done = _certify("--bench", str(_lab_bench(staging, tmp_path)), "--workers", "2", cwd=tmp_path)
    assert (done.returncode, done.stderr.count("\n")) == (2, 1)
    assert "--workers 2: bench url-staging is attached by URL" in done.stderr and "use --workers 0 or 1" in done.stderr


def test_provisioned_players_get_fresh_wallets_and_the_server_refuses_a_reused_token(staging: Staging) -> None:  # noqa: F811
    body = {"players": [{"id": "lab-alice-1", "token": "lab-alice-token-0001", "balance": 1234}]}
    status, data = staging.server.call("POST", "/v1/supervisor/players", staging.boss, body)
    assert (status, data) == (200, {"ok": True, "players": ["lab-alice-1"]})
    status, data = staging.server.call("GET", "/v1/players/lab-alice-1/balance", "lab-alice-token-0001")
    assert (status, data["balance"]) == (200, 1234)
    status, data = staging.server.call("POST", "/v1/supervisor/players", staging.boss, body)
    assert (status, data["error"]["code"]) == (409, "token_exists")
    body["players"][0]["token"] = "another-token-00002"
    status, data = staging.server.call("POST", "/v1/supervisor/players", staging.boss, body)
    assert (status, data["error"]["code"]) == (409, "wallet_exists")
    status, data = staging.server.call("POST", "/v1/supervisor/players", "another-token-00002", body)
    assert status in (401, 403)
