"""What a mutant is in a report: cosmic-ray's work item (file, operator, occurrence) and where in the source it
applies, named by a key that survives edits elsewhere in the file.

The key is ``PATH::DEFINITION::OPERATOR::LINE`` (``LINE``: the source line the mutation starts on, stripped), with
``#2``, ``#3`` ... appended to the second and later mutants of the same operator on the same line of the same
definition (in column order, then cosmic-ray's order: e.g. a number's ``+1`` before its ``-1``). Line numbers and
cosmic-ray's occurrence numbers shift whenever code above them changes; the key changes only when the mutated line
itself, its enclosing definition or the operator does. Describing a mutant needs no mutation: one parse per file.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosmic_ray.util import read_python_source
from cosmic_ray.work_item import WorkItem


@dataclass(frozen=True)
class Mutant:
    """One mutant: where it applies and its stable key.

    ``line`` (1-based) and ``column`` (0-based, characters) are where the mutation starts in the source as it is
    now; ``definition`` is the dotted name of the enclosing class and function definitions (``<module>`` at top
    level); ``text`` is that line, stripped; ``in_annotation``: the mutation is inside a type annotation.
    """

    job_id: str
    path: str
    operator: str
    occurrence: int
    line: int
    column: int
    definition: str
    text: str
    in_annotation: bool
    key: str

    def to_json(self) -> dict[str, Any]:
        """The mutant's fields as a JSON-compatible dict (the report's per-mutant record, before its outcome)."""
        return {
            "key": self.key,
            "path": self.path,
            "line": self.line,
            "definition": self.definition,
            "operator": self.operator,
            "occurrence": self.occurrence,
        }


class _Source:
    """One source file, parsed once: its lines, its definitions' spans and its annotations' spans."""

    def __init__(self, path: Path) -> None:
        self.text = read_python_source(path)
        self.lines = self.text.split("\n")
        tree = ast.parse(self.text)
        self.definitions: list[tuple[int, int, str]] = []  # (first line, last line, dotted name), outer first
        self.annotations: list[tuple[tuple[int, int], tuple[int, int]]] = []  # (start, end) as (line, char column)
        self._walk(tree, "")

    def _walk(self, node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}.{child.name}" if prefix else child.name
                self.definitions.append((child.lineno, child.end_lineno or child.lineno, name))
                if not isinstance(child, ast.ClassDef) and child.returns is not None:
                    self._annotation(child.returns)
            if isinstance(child, ast.arg) and child.annotation is not None:
                self._annotation(child.annotation)
            if isinstance(child, ast.AnnAssign):
                self._annotation(child.annotation)
            self._walk(child, name)

    def _annotation(self, node: ast.expr) -> None:
        start = (node.lineno, self._chars(node.lineno, node.col_offset))
        end_line = node.end_lineno or node.lineno
        self.annotations.append((start, (end_line, self._chars(end_line, node.end_col_offset or 0))))

    def _chars(self, line: int, byte_offset: int) -> int:
        """``ast`` columns count UTF-8 bytes; cosmic-ray's (parso's) count characters."""
        return len(self.lines[line - 1].encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))

    def definition(self, line: int) -> str:
        inner = "<module>"
        for first, last, name in self.definitions:
            if first <= line <= last:
                inner = name  # definitions are listed outer first, so the last match is the innermost
        return inner

    def in_annotation(self, start: tuple[int, int]) -> bool:
        return any(a <= start < b for a, b in self.annotations)


def describe(items: Iterable[WorkItem], root: Path) -> list[Mutant]:
    """A :class:`Mutant` for every single-mutation work item, in source order (file, line, column, operator,
    occurrence). Paths in the work items are relative to ``root``."""
    sources: dict[str, _Source] = {}
    found: list[dict[str, Any]] = []
    for item in items:
        (spec,) = item.mutations
        path = Path(spec.module_path).as_posix()
        source = sources.get(path) or sources.setdefault(path, _Source(root / path))
        line, column = spec.start_pos
        found.append(
            {
                "job_id": item.job_id,
                "path": path,
                "operator": spec.operator_name,
                "occurrence": spec.occurrence,
                "line": line,
                "column": column,
                "definition": source.definition(line),
                "text": source.lines[line - 1].strip(),
                "in_annotation": source.in_annotation((line, column)),
            }
        )
    found.sort(key=lambda f: (f["path"], f["line"], f["column"], f["operator"], f["occurrence"]))
    seen: Counter[str] = Counter()
    mutants: list[Mutant] = []
    for f in found:
        base = f"{f['path']}::{f['definition']}::{f['operator']}::{f['text']}"
        seen[base] += 1
        mutants.append(Mutant(**f, key=base if seen[base] == 1 else f"{base}#{seen[base]}"))
    return mutants
