"""docs/lab-api.md stays true to :mod:`harness.lab`: every name its import lines and its "What it holds" table list
imports from ``harness.lab``, every name ``harness.lab`` exports is listed there, and the pages and examples that
show a lab how to write a dialect or an adapter import from ``harness.lab`` alone (no deeper module a later version
may move); ``harness.lab.RefusalCode`` holds exactly the refusal codes docs/adapters.md lists and the steps and the
judge read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import harness.lab as lab
from harness.cert.steps.bets import REFUSAL_CLAUSES
from harness.judge.timeline import CLOSED_CODES, CONFLICT_CODES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "lab-api.md"
#: The pages and examples a lab copies its imports from.
LAB_FACING = [
    DOC,
    ROOT / "docs" / "adapters.md",
    ROOT / "docs" / "table-configuration.md",
    *sorted((ROOT / "docs" / "dialects").glob("*.md")),
]
_IMPORT = re.compile(r"^\s*from (harness(?:\.\w+)*) import (.+)$", re.M)
_NAME = re.compile(r"`([A-Za-z_]\w*)`")


def _import_lines(text: str) -> list[tuple[str, list[str]]]:
    """Each ``from harness... import a, b`` line of ``text``: the module and the names."""
    return [(m[1], [n.strip() for n in m[2].strip("() ").split(",") if n.strip()]) for m in _IMPORT.finditer(text)]


def _table_names(text: str) -> set[str]:
    """The names column of the "What it holds" table (its second column), as written in backticks."""
    section = text.split("## What it holds", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in section.splitlines():
        cells = row.split("|")
        if row.startswith("|") and len(cells) > 3 and not set(cells[1].strip()) <= {"-"}:
            names |= set(_NAME.findall(cells[2]))
    return names


def test_every_name_the_page_lists_imports_from_harness_lab() -> None:
    text = DOC.read_text("utf-8")
    listed = _table_names(text)
    imported = [name for module, names in _import_lines(text) if module == "harness.lab" for name in names]
    assert imported and len(listed) > 50, (imported, listed)
    missing = sorted(n for n in {*listed, *imported} if n not in lab.__all__ or not hasattr(lab, n))
    assert missing == [], f"docs/lab-api.md lists names harness.lab does not export: {missing}"


def test_every_name_harness_lab_exports_is_on_the_page() -> None:
    unlisted = sorted(set(lab.__all__) - _table_names(DOC.read_text("utf-8")))
    assert unlisted == [], f"harness.lab exports names docs/lab-api.md's table does not list: {unlisted}"


def test_the_lab_facing_docs_and_examples_import_from_harness_lab_alone() -> None:
    deeper: list[str] = []
    for page in LAB_FACING:
        for module, names in _import_lines(page.read_text("utf-8")):
            if module != "harness.lab":
                deeper.append(f"{page.relative_to(ROOT)}: from {module} import {', '.join(names)}")
    for source in sorted((ROOT / "examples").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness"):
                if node.module != "harness.lab":
                    deeper.append(f"{source.relative_to(ROOT)}:{node.lineno}: from {node.module} import ...")
            elif isinstance(node, ast.Import):
                deeper += [
                    f"{source.relative_to(ROOT)}:{node.lineno}: import {a.name}"
                    for a in node.names
                    if a.name.startswith("harness")
                ]
    assert deeper == [], "lab-facing code imports from deeper than harness.lab:\n" + "\n".join(deeper)


def test_the_refusal_codes_are_the_adapters_pages_and_the_ones_the_harness_reads() -> None:
    text = (ROOT / "docs" / "adapters.md").read_text("utf-8")
    section = text.split("## Refusal codes", 1)[1].split("\n## ", 1)[0]
    rows = [r.split("|") for r in section.splitlines() if r.startswith("| `")]
    documented = {code for cells in rows for code in _NAME.findall(cells[1])}
    assert {str(code) for code in lab.RefusalCode} == documented
    read = set(REFUSAL_CLAUSES) | CLOSED_CODES | CONFLICT_CODES  # the steps' and the judge's
    assert {str(code) for code in lab.RefusalCode} == read
