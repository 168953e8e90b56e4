"""``python -m mutation.run`` (``make mutate``): mutation testing of the reference server's rules and settlement code
with the certification suite on the in-process bench as the only killer.

Contract:

- The working tree is never written to: the tracked and untracked-but-not-ignored files are copied into a temporary
  folder (``mutation.tree``), and cosmic-ray mutates that copy, one mutant at a time; the suite runs there with
  ``PYTHONPATH`` (and the ``xocdia_hil_fixtures`` / ``xocdia_hil_features`` data packages) pointing into the copy,
  which is checked before anything runs. Killing the run leaves at worst a stray temporary folder.
- Mutants: cosmic-ray's operators on ``--modules`` (default :data:`MODULES`) less the type-confused families of
  :data:`EXCLUDED_OPERATORS`; the equivalent ones (``mutation/equivalents.yaml``) are listed, not run.
- The killer, by default: the suite under pytest, stopping at the first failed scenario, each scenario limited to
  ``--scenario-timeout`` wall seconds, run by ``--jobs`` workers that import the suite once and fork a run per
  mutant, against only the scenarios whose run covers the mutated statement in the unmutated suite
  (``mutation.forked``, ``mutation.selection``; ``--no-select`` runs the whole suite for every mutant). A mutant
  no scenario reaches is a survivor without a run. ``--killer COMMAND`` runs a command instead, in a subprocess per
  mutant, one at a time, the whole command for each.
- A run past its limit (``--timeout`` for every mutant; by default three times the seconds its scenarios took in
  the unmutated suite, plus a start allowance) is stopped and the mutant counts as timed out.
- ``--sample N --seed S``: N mutants drawn with ``random.Random(S)`` from the runnable ones in source order;
  ``--only REGEX`` keeps only those whose key matches.
- The report (``--report DIR``, default ``mutation-report/``): ``report.json``, ``report.md`` (rewritten after every
  mutant, so an interrupted run still has one) and cosmic-ray's ``session.sqlite``.
- Exit status: 0; 1 when a mutant could not be run or the score is below ``--fail-under``; 2 when the unmutated
  suite fails or the copy is not what the suite imports.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import shutil
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import cosmic_ray.commands
from cosmic_ray.mutating import mutate_and_test
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkItem, WorkResult

from mutation import equivalents, forked, report
from mutation import tree as trees
from mutation.mutants import Mutant, describe
from mutation.pool import WorkerError
from mutation.selection import SelectionError

#: The server's rules and settlement code: bet types and the paytable, settling a round, the round engine,
#: corrections of a misread result.
MODULES = ("gameserver/bets.py", "gameserver/settlement.py", "gameserver/engine.py", "gameserver/corrections.py")
#: cosmic-ray operator families not generated (regular expressions, matched fully against the operator's name).
#: Each swaps an operator for one of another type family; on this code (money in integer minor units, times as
#: floats, None, enum members) the result is a TypeError on the first round or a value no rule is close to, so they
#: only cost time; the remaining operators keep every swap within its family (+ - * /, the comparisons of
#: numbers, is / is not, and / or, not, constants, loops, break / continue, decorators, exceptions).
EXCLUDED_OPERATORS = (
    r"core/ReplaceBinaryOperator_\w+_(BitAnd|BitOr|BitXor|LShift|RShift|Pow|Mod|FloorDiv)",  # arithmetic -> bitwise
    r"core/ReplaceComparisonOperator_(Is|IsNot)_(Lt|LtE|Gt|GtE)",  # identity -> order (None and enums have none)
    r"core/ReplaceComparisonOperator_(Lt|LtE|Gt|GtE|Eq|NotEq)_(Is|IsNot)",  # order or equality -> identity
)
_EXCLUDED = re.compile("|".join(f"(?:{p})" for p in EXCLUDED_OPERATORS))


class MutateError(Exception):
    """The run cannot start: the copy is not what the suite imports, or the unmutated suite fails."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except (
        MutateError,
        equivalents.EquivalentsError,
        trees.TreeError,
        forked.BaselineError,
        SelectionError,
        WorkerError,
    ) as exc:
        print(f"mutate: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mutation.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", type=int, default=0, metavar="N", help="run N mutants drawn at random (default: all)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    p.add_argument("--only", default="", metavar="REGEX", help="run only the mutants whose key matches (re.search)")
    p.add_argument("--report", default="mutation-report", help="folder for the report (default mutation-report)")
    p.add_argument("--modules", nargs="+", default=list(MODULES), help="files to mutate, relative to the repository")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="workers (default: one per CPU)")
    p.add_argument("--no-select", action="store_true", help="run the whole suite for every mutant")
    p.add_argument("--timeout", type=float, default=None, help="seconds per mutant (default: 3x its scenarios' time)")
    p.add_argument("--scenario-timeout", type=float, default=120.0, help="wall seconds per scenario (default 120)")
    p.add_argument("--killer", default="", metavar="COMMAND", help="a test command instead of the suite")
    p.add_argument("--equivalents", type=Path, default=equivalents.DEFAULT, help="the equivalent mutants' list")
    p.add_argument("--fail-under", type=float, default=0.0, metavar="PCT", help="exit 1 below this score (percent)")
    p.add_argument("--keep", action="store_true", help="keep the copy (its path is printed)")
    return p


def run(args: argparse.Namespace) -> int:
    """Copy, generate, select, run, report (the module docstring's contract). Returns the exit status."""
    started = time.monotonic()
    repo = trees.repo_root()
    out = Path(args.report).resolve()
    listed = equivalents.load(args.equivalents.resolve())
    if args.jobs < 1:
        raise MutateError(f"--jobs must be 1 or more; got {args.jobs}")
    tmp = Path(tempfile.mkdtemp(prefix="xocdia-mutate-"))
    tree = tmp / "tree"
    try:
        trees.copy_tree(repo, tree)
        trees.prepare(tree, list(args.modules))
        with trees.inside(tree):
            trees.check_imports(tree)
            out.mkdir(parents=True, exist_ok=True)
            session = out / "session.sqlite"
            session.unlink(missing_ok=True)
            with use_db(str(session), WorkDB.Mode.create) as db:
                cosmic_ray.commands.init([Path(m) for m in args.modules], db, {})
                items = {item.job_id: item for item in db.work_items}
                mutants = describe(items.values(), tree)
                print(f"mutate: {len(mutants)} mutants of {', '.join(args.modules)} (copy: {tree})", flush=True)
                plan = select(mutants, listed, args.sample, args.seed, args.only)
                for reason in sorted(set(plan.reasons.values())):
                    skipped = [m.job_id for m in plan.skipped if plan.reasons[m.job_id] == reason]
                    db.set_multiple_results(skipped, WorkResult(WorkerOutcome.SKIPPED, output=reason))
                header: dict[str, Any] = {
                    "tool": f"cosmic-ray {version('cosmic-ray')}",
                    "modules": list(args.modules),
                    "sample": {"n": args.sample, "seed": args.seed} if args.sample else None,
                    "generated": len(mutants),
                    "excluded": len(plan.excluded),
                    "runnable": len(plan.runnable),
                    "selected": len(plan.selected),
                    "scenario_timeout_s": args.scenario_timeout,
                    "stale_equivalents": listed.stale(mutants),
                }
                log = Log(db, header, out, started, len(plan.selected))
                log.records += [
                    {**m.to_json(), "status": "equivalent", "detail": why, "seconds": 0.0, "diff": ""}
                    for m, why in plan.equivalent
                ]
                if args.killer:
                    complete = _with_command(args, plan, items, log)
                else:
                    complete = _with_suite(args, plan, items, log, tree, tmp)
        result = report.build({**log.header, "wall_s": time.monotonic() - started, "complete": complete}, log.records)
        report.write(out, result)
        return _summary(result, out, args.fail_under)
    finally:
        if args.keep:
            print(f"mutate: the copy is kept in {tree}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _with_suite(
    args: argparse.Namespace, plan: Plan, items: dict[str, WorkItem], log: Log, tree: Path, tmp: Path
) -> bool:
    """The default killer: the suite in forked workers, each mutant against its scenarios."""
    base = forked.baseline(tree, tmp, list(args.modules), args.scenario_timeout, args.timeout)
    todo = forked.jobs(plan.selected, items, base, args.scenario_timeout, args.timeout, not args.no_select)
    whole = sum(1 for job in todo if job["scenarios"] is None and job["request"]["run"])
    unreached = sum(1 for job in todo if not job["request"]["run"])
    log.header.update(
        killer=f"python -m pytest {forked.SUITE} {' '.join(forked.options(args.scenario_timeout))}",
        selection="whole suite" if args.no_select else "the scenarios covering the mutated statement",
        jobs=args.jobs,
        baseline_s=round(base.wall_s, 1),
        whole_suite_mutants=whole,
        unreached_mutants=unreached,
        timeout_s=args.timeout,
    )
    print(f"mutate: {len(todo)} to run on {args.jobs} workers ({whole} need the whole suite, {unreached} reached by "
          "no scenario)", flush=True)  # fmt: skip
    try:
        forked.run_forked(
            tree,
            tmp,
            args.jobs,
            base,
            todo,
            lambda job, result: log.record(
                job["mutant"], result, job["seconds"], job["request"]["timeout"], job["scenarios"]
            ),
        )
    except KeyboardInterrupt:
        print("mutate: interrupted; the report holds the mutants run so far", file=sys.stderr)
        return False
    return True


def _with_command(args: argparse.Namespace, plan: Plan, items: dict[str, WorkItem], log: Log) -> bool:
    """``--killer COMMAND``: the command in a subprocess per mutant, one at a time."""
    killer = args.killer.format(python=shlex.quote(sys.executable), scenario_timeout=args.scenario_timeout)
    seconds = run_baseline(killer, args.timeout)
    timeout = args.timeout or max(120.0, 3 * seconds)
    log.header.update(
        killer=killer.replace(shlex.quote(sys.executable), "python"), baseline_s=round(seconds, 1), timeout_s=timeout
    )
    try:
        for m in plan.selected:
            t0 = time.monotonic()
            result = mutate_and_test(items[m.job_id].mutations, killer, timeout)
            log.record(m, result, time.monotonic() - t0, timeout, None)
    except KeyboardInterrupt:
        print("mutate: interrupted; the report holds the mutants run so far", file=sys.stderr)
        return False
    return True


class Log:
    """Where each outcome goes: cosmic-ray's session, the report's records (the report rewritten after each), and
    a progress line."""

    def __init__(self, db: WorkDB, header: dict[str, Any], out: Path, started: float, total: int) -> None:
        self.db, self.header, self.out, self.started, self.total = db, header, out, started, total
        self.records: list[dict[str, Any]] = []
        self._done = 0

    def record(self, m: Mutant, result: WorkResult, seconds: float, timeout: float, scenarios: int | None) -> None:
        """Record one mutant's outcome (``seconds`` its run's wall time; ``scenarios`` how many ran, None for the
        whole suite)."""
        now = time.monotonic()
        self._done += 1
        self.db.set_result(m.job_id, result)
        status, detail = classify(result, timeout)
        diff = "\n".join(line for line in (result.diff or "").splitlines() if line != "--- mutation diff ---")
        record = {**m.to_json(), "status": status, "detail": detail, "seconds": round(seconds, 1), "diff": diff}
        self.records.append({**record, "scenarios": scenarios})
        name = m.operator.split("/")[-1]
        ran = "all" if scenarios is None else str(scenarios)
        print(f"[{self._done}/{self.total}] {status:<10} {m.path}:{m.line} {name} ({ran} scenarios, {seconds:.0f} s)",
              flush=True)  # fmt: skip
        partial = {**self.header, "wall_s": now - self.started, "complete": False}
        report.write(self.out, report.build(partial, self.records))


class Plan:
    """Which mutants run: ``excluded`` (operator families not generated), ``equivalent`` (with why), ``runnable``
    (the rest, in source order), ``selected`` (the sample of them, or all); ``skipped`` and ``reasons`` say why each
    one that does not run does not (for cosmic-ray's session)."""

    def __init__(self) -> None:
        self.excluded: list[Mutant] = []
        self.equivalent: list[tuple[Mutant, str]] = []
        self.runnable: list[Mutant] = []
        self.selected: list[Mutant] = []
        self.skipped: list[Mutant] = []
        self.reasons: dict[str, str] = {}


def select(mutants: list[Mutant], listed: equivalents.Equivalents, sample: int, seed: int, only: str = "") -> Plan:
    """Split ``mutants`` (source order) into a :class:`Plan`; ``sample`` > 0 draws that many of the runnable ones
    with ``random.Random(seed)`` (all of them when there are fewer), kept in source order; ``only`` (a regular
    expression) first keeps the runnable ones whose key it matches (e.g. to run a report's survivors again)."""
    plan = Plan()
    wanted = re.compile(only) if only else None
    for m in mutants:
        why = listed.why(m)
        if _EXCLUDED.fullmatch(m.operator):
            plan.excluded.append(m)
            plan.reasons[m.job_id] = "operator family not generated (mutation.run.EXCLUDED_OPERATORS)"
        elif why is not None:
            plan.equivalent.append((m, why))
            plan.reasons[m.job_id] = f"equivalent: {why}"
        elif wanted is not None and not wanted.search(m.key):
            plan.reasons[m.job_id] = "not matched by --only"
        else:
            plan.runnable.append(m)
    plan.selected = list(plan.runnable)
    if 0 < sample < len(plan.runnable):
        chosen = set(random.Random(seed).sample(range(len(plan.runnable)), sample))
        plan.selected = [m for i, m in enumerate(plan.runnable) if i in chosen]
    chosen_ids = {m.job_id for m in plan.selected}
    for m in plan.runnable:
        if m.job_id not in chosen_ids:
            plan.reasons[m.job_id] = "not in the sample"
    plan.skipped = [m for m in mutants if m.job_id in plan.reasons]
    return plan


def classify(result: WorkResult, timeout: float) -> tuple[str, str]:
    """A cosmic-ray result as a report status and a one-line detail: ``timed_out`` when the whole killer ran past
    ``timeout`` (cosmic-ray's output is then ``timeout``) or a scenario failed by pytest-timeout; ``killed`` with
    the first failed scenario; ``survived``; ``error`` when the killer could not be run."""
    output = result.output or ""
    if result.worker_outcome is not WorkerOutcome.NORMAL or result.test_outcome is TestOutcome.INCOMPETENT:
        return "error", _last_line(output) or str(result.worker_outcome)
    if result.test_outcome is TestOutcome.SURVIVED:
        return "survived", forked.NOT_REACHED if output == forked.NOT_REACHED else ""
    if output == "timeout":
        return "timed_out", f"the suite ran past {timeout:g} s and was stopped"
    failed = _first_failure(output)
    if "Timeout (>" in output:
        return "timed_out", f"{failed or 'a scenario'}: past --scenario-timeout"
    return "killed", failed or _last_line(output)


def _first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            test = line.split(" ", 1)[1]
            return (test.split("::", 1)[-1])[:200]
    return ""


def _last_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def run_baseline(killer: str, timeout: float | None) -> float:
    """Run the ``--killer`` command on the unmutated copy; returns its wall seconds.

    Raises:
        forked.BaselineError: it failed (every mutant would look killed) or ran past ``timeout``.
    """
    print("mutate: the unmutated suite first ...", flush=True)
    seconds = forked.run_unmutated(shlex.split(killer), timeout)
    print(f"mutate: the unmutated suite passes in {seconds:.0f} s", flush=True)
    return seconds


def _summary(result: dict[str, Any], out: Path, fail_under: float) -> int:
    c = result["counts"]
    value = result["score"]
    shown = "-" if value is None else f"{100 * value:.1f} %"
    print(
        f"mutate: {result['selected']} run of {result['generated']} generated ({result['excluded']} left out, "
        f"{c['equivalent']} equivalent): killed {c['killed']}, timed out {c['timed_out']}, survived "
        f"{c['survived']}, errors {c['error']}; score {shown}; {result['wall_s']:.0f} s"
    )
    print(f"mutate: report {out / 'report.md'}")
    if c["error"] or (value is not None and 100 * value < fail_under):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
