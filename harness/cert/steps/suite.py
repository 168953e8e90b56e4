"""The certification suite as one pytest module: binds every ``.feature`` file under ``XOCDIA_FEATURES``
(default: the shipped suite, :data:`harness.files.FEATURES`). ``xocdia-hil certify`` runs pytest on this file, so a
lab's new feature files need no Python of their own."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_bdd import scenarios

from harness.files import FEATURES as SHIPPED

FEATURES = Path(os.environ.get("XOCDIA_FEATURES") or SHIPPED)

scenarios(str(FEATURES))
