"""The certification suite as one pytest module: binds every ``.feature`` file under the folders of
``XOCDIA_FEATURES`` (separated by ``os.pathsep``; default: the shipped suite, :data:`harness.files.FEATURES`).
``xocdia-hil certify`` runs pytest on this file, so a lab's new feature files need no Python of their own."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_bdd import scenarios

from harness.files import FEATURES as SHIPPED

FOLDERS = [Path(f) for f in (os.environ.get("XOCDIA_FEATURES") or str(SHIPPED)).split(os.pathsep) if f]

scenarios(*(str(folder) for folder in FOLDERS))
