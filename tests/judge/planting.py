"""Planting a defect: a copy of ``gameserver/`` with one patch of ``tests/judge/plants/`` applied, and a folder
holding the shipped feature files a run needs, for a ``certify`` run from that copy (``cwd`` and ``PYTHONPATH``:
Python puts the working directory first on ``sys.path``, ahead of the installed server)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLANTS = Path(__file__).resolve().parent / "plants"
FEATURES = REPO / "features"


def planted(tmp_path: Path, patch: str | None, *features: str) -> tuple[Path, Path]:
    """(the root of the copy, the folder with the feature files named) under ``tmp_path``; ``patch`` None leaves the
    server as shipped. Raises CalledProcessError when the patch does not apply."""
    root = tmp_path / "root"
    shutil.copytree(REPO / "gameserver", root / "gameserver")
    if patch is not None:
        subprocess.run(["git", "apply", str(PLANTS / f"{patch}.patch")], cwd=root, check=True)
    folder = tmp_path / "features"
    folder.mkdir()
    for name in features:
        shutil.copy(FEATURES / name, folder / name)
    return root, folder
