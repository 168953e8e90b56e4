"""Fixtures for the simulator tests: fresh profile documents built from the shipped YAML files."""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulator.sim_helpers import quiet_data, shipped


@pytest.fixture
def standard_data() -> dict[str, Any]:
    """A fresh, mutable copy of ``fixtures/profiles/standard.yaml``."""
    return shipped("standard")


@pytest.fixture
def quiet() -> dict[str, Any]:
    """The standard profile with every incident rate 0 and fixed timings (see ``sim_helpers.FIXED_TIMING``)."""
    return quiet_data()
