"""The certification suite as one pytest module: binds every ``.feature`` file under the folders of
``XOCDIA_FEATURES`` (separated by ``os.pathsep``; default: the shipped suite, :data:`harness.files.FEATURES`).
``xocdia-hil certify`` runs pytest on this file, so a lab's new feature files need no Python of their own.

The files are linted first (:mod:`harness.cert.gherkin_lint`): a mistyped keyword, a step outside a scenario, a
scenario with no ``Then`` or no clause tag stops the collection with every problem's file and line, before any
scenario runs (``certify`` lints them itself, and exits 2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pytest_bdd import scenarios

from harness.cert.gherkin_lint import lint_folders
from harness.cert.report.clauses import rule_clauses
from harness.files import FEATURES as SHIPPED

FOLDERS = [Path(f) for f in (os.environ.get("XOCDIA_FEATURES") or str(SHIPPED)).split(os.pathsep) if f]

_REFUSED = lint_folders(FOLDERS, rule_clauses())
if _REFUSED:
    raise pytest.UsageError("feature files refused:\n" + "\n".join(f"  {error}" for error in _REFUSED))

scenarios(*(str(folder) for folder in FOLDERS))
