"""Campaigns: one schedule swept over many seeds, on a local process pool or a Dask distributed cluster, behind
one :class:`Executor` interface; verdicts aggregated with the failing seeds.

The work item is :func:`run_seed` (a module-level function: picklable, importable on a Dask worker). Workers
need this package installed; the bench is named by path or shipped name, the schedule travels as its text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol

from harness.bench.config import load_bench
from harness.errors import InputError
from harness.faults.injector import run_schedule
from harness.faults.prepare import InjectionRefused
from harness.faults.schedule import schedule_from_text
from harness.records import Outcome, OutcomeStatus


@dataclass(frozen=True, slots=True)
class SeedOutcome:
    """One seed's verdict (what travels back from a worker). ``outcome``: the run's
    (:attr:`harness.faults.result.RunResult.outcome`), or REFUSED when the bench cannot run this seed's planned
    faults (the seed did not run). ``passed``: the run's ledger verdict (an aborted run may still pass)."""

    seed: int
    outcome: Outcome
    passed: bool
    violations: tuple[str, ...]
    history_hash: str
    rounds: int

    @property
    def aborted(self) -> str:
        """Why the run stopped early (its ABORTED or ERROR outcome's reason); "" when it played to the end."""
        stopped = self.outcome.status in (OutcomeStatus.ABORTED, OutcomeStatus.ERROR)
        return self.outcome.reason if stopped else ""

    @property
    def refused(self) -> str:
        """Why the seed did not run (its REFUSED outcome's reason); "" when it ran."""
        return self.outcome.reason if self.outcome.status is OutcomeStatus.REFUSED else ""


def run_seed(bench_ref: str, schedule_text: str, seed: int) -> SeedOutcome:
    """Run one seed; never raises for a server's misbehaviour (it becomes violations), nor for a planned fault the
    bench cannot apply (the outcome says ``refused``: e.g. a randomly drawn serial fault on a bench without serial
    faults)."""
    try:
        result = run_schedule(load_bench(bench_ref), schedule_from_text(schedule_text), seed)
    except InjectionRefused as exc:
        return SeedOutcome(seed, Outcome.refused(str(exc)), False, (), "", 0)
    return SeedOutcome(
        seed,
        result.outcome,
        result.passed,
        tuple(str(v) for v in result.report.violations),
        result.history_hash,
        result.rounds_played,
    )


class Executor(Protocol):
    """Runs :func:`run_seed` for many seeds, yielding outcomes as they finish (any order)."""

    def map_seeds(self, bench_ref: str, schedule_text: str, seeds: Sequence[int]) -> Iterator[SeedOutcome]: ...


class LocalExecutor:
    """A process pool of ``workers`` processes on this machine (1: in this process, no pool)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def map_seeds(self, bench_ref: str, schedule_text: str, seeds: Sequence[int]) -> Iterator[SeedOutcome]:
        if self.workers == 1:
            for seed in seeds:
                yield run_seed(bench_ref, schedule_text, seed)
            return
        with ProcessPoolExecutor(max_workers=self.workers) as pool:
            futures = [pool.submit(run_seed, bench_ref, schedule_text, s) for s in seeds]
            for fut in as_completed(futures):
                yield fut.result()


class DaskExecutor:
    """A Dask distributed cluster: ``address`` (``tcp://HOST:PORT`` of a scheduler) or an existing cluster
    object (e.g. ``LocalCluster``)."""

    def __init__(self, address: str | Any) -> None:
        self.address = address

    def map_seeds(self, bench_ref: str, schedule_text: str, seeds: Sequence[int]) -> Iterator[SeedOutcome]:
        from distributed import Client
        from distributed import as_completed as dask_completed

        with Client(self.address, timeout="30s") as client:  # type: ignore[no-untyped-call]
            futures = client.map(run_seed, [bench_ref] * len(seeds), [schedule_text] * len(seeds), list(seeds),
                                 pure=False)  # fmt: skip
            for fut in dask_completed(futures):  # type: ignore[no-untyped-call]
                yield fut.result()


@dataclass(frozen=True, slots=True)
class CampaignSummary:
    outcomes: tuple[SeedOutcome, ...]

    @property
    def failing(self) -> list[SeedOutcome]:
        """Seeds that ran and failed a check."""
        return [o for o in self.outcomes if not o.passed and o.outcome.status is not OutcomeStatus.REFUSED]

    @property
    def refused(self) -> list[SeedOutcome]:
        """Seeds that did not run: the bench cannot apply one of their planned faults."""
        return [o for o in self.outcomes if o.outcome.status is OutcomeStatus.REFUSED]

    @property
    def aborted(self) -> list[SeedOutcome]:
        return [o for o in self.outcomes if o.aborted]

    @property
    def rounds(self) -> int:
        return sum(o.rounds for o in self.outcomes)


def run_campaign(
    executor: Executor,
    bench_ref: str,
    schedule_text: str,
    seeds: Sequence[int],
    on_outcome: Callable[[SeedOutcome, int], None] | None = None,
) -> CampaignSummary:
    """Run every seed; ``on_outcome(outcome, done)`` after each. Outcomes are returned sorted by seed."""
    got: list[SeedOutcome] = []
    for outcome in executor.map_seeds(bench_ref, schedule_text, seeds):
        got.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome, len(got))
    return CampaignSummary(tuple(sorted(got, key=lambda o: o.seed)))


def parse_seeds(text: str) -> list[int]:
    """``"1-1000"``, ``"7"`` or ``"1,5,9-12"`` → seeds. Raises InputError naming the bad part."""
    seeds: list[int] = []
    for part in text.split(","):
        a, dash, b = part.strip().partition("-")
        try:
            lo, hi = int(a), int(b) if dash else int(a)
        except ValueError:
            raise InputError(f"--seeds: {part.strip()!r} is not N or N-M (whole numbers)") from None
        if lo < 0 or hi < lo:
            raise InputError(f"--seeds: {part.strip()!r} must be N-M with 0 <= N <= M")
        seeds.extend(range(lo, hi + 1))
    return seeds
