"""``xocdia-hil examples``: every folder of ``examples/`` is listed with what it is, one is listed file by file or
copied out into a new folder (compiled files, build folders and egg-info left out, nothing overwritten), and a bad
request is one line naming what is allowed. Run on a copy of this checkout's ``examples/`` as the installed folder
(the installed wheel's own is tried by tests/packaging/test_wheel.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import examples as examples_cli
from harness.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of ``examples/`` as the installed examples, with what running and installing them in place leaves."""
    root = tmp_path / "installed"
    shutil.copytree(REPO / "examples", root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    (root / "lab" / "__pycache__").mkdir()
    (root / "lab" / "__pycache__" / "lab_adapter.cpython-311.pyc").write_bytes(b"\0")
    (root / "acme_dialect" / "acme_xocdia_dialect.egg-info").mkdir()
    (root / "acme_dialect" / "acme_xocdia_dialect.egg-info" / "PKG-INFO").write_text("x", encoding="utf-8")
    (root / "__pycache__").mkdir()
    monkeypatch.setattr(examples_cli, "examples_folder", lambda: root)
    return root


def _out(capsys: pytest.CaptureFixture[str], *args: str, status: int = 0) -> str:
    assert main(["examples", *args]) == status
    done = capsys.readouterr()
    return done.out if status == 0 else done.err


def test_every_folder_of_examples_is_listed_with_what_it_is(shipped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folders = sorted(p.name for p in (REPO / "examples").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert {"lab", "acme_dialect"} <= set(folders)
    listed = json.loads(_out(capsys, "--json"))
    assert [e["name"] for e in listed] == folders
    about = {e["name"]: e["about"] for e in listed}
    assert about["lab"] == "A lab's kit, tried end to end"  # its README's heading
    assert about["acme_dialect"].startswith("ACME's table devices")  # its module's docstring
    text = _out(capsys)
    assert text.splitlines()[0].startswith(f"examples shipped with xocdia-hil, in {shipped} ")
    width = max(len(name) for name in folders)
    assert f"  {'lab':<{width}}  A lab's kit, tried end to end" in text.splitlines()
    assert len(text.splitlines()) == 1 + len(folders)


def test_an_example_is_listed_file_by_file(shipped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = json.loads(_out(capsys, "lab", "--json"))
    assert listed == {
        "name": "lab",
        "path": str(shipped / "lab"),
        "files": ["README.md", "lab_adapter.py", "staging.py"],
    }
    assert f"  {shipped / 'lab' / 'lab_adapter.py'}" in _out(capsys, "examples/lab").splitlines()


def test_an_example_is_copied_out_whole_and_without_what_running_it_left(
    shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "kit" / "acme"
    text = _out(capsys, "acme_dialect", "--to", str(target))
    assert text.splitlines()[0] == f"copied example acme_dialect into {target}: 2 files"
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    assert copied == ["acme_dialect.py", "pyproject.toml"]
    for name in copied:
        assert (target / name).read_bytes() == (REPO / "examples" / "acme_dialect" / name).read_bytes()
    lab = tmp_path / "lab-kit"
    lab.mkdir()  # an empty folder is taken
    done = json.loads(_out(capsys, "lab", "--to", str(lab), "--json"))
    assert done["files"] == ["README.md", "lab_adapter.py", "staging.py"] and not (lab / "__pycache__").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["labb"], "examples: no example 'labb'; examples: acme_dialect, "),
        (["--to", "x"], "examples --to DIR: name the example to copy (xocdia-hil examples lists them)"),
        (["lab", "--to", "{full}"], "already exists and is not an empty folder; choose a new folder"),
    ],
)
def test_a_bad_request_is_one_line_naming_what_is_allowed(
    shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "lab_adapter.py").write_text("# the lab's own\n", encoding="utf-8")
    err = _out(capsys, *[a.format(full=full) for a in args], status=2)
    assert err.count("\n") == 1 and message in err, err
    assert (full / "lab_adapter.py").read_text(encoding="utf-8") == "# the lab's own\n"  # nothing overwritten


def test_an_install_without_the_examples_says_to_reinstall(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing() -> Path:
        raise ModuleNotFoundError("No module named 'xocdia_hil_examples'")

    monkeypatch.setattr(examples_cli, "examples_folder", missing)
    err = _out(capsys, status=2)
    assert err.count("\n") == 1 and "has no examples (built before they shipped): reinstall it" in err, err
