"""Steps of generative certification (``features/exploration.feature``): random whole tables played on the bench
and judged by the whole judge (:mod:`harness.cert.explore`); a failing table is shrunk and written as a ``.feature``
file that replays it.

Every step's docstring is its entry in ``docs/steps.md`` (``python -m harness.cert.steps.docgen``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_bdd import parsers, then, when

from harness.cert.steps.context import CertContext
from harness.judge.checks import ClauseFailure


@dataclass
class ExploreOptions:
    """What ``certify --explore N --seed S`` asks of every exploration step (None: the step's own), and the folder
    failing tables are written to."""

    tables: int | None = None
    seed: int | None = None
    out: Path | None = None


@dataclass
class Explored:
    """The last exploration of the scenario."""

    outcome: object | None = None


@pytest.fixture
def explored() -> Explored:
    return Explored()


@when(parsers.parse("{tables:d} random tables are played from seed {seed:d}"))
def random_tables(
    cert: CertContext, explore_options: ExploreOptions, explored: Explored, tables: int, seed: int
) -> None:
    """Hypothesis draws this many whole tables from the seed (``certify --explore N --seed S`` replaces both) and
    plays them on the bench: rounds with any mix of incidents, pauses and resumes, supervisor cancels, server kills
    and crashes inside its ledger writes, disconnects, lost, late and repeated device reports, bets at the edges of
    the betting period, retries (what the bench allows). The whole judge decides every table; each check it ran
    counts for its clause. A failing table is shrunk to a minimal one and written as a ``.feature`` file
    (docs/explore.md).

    Example: When 20 random tables are played from seed 1
    """
    from harness.cert.explore.explorer import explore

    count = explore_options.tables if explore_options.tables is not None else tables
    root = explore_options.seed if explore_options.seed is not None else seed
    bench = cert.bench
    command = f"xocdia-hil certify --bench {bench.name} --features {{path}}"
    outcome = explore(bench, count, root, explore_options.out, command)
    explored.outcome = outcome
    cert.checks.extend(outcome.checks)
    print(
        f"exploration: {outcome.tables} tables from seed {root} ({count} examples asked) in {outcome.seconds:.1f} s "
        f"wall, {outcome.cpu_seconds:.1f} s CPU: {outcome.per_second:.1f} tables/s"
    )


@then("no explored table fails the judge")
def no_table_fails(cert: CertContext, explored: Explored) -> None:
    """The exploration found no table the judge fails. Else this fails on the clause of the minimal failing
    table's root cause, naming the ``.feature`` file it was written to and the command that replays it.

    Example: Then no explored table fails the judge
    """
    from harness.cert.explore.explorer import Outcome

    outcome = explored.outcome
    assert isinstance(outcome, Outcome), "no exploration ran in this scenario"
    minimal = outcome.minimal
    if minimal is None:
        return
    failure = minimal.failure or ClauseFailure("", "a table failed")
    where = f"written to {outcome.path}" if outcome.path is not None else "not written (no report folder)"
    steps = [str(line) for line in minimal.lines]
    if outcome.fresh is None:
        replay = "fails the same way when replayed" if outcome.replayed is not None else "PASSED when replayed (flaky)"
    elif outcome.fresh:
        replay = f"fails again in a certify run of its own, on {', '.join(outcome.fresh)}"
    else:
        replay = "PASSED in a certify run of its own: it fails only after the tables played before it"
    raise ClauseFailure(
        failure.clause,
        f"an explored table fails ({len(steps)} steps, {replay}; {where}): {failure.message}",
        [*failure.consequences, *(f"step: {s}" for s in steps)],
    )
