"""The committed list of equivalent mutants (``mutation/equivalents.yaml``): mutants no test can kill because the
program behaves the same, each with a one-line justification. They are not run and do not count in the score.

The file has two lists, both optional::

    rules:                      # whole classes of mutants
      - operator: REGEX         # the cosmic-ray operator names it matches (fully), e.g. core/NumberReplacer
        path: REGEX             # optional: only in these files (matched fully against the path, e.g. gameserver/.*)
        why: one line
      - in_annotation: true     # every mutant inside a type annotation
        why: one line
    mutants:                    # single mutants, by their stable key (mutation.mutants)
      - key: "gameserver/engine.py::RoundEngine.tick::core/NumberReplacer::x = 0 -> x = 1"
        why: one line
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mutation.mutants import Mutant

#: The committed list, beside this module.
DEFAULT = Path(__file__).resolve().parent / "equivalents.yaml"


class EquivalentsError(ValueError):
    """The equivalents file is not what the module docstring describes; the message names the entry."""


@dataclass(frozen=True)
class Rule:
    """A class of equivalent mutants: by operator name (and optionally path), or every mutant in an annotation."""

    why: str
    operator: re.Pattern[str] | None = None
    path: re.Pattern[str] | None = None
    in_annotation: bool = False

    def matches(self, mutant: Mutant) -> bool:
        if self.in_annotation and not mutant.in_annotation:
            return False
        if self.operator is not None and not self.operator.fullmatch(mutant.operator):
            return False
        return self.path is None or bool(self.path.fullmatch(mutant.path))


@dataclass(frozen=True)
class Equivalents:
    """The rules and the single mutants (key -> why) of an equivalents file."""

    rules: list[Rule] = field(default_factory=list)
    mutants: dict[str, str] = field(default_factory=dict)

    def why(self, mutant: Mutant) -> str | None:
        """The justification if ``mutant`` is listed as equivalent (its key first, then the rules), else None."""
        if mutant.key in self.mutants:
            return self.mutants[mutant.key]
        for rule in self.rules:
            if rule.matches(mutant):
                return rule.why
        return None

    def stale(self, mutants: list[Mutant]) -> list[str]:
        """The listed keys that name none of ``mutants`` (the code changed under them: fix or drop the entry)."""
        keys = {m.key for m in mutants}
        return [key for key in self.mutants if key not in keys]


def load(path: Path = DEFAULT) -> Equivalents:
    """Read an equivalents file. A missing file is an empty list.

    Raises:
        EquivalentsError: not YAML, an unknown field, a rule or mutant without ``why``, a rule that selects nothing
            (no ``operator`` and no ``in_annotation``), a regular expression that does not compile, a key listed
            twice. The message names the file and the entry.
    """
    if not path.exists():
        return Equivalents()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise EquivalentsError(f"{path}: not YAML ({exc})") from None
    if not isinstance(data, dict) or set(data) - {"rules", "mutants"}:
        raise EquivalentsError(f"{path}: expected a mapping with 'rules' and/or 'mutants'")
    rules = [_rule(path, i, entry) for i, entry in enumerate(data.get("rules") or [], 1)]
    mutants: dict[str, str] = {}
    for i, entry in enumerate(data.get("mutants") or [], 1):
        where = f"{path}: mutants entry {i}"
        _fields(where, entry, {"key", "why"})
        key = entry.get("key")
        if not isinstance(key, str) or not key:
            raise EquivalentsError(f"{where}: 'key' must be a mutant's key (see docs/mutation.md)")
        if key in mutants:
            raise EquivalentsError(f"{where}: key listed twice: {key}")
        mutants[key] = _why(where, entry)
    return Equivalents(rules, mutants)


def _rule(path: Path, index: int, entry: Any) -> Rule:
    where = f"{path}: rules entry {index}"
    _fields(where, entry, {"operator", "path", "in_annotation", "why"})
    in_annotation = entry.get("in_annotation", False)
    if not isinstance(in_annotation, bool):
        raise EquivalentsError(f"{where}: 'in_annotation' must be true or false")
    if "operator" not in entry and not in_annotation:
        raise EquivalentsError(f"{where}: a rule needs 'operator' or 'in_annotation: true'")
    return Rule(_why(where, entry), _regex(where, entry, "operator"), _regex(where, entry, "path"), in_annotation)


def _fields(where: str, entry: Any, allowed: set[str]) -> None:
    if not isinstance(entry, dict):
        raise EquivalentsError(f"{where}: expected a mapping with {', '.join(sorted(allowed))}")
    unknown = set(entry) - allowed
    if unknown:
        raise EquivalentsError(f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")


def _why(where: str, entry: dict[str, Any]) -> str:
    why = entry.get("why")
    if not isinstance(why, str) or not why.strip():
        raise EquivalentsError(f"{where}: 'why' must say in one line why no test can kill it")
    return why.strip()


def _regex(where: str, entry: dict[str, Any], name: str) -> re.Pattern[str] | None:
    if name not in entry:
        return None
    try:
        return re.compile(str(entry[name]))
    except re.error as exc:
        raise EquivalentsError(f"{where}: '{name}' is not a regular expression ({exc})") from None
