"""``xocdia-hil docs [TOPIC] [--path]``: the user documentation that ships with the package.

Without a topic it lists the topics, each with its page's title; with one it prints that page (Markdown) to
standard output, or with ``--path`` the page's file in the installed package. A topic is a page's name without
``.md`` (``benches``, ``lab-api``, ``dialects/xocdia-bus``; a folder's ``README.md`` is the folder's name,
``dialects``), plus ``rules``, the certified rules with their clause IDs (``fixtures/rules/RULES.md``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.common import CliError
from harness.files import DOCS, FIXTURES

#: Topics that live outside the docs folder.
EXTRA_TOPICS = {"rules": FIXTURES / "rules" / "RULES.md"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("docs", help="list or print the documentation shipped with the package")
    p.add_argument("topic", nargs="?", help="a page, e.g. benches (no topic: list them)")
    p.add_argument("--path", action="store_true", help="print the page's file path instead of its text")
    p.set_defaults(func=run)


def topics() -> dict[str, Path]:
    """Every topic and its Markdown file, sorted by topic (see the module's docstring for how a page is named)."""
    found: dict[str, Path] = {}
    for page in DOCS.rglob("*.md"):
        rel = page.relative_to(DOCS).with_suffix("")
        name = str(rel.parent) if rel.name == "README" and rel.parent != Path(".") else rel.as_posix()
        found[name] = page
    found.update(EXTRA_TOPICS)
    return dict(sorted(found.items()))


def title(page: Path) -> str:
    """The page's first Markdown heading, without its ``#``s; ``""`` when it has none or cannot be read."""
    try:
        lines = page.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    return next((line.lstrip("#").strip() for line in lines if line.startswith("#")), "")


def page_of(topic: str) -> Path:
    """The file of ``topic`` (``benches``, ``benches.md``, ``docs/benches.md`` all name the same page).

    Raises:
        CliError: no such topic (one line listing the topics).
    """
    name = topic.removeprefix("docs/").removesuffix(".md")
    pages = topics()
    if name not in pages:
        raise CliError(f"docs: no topic {topic!r}; topics: {', '.join(pages)}")
    return pages[name]


def run(args: argparse.Namespace) -> int:
    if args.topic is None:
        pages = topics()
        width = max(len(name) for name in pages)
        print(f"documentation shipped with xocdia-hil, in {DOCS} (xocdia-hil docs TOPIC prints one):")
        for name, page in pages.items():
            print(f"  {name:<{width}}  {title(page)}")
        return 0
    page = page_of(args.topic)
    print(page if args.path else page.read_text(encoding="utf-8"), end="\n" if args.path else "")
    return 0
