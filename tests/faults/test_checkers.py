"""Each checker, against a server double with one planted bug, reports exactly that bug; the reference server
passes them all under the same schedule."""

from __future__ import annotations

from typing import Any

import pytest

from harness.bench.config import Bench
from harness.faults.injector import run_schedule
from harness.judge.checkers import CHECKERS
from tests.faults.faults_helpers import Make, bet_ops, fault

VOID_ROUND_1 = fault("table_touch", at={"round": 1})  # round 1 is void: every bet in it is refunded
LATE = (
    fault("serial_latency", target="reader", at={"round": 1, "phase": "betting_open"}, duration=3.0, delay=1.0),
    fault("player_latency", target="p1", at={"round": 1, "phase": "betting_open"}, duration=1.0, delay=0.5),
)

CASES: list[tuple[str, tuple[dict[str, Any], ...], set[str]]] = [
    ("LosingAdapter", (VOID_ROUND_1,), {"lost"}),
    ("PhantomAdapter", (VOID_ROUND_1,), {"unexpected"}),
    ("DuplicatingAdapter", (VOID_ROUND_1,), {"duplicate"}),
    # Paying too much is a wrong payout, and the money it creates breaks the table's conservation too.
    ("OverpayingAdapter", (VOID_ROUND_1,), {"payout", "table_balance"}),
    ("StakeDoublingAdapter", (VOID_ROUND_1,), {"table_balance"}),
    ("BalanceSwapAdapter", (VOID_ROUND_1,), {"player_balance"}),
    ("ReorderingAdapter", (VOID_ROUND_1,), {"round_order"}),
    ("LateAcceptingAdapter", LATE, {"after_close"}),
]


@pytest.mark.parametrize(("double", "faults", "expected"), CASES, ids=[c[0] for c in CASES])
def test_planted_bug_is_reported_by_exactly_its_checker(
    bench: Bench, make_schedule: Make, double: str, faults: tuple[dict[str, Any], ...], expected: set[str]
) -> None:
    schedule = make_schedule(*faults)
    clean = run_schedule(bench, schedule)
    assert clean.passed, clean.report.lines()
    result = run_schedule(bench, schedule, adapter=f"tests.faults.faults_doubles:{double}")
    found = {name for name, vs in result.report.by_checker().items() if vs}
    assert found == expected, result.report.lines()


def test_every_checker_is_covered_by_a_double() -> None:
    assert set(CHECKERS) == set().union(*(c[2] for c in CASES))


def test_lost_names_the_bet_the_server_acknowledged(bench: Bench, make_schedule: Make) -> None:
    result = run_schedule(bench, make_schedule(VOID_ROUND_1), adapter="tests.faults.faults_doubles:LosingAdapter")
    [violation] = result.report.violations
    first_ok = bet_ops(result.history, "p1", "ok")[0]
    assert (violation.player, violation.bet_id, violation.round_id) == ("p1", first_ok.bet_id, "1")
    assert f"acknowledged bet {first_ok.client_bet_id} missing" in violation.what


def test_late_acceptance_happened_after_the_bench_saw_the_close(bench: Bench, make_schedule: Make) -> None:
    result = run_schedule(bench, make_schedule(*LATE), adapter="tests.faults.faults_doubles:LateAcceptingAdapter")
    closed = next(op for op in result.history if op.f == "closed" and op.round_id == "1")
    late = [op for op in bet_ops(result.history, "p1", "ok") if op.round_id == "1" and op.index > closed.index]
    assert late and len(result.report.violations) == len(late)
