"""What ships with the package, reached by name from any folder: fault schedules (``--schedule chaos``), profiles,
the rules-audit allow-list (``--allow shipped``), ``xocdia-hil fixtures`` listing them, ``xocdia-hil docs``
printing the documentation, the step catalogue printed without writing anywhere, and ``certify --report DIR``
writing its HTML page. A lab's own files by path still win. Real CLI processes, run outside the checkout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness.faults.schedule import ScheduleError, load_schedule
from harness.files import DOCS, FIXTURES, SCHEDULE_DIR, load_profile, shipped_names

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("name", ["chaos", "chaos.yaml", "fixtures/faults/chaos.yaml"])
def test_a_shipped_schedule_by_name_or_repository_path(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # not the checkout: fixtures/ here does not exist
    assert load_schedule(name) == load_schedule(SCHEDULE_DIR / "chaos.yaml")


def test_a_labs_own_file_wins_over_a_shipped_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = (SCHEDULE_DIR / "serial-noise.yaml").read_text(encoding="utf-8")
    (tmp_path / "chaos.yaml").write_text(text, encoding="utf-8")  # the lab's own chaos.yaml
    assert load_schedule("chaos.yaml") == replace(
        load_schedule(SCHEDULE_DIR / "serial-noise.yaml"), source="chaos.yaml"
    )
    assert load_schedule("chaos") == load_schedule(SCHEDULE_DIR / "chaos.yaml")  # a bare name is the shipped one


def test_an_unknown_schedule_lists_the_shipped_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScheduleError) as error:
        load_schedule("chaoss")
    shipped = ", ".join(shipped_names(SCHEDULE_DIR))
    assert str(error.value) == f"cannot read schedule chaoss: No such file or directory; shipped schedules: {shipped}"


def test_a_profile_by_its_repository_path_or_file_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_profile("fixtures/profiles/chaotic.yaml") == load_profile("chaotic") == load_profile("chaotic.yaml")


def test_inject_and_rules_audit_take_shipped_names_from_any_folder(tmp_path: Path) -> None:
    done = _cli("inject", "--bench", "in-process", "--schedule", "restart-every-phase", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    audit = _cli("rules-audit", "--allow", "shipped", cwd=tmp_path)
    assert audit.returncode == 0 and "allowed" in audit.stdout.splitlines()[-1], audit.stdout[-1000:]
    assert _cli("rules-audit", cwd=tmp_path).returncode == 1  # the same findings, not allowed
    bad = _cli("rules-audit", "--allow", "nope.yaml", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr == (
        "xocdia-hil: error: --allow nope.yaml: no such file (a YAML allow-list, or 'shipped' for the shipped one)\n"
    )


def test_fixtures_lists_every_shipped_file_by_the_name_its_option_takes(tmp_path: Path) -> None:
    listed = json.loads(_cli("fixtures", "--json", cwd=tmp_path).stdout)
    assert [e["name"] for e in listed["schedules"]] == shipped_names(SCHEDULE_DIR)
    assert [e["name"] for e in listed["benches"]] == shipped_names(FIXTURES / "benches")
    assert [e["name"] for e in listed["profiles"]] == shipped_names(FIXTURES / "profiles")
    assert listed["allow-lists"][0]["name"] == "shipped"
    assert all(Path(e["path"]).is_file() and e["about"] for kind in listed.values() for e in kind)
    text = _cli("fixtures", "schedules", cwd=tmp_path).stdout
    assert text.startswith("schedules (--schedule NAME), in ") and "\n  chaos " in text
    bad = _cli("fixtures", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "choose from" in bad.stderr


def test_docs_lists_and_prints_the_shipped_pages(tmp_path: Path) -> None:
    listing = _cli("docs", cwd=tmp_path).stdout
    for page in sorted(DOCS.rglob("*.md")):
        rel = page.relative_to(DOCS).with_suffix("").as_posix().removesuffix("/README")
        assert f"\n  {rel} " in listing, rel
    assert _cli("docs", "benches", cwd=tmp_path).stdout == (REPO / "docs" / "benches.md").read_text(encoding="utf-8")
    assert _cli("docs", "lab-api.md", cwd=tmp_path).stdout.startswith("# ")
    assert _cli("docs", "rules", "--path", cwd=tmp_path).stdout.strip().endswith("RULES.md")
    bad = _cli("docs", "benchs", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith(
        "xocdia-hil: error: docs: no topic 'benchs'; topics: adapters,"
    )
    assert bad.stderr.count("\n") == 1


def test_the_step_catalogue_prints_or_writes_where_it_is_told(tmp_path: Path) -> None:
    module = [sys.executable, "-m", "harness.cert.steps.docgen"]
    shown = subprocess.run([*module, "--out", "-"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert shown.returncode == 0 and shown.stdout == (REPO / "docs" / "steps.md").read_text(encoding="utf-8")
    out = tmp_path / "steps.md"
    written = subprocess.run([*module, "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert written.returncode == 0 and out.read_text(encoding="utf-8") == shown.stdout
    stale = subprocess.run([*module, "--check", "--out", str(tmp_path / "none.md")], capture_output=True, check=False)
    assert stale.returncode == 1
    blocked = subprocess.run([*module, "--out", str(tmp_path)], capture_output=True, text=True, check=False)
    assert blocked.returncode == 2 and blocked.stderr.startswith(f"docgen: error: cannot write {tmp_path}")


def test_certify_writes_its_html_report_and_prints_the_path(tmp_path: Path) -> None:
    stale = tmp_path / "r" / "index.html"
    stale.parent.mkdir()
    stale.write_text("an old page", encoding="utf-8")
    done = _cli("certify", "--tags", "clause:SH-3", "--workers", "0", "--report", "r", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"report: {Path('r') / 'index.html'}" in done.stdout.splitlines()
    page = stale.read_text(encoding="utf-8")
    assert page != "an old page" and "<html" in page.lower() and "SH-3" in page
    shutil.rmtree(tmp_path / "r" / "allure-results")  # a run whose results are gone leaves no page behind
    again = _cli("certify", "--tags", "clause:NO-SUCH", "--workers", "0", "--report", "r", cwd=tmp_path)
    assert not stale.exists() and "report:" not in again.stdout
