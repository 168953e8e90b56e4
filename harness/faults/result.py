"""What one fault run produced: :class:`RunResult` (the plan, the history, the final read, the checkers'
report and the history hash). Made by :func:`harness.faults.injector.run_schedule`; read by the CLI, manifests,
campaigns, the shrinker and the Gherkin steps."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.faults.schedule_model import Fault
from harness.judge.checkers import CheckReport
from harness.judge.history import FinalRead, Op
from harness.records import Outcome, OutcomeStatus


@dataclass(frozen=True, slots=True)
class RunResult:
    """Everything one run produced.

    ``outcome``: how the run went. PASS: it played every round, took the final read, and no checker found a
    violation; FAIL: a checker found violations; ABORTED: the steady-state probes stopped it before its last round
    (liveness); ERROR: an error stopped it, or the final read failed. The reason of an ABORTED or ERROR outcome is
    :attr:`aborted`. Whether the run is judged correct is :attr:`passed`, which a run that stopped early may be.
    """

    seed: int
    schedule_digest: str
    faults: tuple[Fault, ...]
    history: tuple[Op, ...]
    final: FinalRead | None
    report: CheckReport
    history_hash: str
    rounds_played: int
    outcome: Outcome
    serial_counts: dict[str, dict[str, int]] = field(default_factory=dict)  # device → fault → frames hit

    @property
    def passed(self) -> bool:
        """The final read was taken and no checker found a violation (an aborted run may still pass: nothing it
        did was lost or wrong). A run whose final read failed cannot be judged and does not pass."""
        return self.final is not None and self.report.passed

    @property
    def aborted(self) -> str:
        """Why the run stopped early (the reason of its ABORTED or ERROR outcome); "" when it played to the end."""
        stopped = self.outcome.status in (OutcomeStatus.ABORTED, OutcomeStatus.ERROR)
        return self.outcome.reason if stopped else ""
