"""Which scenarios can kill a mutant: the unmutated suite's per-scenario coverage of the mutated line.

A scenario that never runs a line cannot behave differently when that line is mutated, so a mutant is run against
exactly the scenarios whose run (setup, call, teardown) executed its statement. Three cases:

- the mutation sits inside a function's body: the scenarios that ran the statement it is in (from the statement's
  first line to the mutation's last line, so a multi-line statement or a compound statement's header counts whole);
  when none did, no scenario can kill it (:data:`UNREACHED`);
- it sits outside every function body (a module constant, a class attribute, a decorator, a default argument), or
  its statement also ran outside any scenario (at import or collection): run at import, it can change every
  scenario, so the whole suite runs (:data:`WHOLE_SUITE`);
- coverage saw no line of the mutated file at all: :class:`SelectionError` (the suite does not run that code in the
  pytest process, and selecting by coverage would be unsound).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import coverage

#: The selection of a mutant that every scenario may kill: run the whole suite.
WHOLE_SUITE: tuple[str, ...] = ()
#: The selection of a mutant that no scenario runs.
UNREACHED = None


class SelectionError(Exception):
    """Coverage of the unmutated suite cannot say which scenarios run a mutated file."""


@dataclass(frozen=True)
class _Spans:
    """One source file's function bodies (first, last line) and statements (first, last line)."""

    bodies: tuple[tuple[int, int], ...]
    statements: tuple[tuple[int, int], ...]

    @classmethod
    def parse(cls, path: Path) -> _Spans:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bodies, statements = [], []
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                bodies.append((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno))
            if isinstance(node, ast.stmt):
                statements.append((node.lineno, node.end_lineno or node.lineno))
        return cls(tuple(bodies), tuple(statements))

    def in_body(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.bodies)

    def statement_start(self, line: int) -> int:
        """The first line of the innermost statement that holds ``line`` (the one starting last)."""
        return max((first for first, last in self.statements if first <= line <= last), default=line)


class Coverage:
    """The baseline's per-scenario line coverage of the mutated files, read from coverage's data file ``data``;
    ``root`` is the tree the baseline ran in (mutant paths are relative to it)."""

    def __init__(self, data: Path, root: Path) -> None:
        covdata = coverage.CoverageData(basename=str(data))
        covdata.read()
        self._lines: dict[str, dict[int, set[str]]] = {}
        for measured in covdata.measured_files():
            path = Path(measured)
            if not path.is_relative_to(root):
                continue
            by_line = covdata.contexts_by_lineno(measured)
            self._lines[path.relative_to(root).as_posix()] = {n: set(c) for n, c in by_line.items()}
        self._root = root
        self._spans: dict[str, _Spans] = {}

    def scenarios(self, path: str, first_line: int, last_line: int) -> tuple[str, ...] | None:
        """The node ids (sorted) of the scenarios that ran the mutation at ``first_line``..``last_line`` of
        ``path``; :data:`WHOLE_SUITE` when any scenario may be affected; :data:`UNREACHED` when none ran it.

        Raises:
            SelectionError: coverage recorded no line of ``path``.
        """
        lines = self._lines.get(path)
        if not lines:
            raise SelectionError(f"coverage of the unmutated suite saw no line of {path}: it is not run in-process")
        spans = self._spans.get(path) or self._spans.setdefault(path, _Spans.parse(self._root / path))
        if not spans.in_body(first_line):
            return WHOLE_SUITE
        contexts: set[str] = set()
        for line in range(spans.statement_start(first_line), max(first_line, last_line) + 1):
            contexts |= lines.get(line, set())
        if "" in contexts:
            return WHOLE_SUITE
        return tuple(sorted(contexts)) if contexts else UNREACHED
