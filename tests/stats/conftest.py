"""Fixtures for the statistics tests: real CSV files written into pytest's tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.stats.readers import BET_COLUMNS, OUTCOME_COLUMNS
from tests.stats.stats_helpers import WriteRows, csv_writer


@pytest.fixture
def write_outcomes(tmp_path: Path) -> WriteRows:
    """Write an OUTCOMES.csv (header + rows) and return its path."""
    return csv_writer(tmp_path, OUTCOME_COLUMNS)


@pytest.fixture
def write_bets(tmp_path: Path) -> WriteRows:
    """Write a BETS.csv (header + rows) and return its path."""
    return csv_writer(tmp_path, BET_COLUMNS)
