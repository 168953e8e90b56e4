"""Campaigns: one schedule swept over many seeds, on a local process pool or a Dask distributed cluster, behind
one :class:`Executor` interface; verdicts aggregated with the failing seeds.

The work item is :func:`run_seed` (a module-level function: picklable, importable on a Dask worker), sent to a Dask
cluster in chunks of seeds (:func:`run_seeds`), a bounded number of chunks in flight. Workers need this package
installed, at the client's version and with the client's code (:func:`code_identity`, checked on every worker
before any seed runs); the bench is named by path or shipped name, the schedule travels as its text.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from harness.bench.config import load_bench
from harness.errors import InputError, XocdiaError
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


def run_seed(bench_ref: str, schedule_text: str, seed: int, dialect: str | None = None) -> SeedOutcome:
    """Run one seed on the bench ``bench_ref`` (its table speaking ``dialect`` instead of its file's, when given);
    never raises for a server's misbehaviour (it becomes violations), nor for a planned fault the
    bench cannot apply (the outcome says ``refused``: e.g. a randomly drawn serial fault on a bench without serial
    faults)."""
    try:
        result = run_schedule(load_bench(bench_ref, dialect), schedule_from_text(schedule_text), seed)
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


def run_seeds(
    bench_ref: str, schedule_text: str, seeds: Sequence[int], dialect: str | None = None
) -> list[SeedOutcome]:
    """:func:`run_seed` for each of ``seeds``, in order: one Dask task for a chunk of seeds."""
    return [run_seed(bench_ref, schedule_text, seed, dialect) for seed in seeds]


_CODE_PACKAGES = ("harness", "simulator", "gameserver")  # what a seed runs


@cache
def code_identity() -> tuple[str, str]:
    """This process's (package version, code digest): the installed ``xocdia-hil`` version ("unknown" when it is
    not installed as a distribution) and the SHA-256 of the source files of the packages a seed runs (their paths
    under the package root and their bytes, in path order). Two processes with the same identity run the same
    code, so a seed gives the same verdict and history hash on either."""
    try:
        version = importlib.metadata.version("xocdia-hil")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for package in _CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return version, digest.hexdigest()


class CampaignError(XocdiaError):
    """A campaign that cannot go on: its cluster's workers run other code than this client, or every worker was
    lost for longer than the executor waits."""


class Executor(Protocol):
    """Runs :func:`run_seed` for many seeds, yielding outcomes as they finish (any order)."""

    def map_seeds(
        self, bench_ref: str, schedule_text: str, seeds: Sequence[int], dialect: str | None = None
    ) -> Iterator[SeedOutcome]: ...


class LocalExecutor:
    """A process pool of ``workers`` processes on this machine (1: in this process, no pool)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def map_seeds(
        self, bench_ref: str, schedule_text: str, seeds: Sequence[int], dialect: str | None = None
    ) -> Iterator[SeedOutcome]:
        if self.workers == 1:
            for seed in seeds:
                yield run_seed(bench_ref, schedule_text, seed, dialect)
            return
        with ProcessPoolExecutor(max_workers=self.workers) as pool:
            futures = [pool.submit(run_seed, bench_ref, schedule_text, s, dialect) for s in seeds]
            for fut in as_completed(futures):
                yield fut.result()


class DaskExecutor:
    """A Dask distributed cluster: ``address`` (``tcp://HOST:PORT`` of a scheduler) or an existing cluster
    object (e.g. ``LocalCluster``).

    Guarantees: before any seed runs, every worker is asked its :func:`code_identity` and the campaign is refused
    (:class:`CampaignError`, naming the workers and what differs) unless all equal ``expect`` (default: this
    process's); seeds go out in chunks of ``chunk`` (default: about four chunks per worker, at most 1,000 seeds a
    chunk) with at most ``in_flight`` chunks (default: twice the workers) submitted at once, so a campaign of 10⁶
    seeds never builds a 10⁶-task graph; when the cluster has no worker (at the start, or every worker lost during
    the run) for ``lost_after_s`` seconds, the campaign fails with :class:`CampaignError` instead of waiting for
    one to come back."""

    def __init__(
        self,
        address: str | Any,
        *,
        chunk: int = 0,
        in_flight: int = 0,
        lost_after_s: float = 60.0,
        expect: tuple[str, str] | None = None,
    ) -> None:
        self.address = address
        self.chunk = chunk
        self.in_flight = in_flight
        self.lost_after_s = lost_after_s
        self.expect = expect

    def map_seeds(
        self, bench_ref: str, schedule_text: str, seeds: Sequence[int], dialect: str | None = None
    ) -> Iterator[SeedOutcome]:
        from distributed import Client, wait

        with Client(self.address, timeout="30s") as client:  # type: ignore[no-untyped-call]
            workers = self._workers(client)
            self._check_identity(client)
            size = self.chunk or max(1, min(1000, -(-len(seeds) // (4 * workers))))
            chunks = [list(seeds[i : i + size]) for i in range(0, len(seeds), size)]
            window = self.in_flight or 2 * workers
            pending: set[Any] = set()
            queued = iter(chunks)
            lost_since: float | None = None
            while True:
                while len(pending) < window:
                    part = next(queued, None)
                    if part is None:
                        break
                    pending.add(client.submit(run_seeds, bench_ref, schedule_text, part, dialect, pure=False))
                if not pending:
                    return
                try:
                    done, pending = wait(pending, timeout=1.0, return_when="FIRST_COMPLETED")  # type: ignore[no-untyped-call]
                except TimeoutError:  # nothing finished within the poll: is anyone still working?
                    done = set()
                for fut in done:
                    yield from fut.result()
                if done or client.scheduler_info().get("workers"):
                    lost_since = None
                    continue
                lost_since = time.monotonic() if lost_since is None else lost_since
                if time.monotonic() - lost_since > self.lost_after_s:
                    for fut in pending:
                        fut.cancel()
                    raise CampaignError(
                        f"campaign on {self._where()}: every worker lost for {self.lost_after_s:g} s with "
                        f"{len(pending)} chunks of seeds unfinished; restart workers and rerun the campaign"
                    )

    def _where(self) -> str:
        return self.address if isinstance(self.address, str) else type(self.address).__name__

    def _workers(self, client: Any) -> int:
        """How many workers the cluster has, waiting up to ``lost_after_s`` for the first. Raises CampaignError."""
        try:
            client.wait_for_workers(1, timeout=self.lost_after_s)
        except TimeoutError:
            raise CampaignError(
                f"campaign on {self._where()}: no worker joined the cluster within {self.lost_after_s:g} s"
            ) from None
        return max(1, len(client.scheduler_info().get("workers", {})))

    def _check_identity(self, client: Any) -> None:
        """Refuse a cluster any of whose workers runs another version or other code. Raises CampaignError."""
        want = self.expect or code_identity()
        seen: dict[str, tuple[str, str]] = {w: tuple(i) for w, i in client.run(code_identity).items()}
        wrong = {w: i for w, i in seen.items() if i != want}
        if wrong:
            lines = [f"{w}: version {i[0]}, code {i[1][:12]}" for w, i in sorted(wrong.items())]
            raise CampaignError(
                f"campaign on {self._where()} refused: {len(wrong)} of {len(seen)} workers differ from this client "
                f"(version {want[0]}, code {want[1][:12]}): " + "; ".join(lines)
            )


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
    dialect: str | None = None,
) -> CampaignSummary:
    """Run every seed on the bench ``bench_ref`` (its table speaking ``dialect`` instead of its file's, when
    given); ``on_outcome(outcome, done)`` after each. Outcomes are returned sorted by seed."""
    got: list[SeedOutcome] = []
    for outcome in executor.map_seeds(bench_ref, schedule_text, seeds, dialect):
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
