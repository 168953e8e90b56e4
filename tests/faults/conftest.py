"""Fixtures for the fault-injection tests: the shipped in-process bench and small schedules built from dicts."""

from __future__ import annotations

from typing import Any

import pytest

from harness.bench.config import Bench, load_bench
from harness.faults.schedule import parse_schedule
from harness.faults.schedule_model import Schedule
from tests.faults.faults_helpers import Make


@pytest.fixture
def bench() -> Bench:
    return load_bench("in-process")


@pytest.fixture
def make_schedule() -> Make:
    """``make_schedule(fault, ..., rounds=2, seed=5)``: a schedule of 2 players placing 2 bets per round."""

    def make(*faults: dict[str, Any], **top: Any) -> Schedule:
        data: dict[str, Any] = {"seed": 5, "rounds": 2, "players": 2, "bets_per_round": 2, "stakes": [100, 200]}
        data.update(top)
        data["faults"] = list(faults)
        return parse_schedule(data, "test.yaml")

    return make
