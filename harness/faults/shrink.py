"""Shrinking: a hypothesis rule-based exploration that grows fault schedules against a bench (normally the
in-process one) and, when a run breaks a checker, shrinks the schedule to a minimal one, written as YAML.

The state machine's rules add one fault each (kind, target, round, phase, duration drawn from strategies) or
run the schedule built so far and assert that every checker passes. Hypothesis shrinks a failing rule sequence
to the fewest, simplest steps; the last failing schedule it runs is that minimal one (hypothesis replays the
minimal example last), and :func:`explore` writes it out and checks that it replays the failure.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.bench.config import Bench
from harness.errors import require_extra
from harness.faults.injector import run_schedule
from harness.faults.kinds import SERIAL, SPECS
from harness.faults.result import RunResult
from harness.faults.schedule_model import DEVICES, PHASES, Fault, FaultKind, Schedule, Trigger


@dataclass
class Exploration:
    """What an exploration found: the minimal failing schedule (None when none failed), where it was written,
    its replay's result, and how many runs the exploration took."""

    minimal: Schedule | None = None
    path: Path | None = None
    replay: RunResult | None = None
    runs: int = 0
    failing: list[Schedule] = field(default_factory=list)


def _fault(kind: FaultKind, target: str, rnd: int, phase: str, duration: float) -> Fault:
    """An explored fault of ``kind``: its family's fixed target, else ``target`` when it suits the family (a
    device for a serial kind, ``all`` or a player otherwise; ``reader`` or ``all`` when it does not); one-round
    incidents start on entering ``betting_open`` and last no time; each parameter takes its explored value."""
    spec = SPECS[kind]
    values = {p.name: p.explored for p in spec.params}
    if not spec.family.lasting:
        return Fault(kind, Trigger(rnd, "betting_open"), spec.family.fixed_target).with_params(values)
    if spec.family.fixed_target:
        target = spec.family.fixed_target
    elif spec.family == SERIAL:
        target = target if target in DEVICES else "reader"
    elif target in DEVICES:
        target = "all"
    return Fault(kind, Trigger(rnd, phase), target, duration).with_params(values)


def explore(
    bench: Bench,
    base: Schedule,
    kinds: tuple[FaultKind, ...],
    out: Path,
    *,
    adapter: str | None = None,
    max_examples: int = 40,
    steps: int = 6,
) -> Exploration:
    """Explore schedules made of ``kinds`` on top of ``base`` (its own faults and random part are dropped);
    write the minimal failing schedule to ``out`` and replay it once. Deterministic (derandomized).

    Raises:
        MissingExtra: hypothesis (the ``certify`` extra) is not installed.
    """
    require_extra("certify", {"hypothesis": "hypothesis"}, "xocdia-hil inject --explore")
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

    found = Exploration()
    players = ("all", *base.player_ids)
    targets = st.sampled_from(players + DEVICES)

    class Faults(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.faults: list[Fault] = []

        @rule(
            kind=st.sampled_from(kinds),
            who=targets,
            rnd=st.integers(1, base.rounds),
            phase=st.sampled_from(PHASES),
            duration=st.sampled_from((0.5, 1.0, 0.2, 2.0)),
        )
        def add_fault(self, kind: FaultKind, who: str, rnd: int, phase: str, duration: float) -> None:
            self.faults.append(_fault(kind, who, rnd, phase, duration))

        @rule()
        def run_and_check(self) -> None:
            schedule = replace(base, faults=tuple(self.faults), random=None, source="shrunk")
            found.runs += 1
            result = run_schedule(bench, schedule, adapter=adapter)
            if not result.report.passed:
                found.failing.append(schedule)
                raise AssertionError("\n".join(str(v) for v in result.report.violations))

    config = settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),  # no "explain": it traces every line (slow)
    )
    with contextlib.suppress(AssertionError):
        run_state_machine_as_test(Faults, settings=config)
    if not found.failing:
        return found
    minimal = found.failing[-1]
    out.parent.mkdir(parents=True, exist_ok=True)
    header = "# Minimal failing fault schedule found by xocdia-hil shrinking; replay:\n"
    header += f"#   xocdia-hil inject --bench {bench.name} --schedule {out.name}\n"
    out.write_text(header + minimal.to_yaml(), encoding="utf-8")
    found.minimal, found.path = minimal, out
    found.replay = run_schedule(bench, minimal, adapter=adapter)
    return found
