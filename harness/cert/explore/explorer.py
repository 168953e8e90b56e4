"""Exploration: run the state machine (:mod:`harness.cert.explore.machine`) for N tables from a seed, shrink the
first failing table to a minimal one (Hypothesis), write it as a ``.feature`` file of shipped steps tagged with the
clause that failed, and replay that file to show it fails the same way.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.stateful import run_state_machine_as_test

from harness.bench.config import Bench
from harness.cert.explore.machine import Exploration, Table, judged, machine_for
from harness.judge.checks import Check, ClauseFailure

#: Rule steps per table at most (Hypothesis' ``stateful_step_count``).
STEPS = 30


@dataclass
class Outcome:
    """What an exploration found: how many tables it played (and how fast), every check their verdicts ran, and
    the minimal failing table, where it was written, and the failure its replay showed (None: all passed)."""

    tables: int
    seconds: float
    cpu_seconds: float
    checks: list[Check] = field(default_factory=list)
    minimal: Table | None = None
    found: Table | None = None  # the failing table Hypothesis shrank to, before :func:`minimize`
    path: Path | None = None
    replayed: ClauseFailure | None = None
    fresh: list[str] | None = None  # the clauses a fresh ``certify`` of the written file failed ([]: it passed)

    @property
    def per_second(self) -> float:
        return self.tables / self.seconds if self.seconds > 0 else 0.0


def explore(bench: Bench, examples: int, root_seed: int, out: Path | None, command: str = "") -> Outcome:
    """Play ``examples`` tables on ``bench`` from ``root_seed``; on a failure shrink it, write the minimal table to
    a ``.feature`` file in ``out`` (when given) and replay it there. ``command`` is how the file's header says to
    replay it (``{path}`` is replaced by the file's folder). Deterministic for a seed on the in-process bench."""
    exploration = Exploration(bench)
    config = settings(
        max_examples=examples,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        phases=(Phase.generate, Phase.shrink),
    )
    start, cpu = time.perf_counter(), time.process_time()
    machine = seed(root_seed)(machine_for(exploration))
    try:
        with _drawn_from_the_seed_alone():
            run_state_machine_as_test(machine, settings=config)
    except Exception as exc:  # the minimal failing table is the last one that failed
        if not exploration.failing:
            raise
        del exc
    outcome = Outcome(exploration.tables, time.perf_counter() - start, time.process_time() - cpu, exploration.checks)
    if not exploration.failing:
        return outcome
    outcome.found = exploration.failing[-1]
    minimal = minimize(exploration, outcome.found)
    outcome.minimal = minimal
    if out is not None:
        outcome.path = write_feature(minimal, out, bench, root_seed, command)
    outcome.replayed = replay(exploration, minimal)
    if outcome.path is not None:
        outcome.fresh = certify_alone(outcome.path, bench)
    return outcome


@contextlib.contextmanager
def _drawn_from_the_seed_alone() -> Iterator[None]:
    """Hypothesis mixes into its draws constants it reads from the source of every module loaded outside
    site-packages, and caches them in ``.hypothesis/`` of the working directory: the same seed would then draw
    other tables in certify's worker, in a test or from an installed wheel, and a lab's folder would get a cache.
    Inside this block it draws from the seed alone (no such constants: its private hook replaced, and left alone
    where a Hypothesis release no longer has it) and keeps its files in a temporary folder."""
    providers: Any = importlib.import_module("hypothesis.internal.conjecture.providers")
    constants: Any = importlib.import_module("hypothesis.internal.constants_ast")
    hook = getattr(providers, "_get_local_constants", None)
    found = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)  # the pools drawn from them
    cache: dict[Any, Any] = found if isinstance(found, dict) else {}
    patch = hook is not None and isinstance(found, dict) and hasattr(constants, "Constants")
    with tempfile.TemporaryDirectory(prefix="xocdia-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        if patch:
            providers._get_local_constants = constants.Constants  # an empty pool
            cache.clear()
        try:
            yield
        finally:
            if patch:
                providers._get_local_constants = hook
                cache.clear()  # (a cache: recomputed with the constants on the next draw that needs it)
            set_hypothesis_home_dir(None)


def certify_alone(path: Path, bench: Bench) -> list[str] | None:
    """Run ``certify`` on the written file alone, in a process of its own (in-process bench: no workers): the
    clauses it failed ([] when it passed; None when it could not run). This is the lab's replay, and it does not
    share the exploring process's state."""
    report = path.parent.with_name(path.parent.name + "-replay")
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", str(bench.path), "--json"]
    cmd += ["--features", str(path.parent), "--report", str(report), "--workers", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    try:
        summary = json.loads(done.stdout)
    except ValueError:
        return None
    failed = summary.get("clauses", {}).get("failed", [])
    return [str(c) for c in failed] if done.returncode else []


def minimize(exploration: Exploration, table: Table) -> Table:
    """``table`` with every step whose removal keeps the failure (the same clause) removed, one at a time from the
    last: Hypothesis shrinks the draws, and this makes the scenario 1-minimal in its lines (no single step can go)."""
    want = _signature(table.failure)
    given, when = list(table.given), list(table.when)
    for part in (when, given):
        i = len(part) - 1
        while i >= 0:
            if part is given and part[i].text.startswith("player "):
                i -= 1
                continue  # the players stay: steps name them
            candidate = Table(
                given if part is when else part[:i] + part[i + 1 :], when if part is given else part[:i] + part[i + 1 :]
            )
            failure = replay(exploration, candidate)
            if failure is not None and _signature(failure) == want:
                del part[i]
                table = Table(list(given), list(when), failure)
            i -= 1
    return table


def _signature(failure: ClauseFailure | None) -> tuple[str, str]:
    """What makes two failures the same: the clause, and what the root difference is about (without its values)."""
    if failure is None:
        return ("", "")
    about = failure.message.split(": expected", 1)[0]
    return (failure.clause, re.sub(r"[\d.]+", "#", about))


def replay(exploration: Exploration, table: Table) -> ClauseFailure | None:
    """Play ``table`` again, lines only (as its ``.feature`` file would): its failure, None if it passed."""
    from harness.cert.steps.context import CertContext

    cert = CertContext(exploration.bench)
    try:
        exploration.runner.run(cert, table.lines, {})
    except Exception as exc:
        return judged(cert, exc)
    finally:
        if cert.rig is not None:
            cert.rig.close()
    return None


def feature_text(table: Table, bench: Bench, root_seed: int, command: str) -> str:
    """The table as a ``.feature`` file: one scenario tagged with the clause that failed, its steps with ``And``."""
    failure = table.failure
    clause = failure.clause if failure is not None and failure.clause else "GP-3"
    lines = [
        f"# Found by xocdia-hil certify --explore on bench {bench.name}, seed {root_seed}; shrunk by Hypothesis.",
        f"# Replay: {command}" if command else "# Replay: xocdia-hil certify --bench BENCH --features THIS_FOLDER",
        f"@clause:{clause}",
        f"Feature: A table found by exploration fails {clause}",
        "",
    ]
    if failure is not None:
        lines += [f"  # {line}" for line in str(failure).splitlines()[:12]]
    lines.append(f"  Scenario: Explored table (seed {root_seed}): {clause}")
    previous = ""
    for step in table.lines:
        keyword = "And" if step.keyword == previous else step.keyword
        previous = step.keyword
        lines.append(f"    {keyword} {step.text}")
    return "\n".join(lines) + "\n"


def write_feature(table: Table, out: Path, bench: Bench, root_seed: int, command: str = "") -> Path:
    """Write the table's ``.feature`` file into ``out`` (created); returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    clause = table.failure.clause if table.failure is not None else ""
    name = re.sub(r"[^A-Za-z0-9]+", "-", f"explored-{bench.name}-seed-{root_seed}-{clause or 'error'}").lower()
    path = out / f"{name}.feature"
    path.write_text(feature_text(table, bench, root_seed, command.replace("{path}", str(out))), encoding="utf-8")
    return path
