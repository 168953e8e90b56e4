"""A signing key pair for the evidence tests (``cryptography``, the evidence extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.evidence.signing import keygen


@pytest.fixture(scope="session")
def key_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A private key file and its ``.pub``, written by ``keygen``."""
    path = tmp_path_factory.mktemp("keys") / "lab.key"
    public, _kid = keygen(path)
    return path, public
