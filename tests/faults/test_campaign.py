"""The executor interface: a Dask LocalCluster gives the same verdicts and history hashes as this process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from distributed import LocalCluster

from harness.cli import main
from harness.faults.campaign import DaskExecutor, LocalExecutor, parse_seeds, run_campaign
from tests.faults.marker_dialect import MARKS, MarkerDialect

CHAOS = (Path(__file__).resolve().parents[2] / "fixtures" / "faults" / "chaos.yaml").read_text()


def test_dask_local_cluster_matches_a_serial_run() -> None:
    seeds = [3, 5, 8]
    serial = run_campaign(LocalExecutor(1), "in-process", CHAOS, seeds)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        seen: list[int] = []
        dask = run_campaign(DaskExecutor(cluster), "in-process", CHAOS, seeds, lambda o, n: seen.append(n))
    assert seen == [1, 2, 3]
    assert [o.seed for o in dask.outcomes] == seeds
    assert [o.history_hash for o in dask.outcomes] == [o.history_hash for o in serial.outcomes]
    assert all(o.passed for o in dask.outcomes) and dask.rounds == 36


def test_parse_seeds() -> None:
    assert parse_seeds("1-3,7,9-10") == [1, 2, 3, 7, 9, 10]
    assert parse_seeds("0") == [0]


def test_the_seeds_run_with_the_campaigns_dialect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marks = tmp_path / "marks"
    monkeypatch.setenv(MARKS, str(marks))
    summary = run_campaign(
        LocalExecutor(2), "in-process", CHAOS, [3, 5], dialect=f"{MarkerDialect.__module__}:MarkerDialect"
    )
    assert all(o.passed for o in summary.outcomes)
    pids = set(marks.read_text().split())
    assert pids - {str(os.getpid())}, "no worker process built the campaign's dialect"


def test_campaign_refuses_an_unknown_dialect_before_any_seed_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["campaign", "--bench", "in-process", "--schedule", "chaos", "--seeds", "1-3", "--dialect", "no-such"])
    assert code == 2
    assert "no-such" in capsys.readouterr().err
