"""The ``xocdia`` pytest entry point loads the plugin (bench fixtures, steps, the judge) only into the runs that ask
for it: a lab's other test suites in the same environment pay nothing for it. Real pytest processes, in a folder
outside this checkout (so this repository's ``xocdia = true`` does not apply)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """\
import sys


def test_probe():
    print("PLUGIN", "harness.cert.plugin" in sys.modules, "harness.bench.rig" in sys.modules)
"""
#: Plugins of this development environment that the probe does not need (they only cost start-up time).
QUIET = ("-p", "no:cacheprovider", "-p", "no:schemathesis", "-p", "no:hypothesispytest", "-p", "no:anyio")


def _probe(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run the probe test with ``args``; returns what it printed (``PLUGIN LOADED RIG-IMPORTED``)."""
    base = {k: v for k, v in os.environ.items() if k not in ("XOCDIA_PLUGIN", "XOCDIA_FEATURES", "PYTEST_ADDOPTS")}
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", *QUIET, *args, "test_probe.py"]
    done = subprocess.run(
        cmd, cwd=folder, env={**base, **(env or {})}, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return next(line for line in done.stdout.splitlines() if line.startswith("PLUGIN") or "PLUGIN" in line)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    return tmp_path


def test_a_plain_run_does_not_load_the_plugin(folder: Path) -> None:
    assert _probe(folder).endswith("PLUGIN False False")


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--bench", "in-process"], None),
        (["--explore-seed=3"], None),
        ([], {"PYTEST_ADDOPTS": "--scenario-timeout 60"}),
        ([], {"XOCDIA_PLUGIN": "1"}),
        (["-p", "harness.pytest_plugin"], None),
        (["-p", "harness.cert.plugin"], None),
    ],
)
def test_an_option_the_environment_or_naming_the_plugin_loads_it(
    folder: Path, args: list[str], env: dict[str, str] | None
) -> None:
    assert _probe(folder, *args, env=env).endswith("PLUGIN True True")


def test_the_ini_file_can_ask_for_it(folder: Path) -> None:
    (folder / "pytest.ini").write_text("[pytest]\nxocdia = true\n", encoding="utf-8")
    assert _probe(folder).endswith("PLUGIN True True")


def test_no_xocdia_leaves_it_out_even_with_the_ini_key(folder: Path) -> None:
    (folder / "pytest.ini").write_text("[pytest]\nxocdia = true\n", encoding="utf-8")
    assert _probe(folder, "-p", "no:xocdia", "-W", "ignore::pytest.PytestConfigWarning").endswith("PLUGIN False False")
