"""The copies of the working tree a mutation run works in: the working tree itself is never written to.

Guarantees: :func:`copy_tree` copies the files git knows (tracked, and untracked but not ignored, as they are now:
uncommitted edits included) and links the data packages to their folders in the copy; :func:`prepare` compiles the
copy's bytecode once, except for the mutated modules (so a run never reads a stale cached module); :func:`inside`
makes the current process work in a copy and import it; :func:`check_imports` proves, in a fresh interpreter, that
the server, the harness and the data packages then come from the copy.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The data packages the editable install maps onto the working tree; in the copy they are links to its folders.
DATA_PACKAGES = {"xocdia_hil_fixtures": "fixtures", "xocdia_hil_features": "features"}


class TreeError(Exception):
    """The copy is not what the suite imports."""


def repo_root() -> Path:
    """The git checkout the current folder is in.

    Raises:
        TreeError: not inside a git checkout.
    """
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise TreeError("run it inside the repository's git checkout (it copies the files git knows)") from None
    return Path(top.stdout.strip())


def copy_tree(repo: Path, tree: Path) -> None:
    """Copy the working tree's tracked files and its untracked files that git does not ignore (as they are now,
    uncommitted edits included) into ``tree``, and link the data packages to their folders there."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    for name in sorted({n for n in listed.split("\0") if n}):
        source = repo / name
        if not source.is_file():
            continue  # deleted in the working tree, or a submodule
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    for package, folder in DATA_PACKAGES.items():
        (tree / package).symlink_to(folder, target_is_directory=True)


def prepare(tree: Path, mutated: list[str]) -> None:
    """Compile the copy's Python packages once, then remove the cached bytecode of the ``mutated`` modules (paths
    relative to ``tree``): each run compiles those from the source as it is then."""
    for package in ("gameserver", "harness", "simulator", "mutation"):
        if (tree / package).is_dir():
            compileall.compile_dir(tree / package, quiet=1)
    for module in mutated:
        path = tree / module
        for cached in path.parent.glob(f"__pycache__/{path.stem}.*.pyc"):
            cached.unlink()


def clone(tree: Path, target: Path) -> None:
    """Another copy of a prepared ``tree`` (links kept as links)."""
    shutil.copytree(tree, target, symlinks=True)


@contextmanager
def inside(tree: Path) -> Iterator[None]:
    """Work in ``tree`` (cosmic-ray's paths are relative, and its test command runs in the current folder) with
    the environment that makes the suite import the copy; both are put back afterwards."""
    saved_env = {k: os.environ.get(k) for k in ("PYTHONPATH", "XOCDIA_FEATURES")}
    saved_cwd = Path.cwd()
    os.environ["PYTHONPATH"] = str(tree)
    os.environ["XOCDIA_FEATURES"] = str(tree / "features")
    os.chdir(tree)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def check_imports(tree: Path) -> None:
    """Check, in a fresh interpreter with the run's environment, that the server, the harness and the data
    packages come from the copy (the editable install points at the working tree).

    Raises:
        TreeError: one of them does not.
    """
    names = ["gameserver", "harness", "simulator", *DATA_PACKAGES]
    code = "import importlib, sys\nfor n in sys.argv[1:]:\n    print(importlib.import_module(n).__file__)"
    done = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, check=False)
    files = done.stdout.split()
    if done.returncode != 0 or len(files) != len(names):
        raise TreeError(f"the copy's packages do not import: {done.stderr.strip()[-500:]}")
    for name, file in zip(names, files, strict=True):
        if not Path(file).is_relative_to(tree):
            raise TreeError(f"{name} is imported from {file}, not from the copy {tree}")
