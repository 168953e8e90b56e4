"""A Dask campaign refuses workers that run other code, fails clearly when it has no worker, and sends its seeds
in chunks while giving every seed's outcome."""

from __future__ import annotations

from pathlib import Path

import pytest
from distributed import LocalCluster

from harness.faults.campaign import CampaignError, DaskExecutor, code_identity, run_campaign

CHAOS = (Path(__file__).resolve().parents[2] / "fixtures" / "faults" / "chaos.yaml").read_text()


def _cluster(workers: int) -> LocalCluster:
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=False, dashboard_address=None)


def test_workers_with_other_code_are_refused_before_any_seed_runs() -> None:
    version, digest = code_identity()
    seen: list[int] = []
    with _cluster(1) as cluster, pytest.raises(CampaignError, match=r"refused: 1 of 1 workers differ"):
        executor = DaskExecutor(cluster, expect=(version, "0" * 64))
        run_campaign(executor, "in-process", CHAOS, [3], lambda o, n: seen.append(n))
    assert seen == []
    assert len(digest) == 64 and code_identity() == (version, digest)


def test_a_cluster_without_workers_fails_after_the_bounded_wait() -> None:
    with _cluster(0) as cluster, pytest.raises(CampaignError, match=r"no worker joined the cluster within 0.5 s"):
        run_campaign(DaskExecutor(cluster, lost_after_s=0.5), "in-process", CHAOS, [3])


def test_seeds_in_chunks_give_each_seeds_outcome() -> None:
    seeds = [3, 5, 8]
    with _cluster(1) as cluster:
        seen: list[int] = []
        summary = run_campaign(DaskExecutor(cluster, chunk=2, in_flight=1), "in-process", CHAOS, seeds,
                               lambda o, n: seen.append(n))  # fmt: skip
    assert seen == [1, 2, 3]
    assert [o.seed for o in summary.outcomes] == seeds


def test_a_campaign_whose_every_worker_is_lost_fails_after_the_bounded_wait() -> None:
    with _cluster(1) as cluster:

        def lose_the_workers(_outcome: object, done: int) -> None:
            if done == 1:
                cluster.scale(0)

        executor = DaskExecutor(cluster, chunk=1, in_flight=1, lost_after_s=1.0)
        with pytest.raises(CampaignError, match=r"every worker lost for 1 s with 1 chunks of seeds unfinished"):
            run_campaign(executor, "in-process", CHAOS, [3, 5, 8], lose_the_workers)
