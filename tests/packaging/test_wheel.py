"""The wheel is the product: built from this tree, installed in a fresh venv outside the clone, it scaffolds a lab
and certifies the in-process bench on every clause, with the shipped features, benches and rules found inside the
installed package, not in the clone.

The venv reuses this environment's installed dependencies (a ``.pth`` to a folder of links to them, without this
project's own distribution), so the test needs no network and installs only the wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from harness.cert.report.clauses import rule_clauses

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("harness", "simulator", "gameserver", "fixtures", "features", "pyproject.toml", "setup.py", "README.md")
OWN = ("xocdia_hil", "__editable__", "harness", "simulator", "gameserver", "_xocdia", "xocdia_hil_")

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XOCDIA_FEATURES", "VIRTUAL_ENV")}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (outside the clone) with the wheel built from this tree installed in it; returns its bin/."""
    for module in ("setuptools", "wheel"):
        pytest.importorskip(module, reason="building the wheel offline needs setuptools and wheel (the test extra)")
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        path = REPO / name
        (shutil.copytree(path, src / name, ignore=ignore) if path.is_dir() else shutil.copyfile(path, src / name))
    pip = [sys.executable, "-m", "pip"]
    _run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(root / "dist"), str(src)],
        root,
    )
    (wheel,) = (root / "dist").glob("xocdia_hil-*.whl")
    env = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(env)], root)
    deps = root / "deps"  # this environment's packages, less this project (so pip installs the wheel for real)
    deps.mkdir()
    purelib = Path(sysconfig.get_paths()["purelib"])
    for entry in purelib.iterdir():
        if not entry.name.startswith(OWN) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    site = Path(sysconfig.get_paths(vars={"base": str(env), "platbase": str(env)})["purelib"])
    (site / "_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    python = env / "bin" / "python"
    _run([*pip, "--python", str(python), "install", "-q", "--no-index", f"{wheel}[certify]"], root)
    return env / "bin"


def test_the_wheel_ships_the_data_and_finds_it_inside_the_package(venv: Path, tmp_path: Path) -> None:
    code = (
        "import json, harness, harness.files as f, harness.cert.report.clauses as c;"
        "print(json.dumps([harness.__file__, str(f.FIXTURES), str(f.FEATURES), f.available_profiles(),"
        " len(c.rule_clauses()), sorted(p.name for p in f.FEATURES.rglob('*.feature'))]))"
    )
    done = _run([str(venv / "python"), "-c", code], tmp_path)
    module, fixtures, features, profiles, clauses, feature_files = json.loads(done.stdout)
    site = str(venv.parent)
    assert module.startswith(site) and fixtures.startswith(site) and features.startswith(site)
    assert "certification" in profiles and clauses == len(rule_clauses()) and "payouts.feature" in feature_files
    for rel in ("benches/in-process.yaml", "faults/chaos.yaml", "rules/RULES.md", "protocol/golden.jsonl", "lab"):
        assert (Path(fixtures) / rel).exists(), rel


def test_init_then_certify_and_simulate_from_the_installed_wheel(venv: Path, tmp_path: Path) -> None:
    xocdia = str(venv / "xocdia-hil")
    _run([xocdia, "init", "lab"], tmp_path)
    lab = tmp_path / "lab"
    done = _run([xocdia, "certify", "--bench", "in-process"], lab)
    every = len(rule_clauses())  # the clauses of this tree's RULES.md, which the wheel ships
    assert f"clause coverage: {every}/{every} clauses of RULES.md" in done.stdout, done.stdout[-2000:]
    matrix = json.loads((lab / "allure-report" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert matrix["failed"] == 0 and matrix["uncovered"] == []
    summary = json.loads(_run([xocdia, "simulate", "--rounds", "1000", "--seed", "7", "--json"], lab).stdout)
    assert summary["rounds"] == 1000
