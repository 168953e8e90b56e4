"""Binds features/rtp.feature and features/fairness.feature (steps in harness.steps.stats)."""

from __future__ import annotations

from pathlib import Path

from pytest_bdd import scenarios

FEATURES = Path(__file__).resolve().parents[2] / "features"

scenarios(str(FEATURES / "rtp.feature"), str(FEATURES / "fairness.feature"))
