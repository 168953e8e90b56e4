"""``xocdia-hil fixtures [KIND] [--json]``: the data shipped with the package, by the name each option takes.

    benches           --bench NAME            (run, certify, inject, campaign)
    profiles          --profile NAME          (simulate, devices; a bench file's profile)
    schedules         --schedule NAME         (inject, campaign)
    allow-lists       rules-audit --allow shipped
    features          certify --features shipped

Each line is a name, its file in the installed package and the file's first comment line. A lab's own files are
given by path to the same options; a shipped file is copied from the path listed here to make a lab's variant.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.files import FEATURES, FIXTURES, PROFILE_DIR, SCHEDULE_DIR, shipped_names


@dataclass(frozen=True)
class Kind:
    """One kind of shipped data: its name here, the option that takes it, and where its files are."""

    name: str
    option: str
    folder: Path
    pattern: str = "*.yaml"


KINDS: tuple[Kind, ...] = (
    Kind("benches", "--bench NAME", FIXTURES / "benches"),
    Kind("profiles", "--profile NAME", PROFILE_DIR),
    Kind("schedules", "--schedule NAME", SCHEDULE_DIR),
    Kind("allow-lists", "rules-audit --allow shipped", FIXTURES / "rules" / "documents", "allowed-findings.yaml"),
    Kind("features", "certify --features shipped", FEATURES, "*.feature"),
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("fixtures", help="list the shipped benches, profiles, fault schedules and suites")
    p.add_argument("kind", nargs="?", choices=[k.name for k in KINDS], help="only this kind")
    p.add_argument("--json", action="store_true", help="print one JSON object: kind -> [{name, path, about}]")
    p.set_defaults(func=run)


def about(path: Path) -> str:
    """The first comment line of a shipped file (``#`` for YAML and Gherkin), or its ``Feature:`` title; ``""``
    when it has neither. Never raises on an unreadable file (returns ``""``)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    for line in lines:
        text = line.strip()
        if text.startswith("#") and not text.startswith("#!"):
            return text.lstrip("#").strip()
        if text.startswith("Feature:"):
            return text
    return ""


def entries(kind: Kind) -> list[dict[str, str]]:
    """The shipped files of ``kind``, sorted by name: ``{name, path, about}`` each (the name the option takes)."""
    if kind.pattern == "*.yaml":
        paths = [kind.folder / f"{name}.yaml" for name in shipped_names(kind.folder)]
    else:
        paths = sorted(kind.folder.rglob(kind.pattern))
    found = []
    for path in paths:
        name = "shipped" if kind.name == "allow-lists" else str(path.relative_to(kind.folder).with_suffix(""))
        found.append({"name": name, "path": str(path), "about": about(path)})
    return found


def run(args: argparse.Namespace) -> int:
    kinds = [k for k in KINDS if args.kind in (None, k.name)]
    if args.json:
        print(json.dumps({k.name: entries(k) for k in kinds}, indent=2))
        return 0
    for i, kind in enumerate(kinds):
        found = entries(kind)
        if i:
            print()
        print(f"{kind.name} ({kind.option}), in {kind.folder}:")
        width = max((len(e["name"]) for e in found), default=0)
        for entry in found:
            line = f"  {entry['name']:<{width}}  {entry['about']}".rstrip()
            print(line if len(line) <= 118 else line[:115] + "...")
    return 0
