"""``xocdia-hil examples [NAME] [--to DIR] [--json]``: the worked examples that ship with the package.

    xocdia-hil examples                      list them: each name, its folder in the installed package, what it is
    xocdia-hil examples lab                  the example's files, by their paths in the installed package
    xocdia-hil examples lab --to lab-kit     copy them into lab-kit (a new or empty folder)

An example is a folder of the repository's ``examples/`` (the data package ``xocdia_hil_examples``): a lab's adapter
tried end to end (``lab``), a dialect package (``acme_dialect``), and whatever other folders ``examples/`` holds.
What an example is comes from its ``README.md`` (its first heading), else from the docstring of its first Python
module, else from its ``pyproject.toml`` description. Compiled files, build folders and egg-info are never listed
nor copied.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

from harness.cli.common import CliError
from harness.cli.docs import title
from harness.files import examples_folder

#: Folder names that are never part of an example (made by running or installing one in place).
_LEFT_OUT = ("__pycache__", "build", "dist")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("examples", help="list the worked examples shipped with the package, or copy one out")
    p.add_argument("name", nargs="?", help="an example, e.g. lab (no name: list them)")
    p.add_argument("--to", type=Path, metavar="DIR", help="copy the example's files into DIR (new or empty)")
    p.add_argument("--json", action="store_true", help="print JSON: the list, or the example's files")
    p.set_defaults(func=run)


def shipped() -> Path:
    """The folder the examples are installed in.

    Raises:
        CliError: the installed package has no examples (an install from a build before they shipped: the message
            says to reinstall it) or has them only inside an archive.
    """
    try:
        return examples_folder()
    except ModuleNotFoundError:
        raise CliError(
            "examples: this install of xocdia-hil has no examples (built before they shipped): reinstall it "
            "(pip install --force-reinstall xocdia-hil, or pip install -e . in a checkout)"
        ) from None
    except NotADirectoryError as exc:
        raise CliError(f"examples: {exc}") from None


def _kept(rel: Path) -> bool:
    return not any(part in _LEFT_OUT or part.endswith(".egg-info") for part in rel.parts) and rel.suffix != ".pyc"


def examples(root: Path) -> dict[str, Path]:
    """Every example under ``root``: each subfolder (not hidden, not ``__pycache__``) by its name, sorted."""
    return {
        p.name: p
        for p in sorted(root.iterdir())
        if p.is_dir() and not p.name.startswith((".", "_")) and _kept(Path(p.name))
    }


def files(folder: Path) -> list[Path]:
    """The example's files, relative to ``folder``, sorted (compiled files, build folders, egg-info left out)."""
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and _kept(p.relative_to(folder)))


def about(folder: Path) -> str:
    """One line saying what the example is (see the module's docstring); ``""`` when nothing says. Never raises on
    an unreadable or malformed file (it is passed over)."""
    heading = title(folder / "README.md")
    if heading:
        return heading
    for module in (folder / rel for rel in files(folder) if rel.suffix == ".py"):
        try:
            doc = ast.get_docstring(ast.parse(module.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        if doc:
            return doc.strip().splitlines()[0]
    try:
        project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    return str(project.get("description", "")) if isinstance(project, dict) else ""


def example(name: str, root: Path) -> Path:
    """The folder of the example ``name`` under ``root``.

    Raises:
        CliError: no such example (one line listing the examples).
    """
    found = examples(root)
    key = name.removeprefix("examples/").rstrip("/")
    if key not in found:
        raise CliError(f"examples: no example {name!r}; examples: {', '.join(found) or '(none shipped)'}")
    return found[key]


def copy_out(folder: Path, target: Path) -> list[Path]:
    """Copy the example in ``folder`` into ``target`` (created with its parents); the files written, relative to
    ``target``. Nothing is overwritten.

    Raises:
        CliError: ``target`` is a file or a folder that is not empty, or cannot be written.
    """
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise CliError(f"examples --to {target}: already exists and is not an empty folder; choose a new folder")
    written = files(folder)
    try:
        for rel in written:
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / rel, dest)
    except OSError as exc:
        raise CliError(f"examples --to {target}: cannot write ({exc.strerror or exc})") from None
    return written


def run(args: argparse.Namespace) -> int:
    root = shipped()
    if args.name is None:
        if args.to is not None:
            raise CliError("examples --to DIR: name the example to copy (xocdia-hil examples lists them)")
        found = examples(root)
        if args.json:
            print(json.dumps([{"name": n, "path": str(p), "about": about(p)} for n, p in found.items()], indent=2))
            return 0
        width = max((len(n) for n in found), default=0)
        print(f"examples shipped with xocdia-hil, in {root} (xocdia-hil examples NAME --to DIR copies one):")
        for name, folder in found.items():
            print(f"  {name:<{width}}  {about(folder)}".rstrip())
        return 0
    folder = example(args.name, root)
    if args.to is not None:
        written = copy_out(folder, args.to)
        if args.json:
            print(json.dumps({"name": folder.name, "to": str(args.to), "files": [str(r) for r in written]}, indent=2))
            return 0
        print(f"copied example {folder.name} into {args.to}: {len(written)} files")
        for rel in written:
            print(f"  {args.to / rel}")
        return 0
    listed = files(folder)
    if args.json:
        print(json.dumps({"name": folder.name, "path": str(folder), "files": [str(r) for r in listed]}, indent=2))
        return 0
    print(f"example {folder.name}: {about(folder)}".rstrip())
    for rel in listed:
        print(f"  {folder / rel}")
    return 0
