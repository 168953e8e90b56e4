"""What one fault run produced: :class:`RunResult` (the plan, the history, the final read, the checkers'
report and the history hash). Made by :func:`harness.faults.injector.run_schedule`; read by the CLI, manifests,
campaigns, the shrinker and the Gherkin steps."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.faults.schedule_model import Fault
from harness.judge.checkers import CheckReport
from harness.judge.history import FinalRead, Op


@dataclass(frozen=True, slots=True)
class RunResult:
    """Everything one run produced. ``aborted`` is empty when the run played every round."""

    seed: int
    schedule_digest: str
    faults: tuple[Fault, ...]
    history: tuple[Op, ...]
    final: FinalRead | None
    report: CheckReport
    history_hash: str
    rounds_played: int
    aborted: str = ""
    serial_counts: dict[str, dict[str, int]] = field(default_factory=dict)  # device → fault → frames hit

    @property
    def passed(self) -> bool:
        """The final read was taken and no checker found a violation (an aborted run may still pass: nothing it
        did was lost or wrong). A run whose final read failed cannot be judged and does not pass."""
        return self.final is not None and self.report.passed
