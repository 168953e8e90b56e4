"""``xocdia-hil init DIR``: the lab workspace it writes, its CI templates (checked against the GitHub Actions and
GitLab CI schemas vendored by check-jsonschema, so offline; the Jenkinsfile, which has no schema, by structure), the
adapter skeleton against the adapter interface, and the repository's ``ci/`` being exactly the lab templates."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.bench.adapters.base import GameServerAdapter
from harness.bench.config import load_bench
from harness.cli.init import TEMPLATE, scaffold, template_files

REPO = Path(__file__).resolve().parents[2]
EXPECTED = {
    "README.md",
    "bench.yaml",
    "lab_adapter.py",
    "features/example.feature",
    "ci/README.md",
    "ci/github-actions.yml",
    "ci/gitlab-ci.yml",
    "ci/Jenkinsfile",
    "xocdia-hil.yaml",  # the suite version pin (harness.cert.suite_version)
}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def test_init_writes_the_workspace_and_refuses_a_folder_in_use(tmp_path: Path) -> None:
    done = _cli("init", "lab", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lab = tmp_path / "lab"
    assert {str(p.relative_to(lab)) for p in lab.rglob("*") if p.is_file()} == EXPECTED
    assert "next: cd lab && xocdia-hil certify --bench in-process" in done.stdout
    again = _cli("init", "lab", cwd=tmp_path)
    assert (again.returncode, again.stderr) == (
        2,
        "xocdia-hil: error: init lab: already exists and is not an empty folder; choose a new folder\n",
    )


def test_the_bench_template_is_a_valid_url_bench(tmp_path: Path) -> None:
    scaffold(tmp_path / "lab")
    bench = load_bench(str(tmp_path / "lab" / "bench.yaml"))
    assert (bench.server.kind, bench.server.adapter, bench.faults_allowed) == ("url", "lab_adapter:LabAdapter", False)


def test_the_adapter_skeleton_implements_the_interface(tmp_path: Path) -> None:
    scaffold(tmp_path / "lab")
    spec = importlib.util.spec_from_file_location("lab_adapter", tmp_path / "lab" / "lab_adapter.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cls = module.LabAdapter
    assert issubclass(cls, GameServerAdapter) and not inspect.isabstract(cls)
    adapter = cls({"url": "https://staging.example.invalid", "command": []})
    assert adapter.url == "https://staging.example.invalid"
    assert "TODO" in inspect.getsource(cls.place_bet)


def test_the_example_feature_uses_only_shipped_steps(tmp_path: Path) -> None:
    scaffold(tmp_path / "lab")
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--features", "features", "--workers", "0"]
    done = subprocess.run(cmd, cwd=tmp_path / "lab", capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "scenarios passed 1, failed 0" in done.stdout


@pytest.mark.parametrize(
    ("name", "schema"), [("github-actions.yml", "github-workflows"), ("gitlab-ci.yml", "gitlab-ci")]
)
def test_ci_templates_match_their_schemas(name: str, schema: str) -> None:
    pytest.importorskip("check_jsonschema", reason="the schemas come with check-jsonschema (the test extra)")
    cmd = [
        sys.executable,
        "-m",
        "check_jsonschema",
        "--builtin-schema",
        f"vendor.{schema}",
        str(TEMPLATE / "ci" / name),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ci_templates_install_the_package_and_certify_the_labs_bench() -> None:
    pinned = re.compile(r"XOCDIA_HIL_VERSION(?: =|:) [\"']([^\"']+)[\"']")
    for name in ("github-actions.yml", "gitlab-ci.yml", "Jenkinsfile"):
        text = (TEMPLATE / "ci" / name).read_text(encoding="utf-8")
        assert pinned.findall(text) == [importlib.metadata.version("xocdia-hil")], name  # the kit that wrote it
        assert 'pip install "xocdia-hil[certify]==$XOCDIA_HIL_VERSION"' in text, name
        assert 'pip install "xocdia-hil[certify] @ $XOCDIA_HIL_SOURCE"' in text, name
        assert 'test "$(xocdia-hil --version)" = "xocdia-hil $XOCDIA_HIL_VERSION"' in text, name
        assert "xocdia-hil certify --bench bench.yaml --features shipped --features features --report report" in text
        assert "make " not in text, name  # this project's own CI, not a lab's
        assert "fixtures/" not in text, name
    github = yaml.safe_load((TEMPLATE / "ci" / "github-actions.yml").read_text(encoding="utf-8"))
    steps = github["jobs"]["certify"]["steps"]
    assert any(
        s.get("uses", "").startswith("actions/upload-artifact") and s["with"]["path"] == "report/" for s in steps
    )
    gitlab = yaml.safe_load((TEMPLATE / "ci" / "gitlab-ci.yml").read_text(encoding="utf-8"))
    assert gitlab["certify"]["artifacts"] == {**gitlab["certify"]["artifacts"], "when": "always", "paths": ["report/"]}
    jenkins = (TEMPLATE / "ci" / "Jenkinsfile").read_text(encoding="utf-8")  # no schema exists: its structure
    assert jenkins.count("{") == jenkins.count("}")
    for part in ("pipeline {", "agent any", "stages {", "stage('Install')", "stage('Certify')", "archiveArtifacts"):
        assert part in jenkins, part


def test_the_repositorys_ci_folder_is_the_lab_templates() -> None:
    shipped = {str(p)[len("ci/") :] for p in map(str, template_files()) if p.startswith("ci/")}
    present = {p.name for p in (REPO / "ci").iterdir() if p.is_file()}
    assert present == shipped
    for name in shipped:
        assert (REPO / "ci" / name).read_bytes() == (TEMPLATE / "ci" / name).read_bytes(), name
