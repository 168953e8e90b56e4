"""The default way a mutation run runs its killer: the certification suite under pytest, in worker processes that
import it once and fork a run per mutant (``mutation.worker``), each mutant against only the scenarios that can
kill it (``mutation.selection``).

Guarantees:

- :func:`baseline` runs the unmutated suite once, under coverage with a context per scenario; it must pass. It
  gives each scenario's seconds, the modules the suite imports and the per-scenario coverage.
- :func:`jobs` gives each mutant its pytest arguments (its scenarios, or the whole suite) and its time limit: three
  times its scenarios' seconds in the baseline plus :data:`START_S`, unless ``--timeout`` sets one for all. A mutant
  that no scenario reaches is still applied, for its diff, but not run; it is a survivor.
- :func:`run_forked` runs the jobs on ``jobs`` workers, each in its own copy of the tree, and hands each outcome to
  the caller as a cosmic-ray ``WorkResult`` (``output`` is ``timeout`` when the limit was hit, ``not reached`` for an
  unreached mutant).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkItem, WorkResult

from mutation import tree as trees
from mutation.mutants import Mutant
from mutation.pool import Job, Workers
from mutation.selection import UNREACHED, Coverage

#: The suite file, and pytest's options for every run (``{scenario_timeout}`` filled in).
SUITE = "harness/cert/steps/suite.py"
OPTIONS = "-x -q -p no:cacheprovider --bench fixtures/benches/in-process.yaml --scenario-timeout {scenario_timeout:g}"
#: Seconds added to each mutant's limit: a forked run's start (collection, the bench's set-up) on a loaded machine.
START_S = 30.0
#: The output recorded for a mutant no scenario reaches.
NOT_REACHED = "not reached: no scenario of the unmutated suite runs this line"


class BaselineError(Exception):
    """The unmutated suite failed, or coverage cannot select scenarios."""


@dataclass(frozen=True)
class Baseline:
    """The unmutated suite's run: each scenario's seconds (in the order run), the modules it imported, its
    coverage, and its wall seconds."""

    seconds: dict[str, float]
    modules_file: Path
    coverage: Coverage
    wall_s: float


def options(scenario_timeout: float) -> list[str]:
    """pytest's options for every run."""
    return OPTIONS.format(scenario_timeout=scenario_timeout).split()


def packages(modules: list[str]) -> list[str]:
    """The top-level packages (or modules) the mutated ``modules`` (paths relative to the tree) belong to: what the
    baseline measures and what the workers never import before a forked run."""
    return sorted({Path(m).parts[0].removesuffix(".py") for m in modules})


def baseline(tree: Path, work: Path, modules: list[str], scenario_timeout: float, timeout: float | None) -> Baseline:
    """Run the unmutated suite in ``tree`` (the current folder, :func:`mutation.tree.inside`) under coverage of the
    ``modules``' packages.

    Raises:
        BaselineError: it failed or ran past ``timeout``.
    """
    data, record = work / "coverage.data", work / "baseline.json"
    argv = [sys.executable, "-m", "coverage", "run", f"--data-file={data}", f"--source={','.join(packages(modules))}"]
    argv += ["-m", "pytest", SUITE, *options(scenario_timeout), "-p", "mutation.covplugin"]
    env = {**os.environ, "XOCDIA_MUTATE_BASELINE": str(record), "PYTHONDONTWRITEBYTECODE": "1"}
    print("mutate: the unmutated suite first, under coverage ...", flush=True)
    wall = run_unmutated(argv, timeout, env)
    seconds = json.loads(record.read_text(encoding="utf-8"))["seconds"]
    print(f"mutate: the unmutated suite passes: {len(seconds)} scenarios in {wall:.0f} s", flush=True)
    return Baseline(seconds, record, Coverage(data, tree), wall)


def run_unmutated(argv: list[str], timeout: float | None, env: dict[str, str] | None = None) -> float:
    """Run the unmutated killer ``argv``; returns its wall seconds.

    Raises:
        BaselineError: it failed (every mutant would look killed) or ran past ``timeout``.
    """
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise BaselineError(f"the unmutated suite ran past --timeout {timeout:g} s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise BaselineError(f"the unmutated suite fails (exit {done.returncode}); fix that first:\n{tail}")
    return time.monotonic() - started


def jobs(
    mutants: list[Mutant],
    items: dict[str, WorkItem],
    base: Baseline,
    scenario_timeout: float,
    timeout: float | None,
    select: bool,
) -> list[Job]:
    """One job per mutant (the module docstring's contract); ``select`` False runs the whole suite for each."""
    out: list[Job] = []
    total = sum(base.seconds.values())
    for m in mutants:
        (spec,) = items[m.job_id].mutations
        chosen: tuple[str, ...] | None = ()
        if select:
            chosen = base.coverage.scenarios(m.path, spec.start_pos[0], spec.end_pos[0])
        seconds = total if not chosen else sum(base.seconds.get(n, 0.0) for n in chosen)
        request = {
            "path": m.path,
            "operator": spec.operator_name,
            "occurrence": spec.occurrence,
            "args": [*(chosen or [SUITE]), *options(scenario_timeout)],
            "timeout": timeout or round(3 * seconds + START_S, 1),
            "run": chosen is not UNREACHED,
        }
        count = 0 if chosen is UNREACHED else len(chosen) if chosen else None
        out.append({"mutant": m, "request": request, "scenarios": count})
    return out


def result_of(reply: dict[str, Any]) -> WorkResult:
    """A worker's reply as cosmic-ray's ``WorkResult``."""
    outcome, output, diff = reply["outcome"], reply.get("output", ""), reply.get("diff", "")
    if outcome == "error":
        return WorkResult(WorkerOutcome.EXCEPTION, output, TestOutcome.INCOMPETENT, diff)
    if outcome == "no_test":
        return WorkResult(WorkerOutcome.NO_TEST, output, None, diff)
    if outcome == "not_run":
        return WorkResult(WorkerOutcome.NORMAL, NOT_REACHED, TestOutcome.SURVIVED, diff)
    tested = TestOutcome.SURVIVED if outcome == "survived" else TestOutcome.KILLED
    return WorkResult(WorkerOutcome.NORMAL, output, tested, diff)


def run_forked(
    tree: Path,
    work: Path,
    count: int,
    base: Baseline,
    todo: list[Job],
    done: Callable[[Job, WorkResult], None],
) -> None:
    """Run ``todo`` on ``count`` workers (copies of the prepared ``tree`` made under ``work``)."""
    copies = [tree] + [work / f"tree{i}" for i in range(1, max(1, count))]
    for copy in copies[1:]:
        trees.clone(tree, copy)
    blocked = packages([job["mutant"].path for job in todo])
    with Workers(copies, base.modules_file, blocked) as workers:
        workers.run(todo, lambda job, reply: done({**job, "seconds": reply.get("seconds", 0.0)}, result_of(reply)))
