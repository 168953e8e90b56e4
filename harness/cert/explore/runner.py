"""Running Gherkin step lines without pytest: each line is matched against the shipped step definitions (their
pytest-bdd parsers, as pytest-bdd matches them) and its function is called with the scenario's context. What the
explorer plays is therefore exactly what the written ``.feature`` file replays under ``certify``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from _pytest.outcomes import Skipped
from pytest_bdd.steps import step_function_context_registry

from harness.cert.steps import bets, corrections, devices, money, oracle, players, reports, rounds, server, table
from harness.cert.steps.context import NOT_APPLICABLE, CertContext

#: The step modules whose phrases a generated scenario may use (the players, the table, rounds, bets, money, the
#: oracle, corrections, server restarts, the table's late and lost reports, device lines).
MODULES = (players, table, rounds, bets, money, oracle, corrections, server, reports, devices)
KEYWORDS = ("Given", "When", "Then")


class NotApplicable(Exception):
    """A step ended the scenario as not applicable on this bench (what it needs, the bench cannot do)."""


class UnknownStep(ValueError):
    """A line no step definition matches, or more than one does."""


@dataclass(frozen=True, slots=True)
class StepLine:
    """One step of a scenario: its keyword (``Given``, ``When``, ``Then``) and its text."""

    keyword: str
    text: str

    def __str__(self) -> str:
        return f"{self.keyword} {self.text}"


@dataclass(frozen=True, slots=True)
class _Definition:
    kind: str
    parser: Any
    func: Callable[..., Any]
    converters: Mapping[str, Callable[[str], Any]]


class StepRunner:
    """The step definitions of :data:`MODULES`, by keyword; :meth:`run` plays lines on a :class:`CertContext`."""

    def __init__(self) -> None:
        names = {m.__name__ for m in MODULES}
        self._defs: list[_Definition] = [
            _Definition(str(c.type), c.parser, c.step_func, dict(c.converters))
            for c in list(step_function_context_registry.values())
            if getattr(c.step_func, "__module__", "") in names
        ]

    def match(self, line: StepLine) -> tuple[Callable[..., Any], dict[str, Any]]:
        """The function of the one definition matching ``line``, and its arguments parsed from the text.

        Raises:
            UnknownStep: no definition matches, or several do.
        """
        kind = line.keyword.lower()
        found = [d for d in self._defs if d.kind == kind and d.parser.is_matching(line.text)]
        if len(found) != 1:
            raise UnknownStep(f"{line}: {'no step matches' if not found else f'{len(found)} steps match'}")
        definition = found[0]
        args = dict(definition.parser.parse_arguments(line.text) or {})
        for name, convert in definition.converters.items():
            if name in args:
                args[name] = convert(args[name])
        return definition.func, args

    def run(self, cert: CertContext, lines: Iterable[StepLine], fixtures: Mapping[str, Any] | None = None) -> None:
        """Play ``lines`` in order on ``cert``: what each step asserts raises as it would under pytest.

        Raises:
            NotApplicable: a step ended the scenario as not applicable on this bench.
            UnknownStep: a line matches no step definition.
        """
        extra = dict(fixtures or {})
        for line in lines:
            func, args = self.match(line)
            for name in inspect.signature(func).parameters:
                if name == "cert":
                    args[name] = cert
                elif name not in args:
                    if name not in extra:
                        raise UnknownStep(f"{line}: the step needs the fixture {name!r}, which the runner lacks")
                    args[name] = extra[name]
            try:
                func(**args)
            except Skipped as exc:
                raise NotApplicable(str(exc.msg).removeprefix(NOT_APPLICABLE)) from None
