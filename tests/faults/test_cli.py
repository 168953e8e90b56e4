"""``xocdia-hil inject`` and ``campaign``: verdicts, exit codes, manifests and replay, field-named errors, the
local process pool and a Dask cluster reached by its tcp:// address."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from distributed import LocalCluster

from harness.cli import main

CHAOS = str(Path(__file__).resolve().parents[2] / "fixtures" / "faults" / "chaos.yaml")


def test_inject_prints_verdicts_and_a_manifest_that_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "m.json"
    assert (
        main(["inject", "--bench", "in-process", "--schedule", CHAOS, "--seed", "4", "--manifest", str(manifest)]) == 0
    )
    out = capsys.readouterr().out
    assert "verdict: PASS" in out and "  lost            ok" in out
    digest = out.split("history hash: ")[1].split()[0]
    data = json.loads(manifest.read_text())
    assert data["seed"] == 4 and data["history_hash"] == digest and data["bench"] == "in-process"
    assert len(data["git_revision"]) >= 40 and data["packages"]["simpy"] != "not installed"
    assert len(data["schedule"]["sha256"]) == 64 and "random:" in data["schedule"]["yaml"]
    assert main(["inject", "--replay", str(manifest), "--manifest", str(tmp_path / "again.json")]) == 0
    out = capsys.readouterr().out
    assert f"history hash: {digest}" in out and "replay: history hash matches" in out


def test_a_violation_exits_1_and_is_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "phantom.yaml"
    bench.write_text(
        "server: {kind: in-process, adapter: 'tests.faults.faults_doubles:PhantomAdapter'}\n"
        "devices: {transport: memory}\ntiming: {betting_s: 1.0}\nfaults_allowed: true\n"
    )
    code = main(["inject", "--bench", str(bench), "--schedule", CHAOS, "--seed", "2",
                 "--manifest", str(tmp_path / "m.json")])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "  unexpected      FAIL (1)" in out and "was never attempted" in out and "verdict: FAIL" in out


def test_bad_schedule_field_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rounds: 3\nfaults:\n  - {kind: server_kill, at: {round: 1, phase: lunch}}\n")
    assert main(["inject", "--bench", "in-process", "--schedule", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("xocdia-hil: error: bad.yaml: faults[0].at.phase: must be one of betting_open")


def test_production_bench_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inject", "--bench", "staging.example", "--schedule", CHAOS]) == 2
    assert "refused: bench 'staging-example'" in capsys.readouterr().err
    assert main(["campaign", "--bench", "staging.example", "--schedule", CHAOS, "--seeds", "1-2"]) == 2


def test_bad_seeds_and_manifest_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["campaign", "--bench", "in-process", "--schedule", CHAOS, "--seeds", "5-2"]) == 2
    assert "--seeds: '5-2' must be N-M" in capsys.readouterr().err
    (tmp_path / "m.json").write_text("{}")
    assert main(["inject", "--replay", str(tmp_path / "m.json")]) == 2
    assert "not a run manifest" in capsys.readouterr().err


def test_manifest_paths_under_a_file_are_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    manifest = blocker / "m.json"
    assert main(["inject", "--bench", "in-process", "--schedule", CHAOS, "--manifest", str(manifest)]) == 2
    assert capsys.readouterr() == ("", f"xocdia-hil: error: --manifest {manifest}: {blocker} is not a directory\n")
    out = blocker / "failures"
    assert main(["campaign", "--bench", "in-process", "--schedule", CHAOS, "--seeds", "1", "--out", str(out)]) == 2
    assert capsys.readouterr() == ("", f"xocdia-hil: error: --out {out}: {blocker} is not a directory\n")
    found = blocker / "minimal.yaml"
    assert main(["inject", "--bench", "in-process", "--schedule", CHAOS, "--explore", str(found)]) == 2
    assert capsys.readouterr() == ("", f"xocdia-hil: error: --explore {found}: {blocker} is not a directory\n")


def test_campaign_on_a_local_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["campaign", "--bench", "in-process", "--schedule", CHAOS, "--seeds", "1-4", "--out", str(tmp_path)]
    assert main([*args, "--workers", "2"]) == 0
    assert "campaign: 4 seeds, 4 passed, 0 failed" in capsys.readouterr().out


def test_campaign_on_a_dask_cluster_by_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    )
    with cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        args = ["campaign", "--bench", "in-process", "--schedule", CHAOS, "--seeds", "1-3", "--out", str(tmp_path)]
        assert main([*args, "--scheduler", address]) == 0
    assert "campaign: 3 seeds, 3 passed, 0 failed" in capsys.readouterr().out


def test_explore_writes_the_minimal_failing_schedule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "amnesiac.yaml"
    bench.write_text(
        "server: {kind: in-process, adapter: 'tests.faults.faults_doubles:AmnesiacAdapter'}\n"
        "devices: {transport: memory}\ntiming: {betting_s: 1.0}\nfaults_allowed: true\n"
    )
    schedule = tmp_path / "s.yaml"
    schedule.write_text(
        "rounds: 2\nplayers: 2\nbets_per_round: 2\n"
        "faults: [{kind: server_kill, at: {round: 2}}, {kind: table_touch, at: {round: 1}}]\n"
    )
    out = tmp_path / "minimal.yaml"
    code = main(["inject", "--bench", str(bench), "--schedule", str(schedule), "--explore", str(out),
                 "--examples", "12"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 1, printed
    assert "minimal failing schedule (1 faults)" in printed and "fault server_kill(server)" in printed
    assert "kind: server_kill" in out.read_text()
