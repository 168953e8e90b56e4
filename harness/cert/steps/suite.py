"""The certification suite as one pytest module: binds every ``.feature`` file under ``XOCDIA_FEATURES``
(default: the repository's ``features/``). ``xocdia-hil certify`` runs pytest on this file, so a lab's new
feature files need no Python of their own."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_bdd import scenarios

FEATURES = Path(os.environ.get("XOCDIA_FEATURES") or Path(__file__).resolve().parents[3] / "features")

scenarios(str(FEATURES))
