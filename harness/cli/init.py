"""``xocdia-hil init DIR``: scaffold a lab's workspace from the shipped template (``fixtures/lab/``).

    xocdia-hil init lab && cd lab && xocdia-hil certify --bench in-process

The workspace holds a commented bench file for the lab's staging server (``bench.yaml``), an adapter skeleton
implementing the adapter interface with TODOs (``lab_adapter.py``), a ``features/`` folder with one example scenario
written with the shipped steps, CI templates for GitHub Actions, GitLab CI and Jenkins (``ci/``), a README, and
``xocdia-hil.yaml``, which pins the installed suite version (``suite: "X.Y"``): a certify run in the workspace then
warns of every change a newer suite makes to what the lab runs (``features/CHANGELOG.md``).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from harness.cert.suite_version import WORKSPACE_FILE, installed_version
from harness.cli.common import CliError
from harness.files import FIXTURES

TEMPLATE = FIXTURES / "lab"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("init", help="scaffold a lab workspace: bench file, adapter skeleton, features, CI")
    p.add_argument("dir", type=Path, help="folder to create (it must not exist, or be empty)")
    p.set_defaults(func=run)


def template_files() -> list[Path]:
    """The template's files, relative to the template folder, sorted (compiled Python files left out)."""
    return sorted(
        p.relative_to(TEMPLATE)
        for p in TEMPLATE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def pin_text() -> str:
    """The workspace file that pins the installed suite version (:mod:`harness.cert.suite_version`)."""
    version = installed_version()
    return (
        "# The certification suite version this workspace certifies against. xocdia-hil certify prints the installed\n"
        "# suite's version and, when it is newer than this pin, one warning per change (features/CHANGELOG.md) that\n"
        "# touches the scenarios you run or the steps your features use. Raise the pin once you have read them.\n"
        f'suite: "{version}"\n'
    )


def scaffold(target: Path) -> list[Path]:
    """Copy the template into ``target`` (created with its parents), write the suite pin (:data:`WORKSPACE_FILE`,
    :func:`pin_text`) and return the files written, relative to it, the pin last.

    Raises:
        CliError: ``target`` is a file, a folder that is not empty, or cannot be written.
    """
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise CliError(f"init {target}: already exists and is not an empty folder; choose a new folder")
    written = template_files()
    try:
        for rel in written:
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(TEMPLATE / rel, dest)
        (target / WORKSPACE_FILE).write_text(pin_text(), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"init {target}: cannot write ({exc.strerror or exc})") from None
    return [*written, Path(WORKSPACE_FILE)]


def run(args: argparse.Namespace) -> int:
    target: Path = args.dir
    written = scaffold(target)
    for rel in written:
        print(f"created {target / rel}")
    print(f"next: cd {target} && xocdia-hil certify --bench in-process   (then read {target / 'README.md'})")
    print("docs: xocdia-hil docs lists the shipped documentation; xocdia-hil docs benches prints one page")
    return 0
