"""The wheel is the product: built once from this tree, installed by pip into fresh venvs outside the clone (no
system or development site-packages; the dependencies come from the configured package index), it works as a lab
uses it. With ``[certify]``: every command's ``--help``, ``init`` then ``certify --bench in-process`` on every
clause with its HTML report, the shipped data by name, the shipped docs, the examples listed and copied out, the
step catalogue printed without writing into the package, and the pytest plugin only in the runs that ask for it.
With the base install alone: every command's ``--help``, the commands that need no extra, and the one-line ``pip
install`` message from those that do.
The CI templates' install steps run as written, with the wheel as their install source.

The wheel and the two venvs are made once per test session, shared by xdist workers (:func:`_once`).
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from harness.cert.report.clauses import rule_clauses
from harness.cli import SUBCOMMANDS, _command

REPO = Path(__file__).resolve().parents[2]
SOURCES = (
    "harness",
    "simulator",
    "gameserver",
    "fixtures",
    "features",
    "docs",
    "examples",
    "pyproject.toml",
    "setup.py",
    "README.md",
)
#: Every command line whose ``--help`` must exit 0: the top level, each subcommand, the nested ones.
HELP = [
    [],
    *([_command(m)] for m in SUBCOMMANDS),
    ["bench", "check"],
    ["dialects", "check"],
    *(["evidence", action] for action in ("keygen", "diff", "junit", "amend")),
]
#: What is left out of the environment of every command run in a venv: this checkout's settings.
UNSET = ("PYTHONPATH", "XOCDIA_FEATURES", "XOCDIA_PLUGIN", "VIRTUAL_ENV", "PYTEST_ADDOPTS")

pytestmark = pytest.mark.slow


def _run(
    cmd: list[str], cwd: Path, timeout: float = 600, expect: int = 0, bin_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` outside this checkout's environment (``bin_dir`` first on PATH); it must exit ``expect``."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    if bin_dir is not None:
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == expect, f"{cmd}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """What ``build(folder)`` makes, made once per test session, also across xdist workers (they share the parent
    of their base temp folders): the first to take the lock builds into a fresh folder, the others wait and reuse
    it. Raises what ``build`` raises (the next caller then builds again)."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder, done = root / f"once-{name}", root / f"once-{name}.done"
    with (root / f"once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return Path(done.read_text(encoding="utf-8"))
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        made = build(folder)
        done.write_text(str(made), encoding="utf-8")
        return made


def _build_wheel(root: Path) -> Path:
    """The wheel built from a copy of this tree into ``root`` (offline, without build isolation: setuptools and
    wheel of the test extra)."""
    src = root / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        path = REPO / name
        (shutil.copytree(path, src / name, ignore=ignore) if path.is_dir() else shutil.copyfile(path, src / name))
    pip = [sys.executable, "-m", "pip"]
    _run([*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(root), str(src)], root)
    (built,) = root.glob("xocdia_hil-*.whl")
    return built


def _venv(wheel: Path, where: Path, extra: str) -> Path:
    """A fresh venv at ``where`` (no system site-packages) with ``wheel`` installed by pip, with ``extra`` (``""``:
    the base install); returns its ``bin/``."""
    _run([sys.executable, "-m", "venv", str(where)], where.parent)
    python = where / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", f"{wheel}{extra}"], where.parent, timeout=900)
    return where / "bin"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this tree, once per session."""
    for module in ("setuptools", "wheel"):
        pytest.importorskip(module, reason="building the wheel offline needs setuptools and wheel (the test extra)")
    return _once(tmp_path_factory, "wheel", _build_wheel)


@pytest.fixture(scope="session")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed with ``[certify]`` alone, once per session; returns the venv's ``bin/``."""
    return _once(tmp_path_factory, "certify", lambda folder: _venv(wheel, folder / "venv", "[certify]"))


@pytest.fixture(scope="session")
def base(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed without any extra, once per session; returns the venv's ``bin/``."""
    return _once(tmp_path_factory, "base", lambda folder: _venv(wheel, folder / "venv", ""))


def _help_of_every_command(bin_dir: Path, cwd: Path) -> None:
    for args in HELP:
        done = _run([str(bin_dir / "xocdia-hil"), *args, "--help"], cwd)
        assert "usage: xocdia-hil" in done.stdout and done.stderr == "", (args, done.stderr[-2000:])
    _run([str(bin_dir / "xocdia-server"), "--help"], cwd)


def test_the_venvs_see_only_what_pip_installed(venv: Path, base: Path, tmp_path: Path) -> None:
    code = "import sys, json; print(json.dumps([sys.prefix != sys.base_prefix, sys.path]))"
    for bin_dir in (venv, base):
        isolated, path = json.loads(_run([str(bin_dir / "python"), "-c", code], tmp_path).stdout)
        site = [p for p in path if "site-packages" in p]
        assert isolated and site and all(p.startswith(str(bin_dir.parent)) for p in site), path
    missing = "import importlib.util as u; print([m for m in ('pytest', 'pytest_bdd', 'hypothesis') if u.find_spec(m)])"
    assert _run([str(base / "python"), "-c", missing], tmp_path).stdout.strip() == "[]"


def test_the_wheel_ships_the_data_and_the_docs_and_finds_them_inside_the_package(venv: Path, tmp_path: Path) -> None:
    code = (
        "import json, harness, harness.files as f, harness.cert.report.clauses as c;"
        "print(json.dumps([harness.__file__, str(f.FIXTURES), str(f.FEATURES), str(f.DOCS), f.available_profiles(),"
        " len(c.rule_clauses()), sorted(p.name for p in f.FEATURES.rglob('*.feature'))]))"
    )
    done = _run([str(venv / "python"), "-c", code], tmp_path)
    module, fixtures, features, docs, profiles, clauses, feature_files = json.loads(done.stdout)
    site = str(venv.parent)
    assert all(p.startswith(site) for p in (module, fixtures, features, docs))
    assert "certification" in profiles and clauses == len(rule_clauses()) and "payouts.feature" in feature_files
    for rel in ("benches/in-process.yaml", "faults/chaos.yaml", "rules/RULES.md", "protocol/golden.jsonl", "lab"):
        assert (Path(fixtures) / rel).exists(), rel
    for rel in ("benches.md", "lab-api.md", "steps.md", "adapters.md", "dialects/README.md"):
        assert (Path(docs) / rel).exists(), rel


def test_every_command_answers_help_with_the_certify_extra(venv: Path, tmp_path: Path) -> None:
    _help_of_every_command(venv, tmp_path)
    bare = _run([str(venv / "xocdia-hil")], tmp_path, expect=2)
    assert "Traceback" not in bare.stderr and len(bare.stderr.splitlines()) == 1, bare.stderr


def test_init_then_certify_writes_the_html_report_from_the_installed_wheel(venv: Path, tmp_path: Path) -> None:
    xocdia = str(venv / "xocdia-hil")
    init = _run([xocdia, "init", "lab"], tmp_path)
    assert "xocdia-hil docs" in init.stdout, init.stdout  # init points to the shipped docs
    lab = tmp_path / "lab"
    done = _run([xocdia, "certify", "--bench", "in-process", "--report", "r"], lab, bin_dir=venv)
    every = len(rule_clauses())  # the clauses of this tree's RULES.md, which the wheel ships
    assert f"clause coverage: {every}/{every} clauses of RULES.md" in done.stdout, done.stdout[-2000:]
    assert f"report: {Path('r') / 'index.html'}" in done.stdout.splitlines(), done.stdout[-2000:]
    page = (lab / "r" / "index.html").read_text(encoding="utf-8")
    assert "<html" in page.lower() and "payouts" in page.lower()
    matrix = json.loads((lab / "r" / "clause-matrix.json").read_text(encoding="utf-8"))
    assert matrix["failed"] == 0 and matrix["uncovered"] == []
    summary = json.loads(_run([xocdia, "simulate", "--rounds", "1000", "--seed", "7", "--json"], lab).stdout)
    assert summary["rounds"] == 1000


def test_shipped_data_by_name_from_the_installed_wheel(venv: Path, tmp_path: Path) -> None:
    xocdia = str(venv / "xocdia-hil")
    listed = json.loads(_run([xocdia, "fixtures", "--json"], tmp_path).stdout)
    names = {kind: [e["name"] for e in entries] for kind, entries in listed.items()}
    assert "chaos" in names["schedules"] and "in-process" in names["benches"] and "standard" in names["profiles"]
    assert names["allow-lists"] == ["shipped"] and "payouts" in names["features"]
    campaign = _run([xocdia, "campaign", "--bench", "in-process", "--schedule", "chaos", "--seeds", "1-4"], tmp_path)
    assert "campaign: 4 seeds, 4 passed" in campaign.stdout + campaign.stderr, campaign.stdout[-2000:]
    audit = _run([xocdia, "rules-audit", "--allow", "shipped"], tmp_path)
    assert "verdict: PASS" in audit.stdout, audit.stdout[-2000:]
    profile = _run([xocdia, "simulate", "--rounds", "10", "--profile", "fixtures/profiles/chaotic.yaml"], tmp_path)
    assert "profile chaotic" in profile.stdout
    wrong = _run([xocdia, "inject", "--bench", "in-process", "--schedule", "chaoss"], tmp_path, expect=2)
    assert wrong.stderr.count("\n") == 1 and "shipped schedules: chaos," in wrong.stderr, wrong.stderr


def test_the_docs_and_the_step_catalogue_from_the_installed_wheel(venv: Path, tmp_path: Path) -> None:
    xocdia = str(venv / "xocdia-hil")
    page = _run([xocdia, "docs", "benches"], tmp_path).stdout
    assert page.startswith("# ") and "bench" in page.splitlines()[0].lower()
    topics = _run([xocdia, "docs"], tmp_path).stdout
    assert all(f"  {t} " in topics for t in ("benches", "lab-api", "steps", "rules")), topics
    site = venv.parent / "lib"
    before = sorted(str(p) for p in site.rglob("*") if "__pycache__" not in p.parts)
    steps = _run([str(venv / "python"), "-m", "harness.cert.steps.docgen"], tmp_path).stdout
    assert steps.startswith("# Step vocabulary"), steps[:200]
    _run([str(venv / "python"), "-m", "harness.cert.steps.docgen", "--check"], tmp_path)  # the shipped page is current
    after = sorted(str(p) for p in site.rglob("*") if "__pycache__" not in p.parts)
    assert after == before  # nothing written into the installed package
    _run([str(venv / "python"), "-m", "harness.cert.steps.docgen", "--out", "steps.md"], tmp_path)
    assert (tmp_path / "steps.md").read_text(encoding="utf-8") == steps


def test_the_examples_from_the_installed_wheel_are_listed_and_copied_out(venv: Path, tmp_path: Path) -> None:
    """Every folder of this tree's ``examples/`` is listed from the installed package, and one copied out holds
    exactly the tree's files of it, byte for byte."""
    xocdia = str(venv / "xocdia-hil")
    tree = REPO / "examples"
    folders = sorted(p.name for p in tree.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    listed = json.loads(_run([xocdia, "examples", "--json"], tmp_path).stdout)
    assert [e["name"] for e in listed] == folders and {"lab", "acme_dialect"} <= set(folders)
    assert all(e["path"].startswith(str(venv.parent)) for e in listed), listed
    assert {e["name"]: e["about"] for e in listed}["lab"] == "A lab's kit, tried end to end"
    files = sorted(
        str(p.relative_to(tree / "lab"))
        for p in (tree / "lab").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    copied = json.loads(_run([xocdia, "examples", "lab", "--to", "kit", "--json"], tmp_path).stdout)
    assert copied["files"] == files and "lab_adapter.py" in files, copied
    on_disk = sorted(str(p.relative_to(tmp_path / "kit")) for p in (tmp_path / "kit").rglob("*") if p.is_file())
    assert on_disk == files
    for rel in files:
        assert (tmp_path / "kit" / rel).read_bytes() == (tree / "lab" / rel).read_bytes(), rel
    again = _run([xocdia, "examples", "lab", "--to", "kit"], tmp_path, expect=2)
    assert again.stderr.count("\n") == 1 and "not an empty folder" in again.stderr, again.stderr


def test_the_pytest_plugin_loads_only_where_it_is_asked_for(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "test_lab.py").write_text(
        "import sys\n\ndef test_plugin(request):\n"
        "    print('PLUGIN', 'harness.cert.plugin' in sys.modules, 'harness.bench.rig' in sys.modules)\n",
        encoding="utf-8",
    )
    pytest_cmd = [str(venv / "python"), "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_lab.py"]
    plain = _run(pytest_cmd, tmp_path)
    assert "PLUGIN False False" in plain.stdout, plain.stdout
    asked = _run([*pytest_cmd, "--bench", "in-process"], tmp_path)
    assert "PLUGIN True True" in asked.stdout, asked.stdout


def test_every_command_answers_help_with_the_base_install_alone(base: Path, tmp_path: Path) -> None:
    _help_of_every_command(base, tmp_path)
    summary = json.loads(_run([str(base / "xocdia-hil"), "simulate", "--rounds", "200", "--json"], tmp_path).stdout)
    assert summary["rounds"] == 200
    run = _run([str(base / "xocdia-hil"), "run", "--bench", "in-process", "--rounds", "2"], tmp_path)
    assert "oracle: PASS" in run.stdout, run.stdout[-2000:]
    assert "in-process" in _run([str(base / "xocdia-hil"), "fixtures", "benches"], tmp_path).stdout
    assert _run([str(base / "xocdia-hil"), "docs", "benches", "--path"], tmp_path).stdout.strip().endswith("benches.md")


@pytest.mark.parametrize(
    ("args", "needs"),
    [
        (["certify", "--bench", "in-process"], "xocdia-hil certify needs pytest, pytest-bdd"),
        (["inject", "--bench", "in-process", "--schedule", "chaos", "--explore", "min.yaml"], "needs hypothesis"),
    ],
)
def test_a_command_whose_extra_is_missing_says_so_in_one_line(
    base: Path, tmp_path: Path, args: list[str], needs: str
) -> None:
    started = time.monotonic()
    done = _run([str(base / "xocdia-hil"), *args], tmp_path, expect=2)
    assert done.stderr.count("\n") == 1 and needs in done.stderr, done.stderr
    assert done.stderr.rstrip().endswith("pip install 'xocdia-hil[certify]'"), done.stderr
    assert time.monotonic() - started < 30


def _template_installs() -> dict[str, tuple[dict[str, str], list[str]]]:
    """Each CI template's variables and the shell commands of its install step, as the CI system would run them."""
    ci = REPO / "ci"
    github = yaml.safe_load((ci / "github-actions.yml").read_text(encoding="utf-8"))
    (install,) = [s for s in github["jobs"]["certify"]["steps"] if s.get("name") == "Install xocdia-hil"]
    gitlab = yaml.safe_load((ci / "gitlab-ci.yml").read_text(encoding="utf-8"))
    jenkins = (ci / "Jenkinsfile").read_text(encoding="utf-8")
    stage = jenkins.split("stage('Install')", 1)[1].split("stage('Certify')", 1)[0]
    jenkins_env = dict(re.findall(r"^\s+(XOCDIA_HIL_\w+) = '([^']*)'$", jenkins, re.MULTILINE))
    return {
        "github-actions.yml": (github["env"], [install["run"]]),
        "gitlab-ci.yml": (gitlab["variables"], [c for c in gitlab["certify"]["script"] if "certify --bench" not in c]),
        "Jenkinsfile": (jenkins_env, re.findall(r"sh '''(.*?)'''|sh '([^']*)'", stage, re.DOTALL)),
    }


def test_the_ci_templates_install_steps_run_with_the_wheel_as_their_source(
    wheel: Path, venv: Path, tmp_path: Path
) -> None:
    """The templates' own install commands, unchanged, with ``XOCDIA_HIL_SOURCE`` naming the wheel: GitHub's and
    GitLab's with the runner's Python being the session's ``[certify]`` venv, Jenkins's in the fresh ``.venv`` it
    makes itself; and the version check they end with stops a job whose kit is not the pinned version."""
    for name, (variables, commands) in _template_installs().items():
        assert variables["XOCDIA_HIL_SOURCE"] == "" and variables["XOCDIA_HIL_VERSION"], name
        work = tmp_path / name
        work.mkdir()
        env = {**variables, "XOCDIA_HIL_SOURCE": wheel.as_uri()}
        script = "set -e\n" + "".join(f"export {k}='{v}'\n" for k, v in env.items())
        script += "\n".join("".join(c) if isinstance(c, tuple) else c for c in commands)
        _run(["bash", "-c", script], work, timeout=900, bin_dir=venv)
        if name == "github-actions.yml":
            pinned = f"export XOCDIA_HIL_VERSION='{variables['XOCDIA_HIL_VERSION']}'"
            other = script.replace(pinned, "export XOCDIA_HIL_VERSION='0.0.0'")
            _run(["bash", "-c", other], work, timeout=900, bin_dir=venv, expect=1)
    fresh = tmp_path / "Jenkinsfile" / ".venv" / "bin"
    version = _run([str(fresh / "xocdia-hil"), "--version"], tmp_path).stdout.strip()
    assert version == f"xocdia-hil {importlib.metadata.version('xocdia-hil')}"
