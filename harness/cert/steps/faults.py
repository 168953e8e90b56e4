"""Gherkin steps for ``features/faults/``: build a fault schedule in Given steps, run it on the bench in a When
step, and state the checkers' verdicts in Then steps. Registered by the xocdia pytest plugin (``STEP_MODULES``);
the bench is the plugin's ``--bench`` (default in-process).

Player ids are ``p1`` ... ``pN``; phases are the schedule's (``betting_open``, ``shaking``, ``betting_closed``,
``reveal``, ``settling``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from harness.bench.config import Bench, load_bench
from harness.cert.steps.context import not_applicable
from harness.faults.injector import run_schedule
from harness.faults.prepare import InjectionRefused
from harness.faults.result import RunResult
from harness.faults.schedule import parse_schedule
from harness.faults.schedule_model import FaultKind
from harness.records import DECIDED_RESULTS, BetResult, OpFunction, OpType, RoundEventKind


@dataclass
class FaultScenario:
    """The schedule a scenario builds (as a schedule document), the bench it runs on when the scenario names
    one (else the plugin's ``--bench``), and the run's result."""

    doc: dict[str, Any] = field(default_factory=lambda: {"faults": []})
    bench: Bench | None = None
    result: RunResult | None = None

    @property
    def done(self) -> RunResult:
        assert self.result is not None, "the fault schedule has not run yet (missing 'When the fault schedule runs')"
        return self.result

    def add(self, fault: dict[str, Any]) -> None:
        self.doc["faults"].append(fault)


@pytest.fixture
def fault_scenario() -> FaultScenario:
    return FaultScenario()


def _every_round(scn: FaultScenario, fault: dict[str, Any], phase: str) -> None:
    for n in range(1, int(scn.doc["rounds"]) + 1):
        scn.add({**fault, "at": {"round": n, "phase": phase}})


@given(parsers.parse("the {name} bench"))
def named_bench(fault_scenario: FaultScenario, name: str) -> None:
    """Run on this shipped bench whatever ``--bench`` says (e.g. serial faults exist only in-process)."""
    fault_scenario.bench = load_bench(name)


@given(parsers.parse("a fault schedule of {rounds:d} rounds with {players:d} players betting {bets:d} times a round"))
def schedule_shape(fault_scenario: FaultScenario, rounds: int, players: int, bets: int) -> None:
    fault_scenario.doc.update(rounds=rounds, players=players, bets_per_round=bets, stakes=[100, 200, 500])


@given(parsers.parse("the server is killed in round {n:d} while {phase} and restarted after {down:g} s"))
def server_killed(fault_scenario: FaultScenario, n: int, phase: str, down: float) -> None:
    fault_scenario.add({"kind": "server_kill", "at": {"round": n, "phase": phase}, "duration": down})


@given(parsers.parse("every player disconnects in every round while {phase} for {seconds:g} s"))
def disconnect_storm(fault_scenario: FaultScenario, phase: str, seconds: float) -> None:
    _every_round(fault_scenario, {"kind": "player_disconnect", "target": "all", "duration": seconds}, phase)


@given(parsers.parse("{player}'s connection is reset in every round while {phase} for {seconds:g} s"))
def reset_storm(fault_scenario: FaultScenario, player: str, phase: str, seconds: float) -> None:
    _every_round(fault_scenario, {"kind": "player_reset", "target": player, "duration": seconds}, phase)


@given(parsers.parse("{player}'s link is a blackhole in every round while {phase} for {seconds:g} s"))
def blackhole_storm(fault_scenario: FaultScenario, player: str, phase: str, seconds: float) -> None:
    _every_round(fault_scenario, {"kind": "player_blackhole", "target": player, "duration": seconds}, phase)


@given(
    parsers.parse("the {device} line gets {kind} noise at rate {rate:g} in round {n:d} while {phase} for {seconds:g} s")
)
def serial_noise(
    fault_scenario: FaultScenario, device: str, kind: str, rate: float, n: int, phase: str, seconds: float
) -> None:
    """``kind``: flip, drop, duplicate or reorder (per frame, with probability ``rate``)."""
    fault = {"kind": f"serial_{kind}", "target": device, "at": {"round": n, "phase": phase}, "duration": seconds}
    fault_scenario.add({**fault, "rate": rate})


@when(parsers.parse("the fault schedule runs with seed {seed:d}"))
def schedule_runs(fault_scenario: FaultScenario, bench: Bench, seed: int) -> None:
    schedule = parse_schedule({**fault_scenario.doc, "seed": seed}, "scenario schedule")
    try:
        fault_scenario.result = run_schedule(fault_scenario.bench or bench, schedule)
    except InjectionRefused as exc:  # e.g. a server kill on a server the harness did not start (attached by URL)
        not_applicable(str(exc))


@then("no checker reports a violation")
def no_violation(fault_scenario: FaultScenario) -> None:
    result = fault_scenario.done
    assert result.report.passed, "\n".join(result.report.lines())
    assert not result.aborted, result.aborted


@then("every round was played")
def every_round(fault_scenario: FaultScenario) -> None:
    result = fault_scenario.done
    assert result.rounds_played == fault_scenario.doc["rounds"], result.aborted


@then("every acknowledged bet was settled or refunded exactly once")
def exactly_once(fault_scenario: FaultScenario) -> None:
    result = fault_scenario.done
    assert result.final is not None
    rows = {(p, r.client_bet_id): r for p, rs in result.final.records.items() for r in rs}
    acked = [op for op in result.history if op.f == OpFunction.BET and op.type == OpType.OK]
    assert acked, "no bet was acknowledged: the scenario proves nothing"
    for op in acked:
        row = rows.get((op.process, op.client_bet_id))
        assert row is not None and row.result in (*DECIDED_RESULTS, BetResult.REFUND), f"{op.client_bet_id}: {row}"
    assert sum(len(rs) for rs in result.final.records.values()) == len(rows)


@then(parsers.parse("the server was restarted {count:d} times"))
def restarted(fault_scenario: FaultScenario, count: int) -> None:
    history = fault_scenario.done.history
    heals = [op for op in history if op.f == OpFunction.HEAL and op.detail.startswith(FaultKind.SERVER_KILL)]
    assert len(heals) == count


@then(parsers.parse("some bets had an unknown outcome"))
def some_unknown(fault_scenario: FaultScenario) -> None:
    assert any(op.f == OpFunction.BET and op.type == OpType.INFO for op in fault_scenario.done.history)


@then(parsers.parse("some bets were refused because the player was offline"))
def some_offline(fault_scenario: FaultScenario) -> None:
    history = fault_scenario.done.history
    assert any(
        op.f == OpFunction.BET and op.type == OpType.FAIL and op.detail.startswith("disconnected") for op in history
    )


@then(parsers.parse("the {device} line had {kind} noise on some frames"))
def frames_hit(fault_scenario: FaultScenario, device: str, kind: str) -> None:
    counts = fault_scenario.done.serial_counts.get(device, {})
    assert counts.get(kind, 0) > 0, counts


@then(parsers.parse("round {n:d} was paused or settled on the table's faces"))
def paused_or_true(fault_scenario: FaultScenario, n: int) -> None:
    result = fault_scenario.done
    assert result.final is not None
    events = [e for e in result.final.events if e.round_id == str(n)]
    end = next(e for e in events if e.ends_round)
    # a settlement on other faces than the table's would be a payout violation; here: pause → refund, or settle
    settled = end.kind == RoundEventKind.SETTLED
    assert settled or any(e.kind == RoundEventKind.PAUSED for e in events), [str(e.kind) for e in events]
    assert not [v for v in result.report.violations if v.checker == "payout"]
