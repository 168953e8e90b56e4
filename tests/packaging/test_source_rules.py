"""Two rules of the harness's source, read from its syntax trees: an optional capability is asked for with
``isinstance`` on its Protocol, never probed by name with ``getattr``/``hasattr``; and a round status or a bet result
is compared as its enum, never as a string literal (a misspelt literal compares unequal forever, silently)."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

import harness
import harness.bench.adapters.capabilities as adapter_capabilities
import harness.wire.dialects.capabilities as dialect_capabilities
import harness.wire.transports.capabilities as transport_capabilities
from harness.records import BetResult, RoundStatus

ROOT = Path(harness.__file__).parent


def _capability_members() -> set[str]:
    members: set[str] = set()
    for module in (adapter_capabilities, transport_capabilities, dialect_capabilities):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if getattr(cls, "_is_protocol", False) and cls.__module__ == module.__name__:
                for klass in cls.__mro__:
                    if klass.__module__ == module.__name__:
                        members |= {n for n in vars(klass) if not n.startswith("_")}
                        members |= set(getattr(klass, "__annotations__", {}))
    return members


def _trees() -> Iterator[tuple[Path, ast.AST]]:
    for path in sorted(ROOT.rglob("*.py")):
        yield path, ast.parse(path.read_text("utf-8"), str(path))


def capability_probes(tree: ast.AST, members: set[str]) -> list[str]:
    """Each ``getattr(x, "m", ...)`` / ``hasattr(x, "m")`` whose ``m`` is a capability's member."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in members
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def literal_status_comparisons(tree: ast.AST) -> list[str]:
    """Each comparison with a string literal that spells a round status or a bet result."""
    spelt = {s.value for s in RoundStatus} | {r.value for r in BetResult}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
            if any(isinstance(i, ast.Constant) and i.value in spelt for i in items):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_capability_members_are_found() -> None:
    members = _capability_members()
    assert {"kill_server", "can_restart", "event_watchers", "unplug", "replug", "inner"} <= members


def test_no_capability_is_probed_by_name() -> None:
    members = _capability_members()
    found = {str(p.relative_to(ROOT)): capability_probes(t, members) for p, t in _trees()}
    assert {p: f for p, f in found.items() if f} == {}


def test_no_round_status_or_bet_result_is_compared_as_a_literal() -> None:
    found = {str(p.relative_to(ROOT)): literal_status_comparisons(t) for p, t in _trees()}
    assert {p: f for p, f in found.items() if f} == {}


def test_the_scans_see_what_they_forbid() -> None:
    planted = ast.parse(
        "if getattr(adapter, 'kill_server', None): pass\n"
        "ok = row.result == 'refund' or status in ('void', 'cancelled')\n"
    )
    assert len(capability_probes(planted, _capability_members())) == 1
    assert len(literal_status_comparisons(planted)) == 2
