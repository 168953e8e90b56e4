"""Binds every feature file in ``features/`` (set ``XOCDIA_FEATURES`` to bind another folder). Which bench the
certification scenarios run on is the plugin's ``--bench`` option (default: in-process)."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_bdd import scenarios

FEATURES = Path(os.environ.get("XOCDIA_FEATURES") or Path(__file__).resolve().parents[2] / "features")

scenarios(str(FEATURES))
