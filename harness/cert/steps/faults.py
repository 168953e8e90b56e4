"""Gherkin steps for ``features/faults/``: build a fault schedule in Given steps, run it on the bench in a When
step, and state the checkers' verdicts in Then steps. Registered by the xocdia pytest plugin (``STEP_MODULES``);
the bench is the plugin's ``--bench`` (default in-process).

Player ids are ``p1`` ... ``pN``; phases are the schedule's (``betting_open``, ``shaking``, ``betting_closed``,
``reveal``, ``settling``).

The Then steps record their checks in the scenario's ``clause_checks`` log, each naming the clause it decides: each
history checker's violation its own (a payout its bet's paytable row; :data:`~harness.judge.checkers.CHECKER_CLAUSES`
otherwise), the run's liveness by the faults it had (:func:`liveness_clauses`), every acknowledged bet in the bet
record (DC-3) and settled or refunded exactly once (DC-2), a noisy round paused (ERR-1), cancelled and refunded
(ERR-3) or settled on the table's faces (EQ-3). Steps that only state that a fault took effect
(a restart, a bet not sent, a frame hit) check the harness, not the server: plain assertions.
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
from harness.judge.checkers import CHECKER_CLAUSES
from harness.judge.checks import CheckLog, ClauseFailure
from harness.judge.oracle import BALANCE_CLAUSE
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
    """Run on this shipped bench whatever ``--bench`` says (e.g. serial faults exist only in-process).

    Example: Given the in-process bench
    """
    fault_scenario.bench = load_bench(name)


@given(parsers.parse("a fault schedule of {rounds:d} rounds with {players:d} players betting {bets:d} times a round"))
def schedule_shape(fault_scenario: FaultScenario, rounds: int, players: int, bets: int) -> None:
    """The fault schedule plays this many rounds with this many players (``p1`` ... ``pN``), each betting this
    many times a round, stakes of 100, 200 or 500.

    Example: Given a fault schedule of 6 rounds with 4 players betting 3 times a round
    """
    fault_scenario.doc.update(rounds=rounds, players=players, bets_per_round=bets, stakes=[100, 200, 500])


@given(parsers.parse("the server is killed in round {n:d} while {phase} and restarted after {down:g} s"))
def server_killed(fault_scenario: FaultScenario, n: int, phase: str, down: float) -> None:
    """The schedule kills the server in round n during this phase and restarts it ``down`` seconds later.

    Example: Given the server is killed in round 2 while betting_open and restarted after 0.5 s
    """
    fault_scenario.add({"kind": "server_kill", "at": {"round": n, "phase": phase}, "duration": down})


@given(parsers.parse("every player disconnects in every round while {phase} for {seconds:g} s"))
def disconnect_storm(fault_scenario: FaultScenario, phase: str, seconds: float) -> None:
    """In every round of the schedule every player disconnects during this phase, for ``seconds``.

    Example: Given every player disconnects in every round while shaking for 0.4 s
    """
    _every_round(fault_scenario, {"kind": "player_disconnect", "target": "all", "duration": seconds}, phase)


@given(parsers.parse("{player}'s connection is reset in every round while {phase} for {seconds:g} s"))
def reset_storm(fault_scenario: FaultScenario, player: str, phase: str, seconds: float) -> None:
    """In every round of the schedule this player's connection is reset during this phase, for ``seconds``.

    Example: Given p1's connection is reset in every round while betting_open for 0.3 s
    """
    _every_round(fault_scenario, {"kind": "player_reset", "target": player, "duration": seconds}, phase)


@given(parsers.parse("{player}'s link is a blackhole in every round while {phase} for {seconds:g} s"))
def blackhole_storm(fault_scenario: FaultScenario, player: str, phase: str, seconds: float) -> None:
    """In every round of the schedule this player's link loses everything sent either way (a blackhole) during
    this phase, for ``seconds``.

    Example: Given p2's link is a blackhole in every round while betting_open for 0.3 s
    """
    _every_round(fault_scenario, {"kind": "player_blackhole", "target": player, "duration": seconds}, phase)


@given(
    parsers.parse("the {device} line gets {kind} noise at rate {rate:g} in round {n:d} while {phase} for {seconds:g} s")
)
def serial_noise(
    fault_scenario: FaultScenario, device: str, kind: str, rate: float, n: int, phase: str, seconds: float
) -> None:
    """The device line gets noise in round n during this phase, for ``seconds``: ``kind`` flip, drop,
    duplicate or reorder, per frame with probability ``rate``.

    Example: Given the reader line gets flip noise at rate 0.5 in round 2 while shaking for 3 s
    """
    fault = {"kind": f"serial_{kind}", "target": device, "at": {"round": n, "phase": phase}, "duration": seconds}
    fault_scenario.add({**fault, "rate": rate})


@when(parsers.parse("the fault schedule runs with seed {seed:d}"))
def schedule_runs(fault_scenario: FaultScenario, bench: Bench, seed: int) -> None:
    """The schedule runs with this seed on the scenario's bench (the one a Given step names, else ``--bench``); the
    Then steps judge its result. Not applicable where the bench refuses a fault of the schedule (e.g. a server kill
    on a server the harness did not start).

    Example: When the fault schedule runs with seed 3
    """
    schedule = parse_schedule({**fault_scenario.doc, "seed": seed}, "scenario schedule")
    try:
        fault_scenario.result = run_schedule(fault_scenario.bench or bench, schedule)
    except InjectionRefused as exc:  # e.g. a server kill on a server the harness did not start (attached by URL)
        not_applicable(str(exc))


def liveness_clauses(doc: dict[str, Any]) -> list[str]:
    """The clauses a run's liveness (every round played, no early stop) decides, by the faults of its schedule: a
    player who disconnects does not stop the round (DC-1); a network error (a reset or a blackholed link) does not
    stop a started game (NET-1); a server killed and restarted, or a line's noise, cancels at most the round it hit
    and the game goes on (ERR-3: a problem not resolved at once cancels the round, it never stops the table)."""
    kinds = {str(f.get("kind", "")) for f in doc.get("faults", [])}
    out = []
    if FaultKind.PLAYER_DISCONNECT in kinds:
        out.append("DC-1")
    if kinds & {FaultKind.PLAYER_RESET, FaultKind.PLAYER_BLACKHOLE}:
        out.append("NET-1")
    if FaultKind.SERVER_KILL in kinds or any(k.startswith("serial_") for k in kinds):
        out.append("ERR-3")
    return out or ["GP-3"]


@then("no checker reports a violation")
def no_violation(fault_scenario: FaultScenario, clause_checks: CheckLog) -> None:
    """Every history checker of the run found nothing (each a check of its clause: a payout its bet's paytable
    row) and the run did not stop early (a check of each of its liveness clauses); else this fails on the first clause
    broken, with the run's report.

    Example: Then no checker reports a violation
    """
    result = fault_scenario.done
    failed: list[str] = []
    for name, found in result.report.by_checker().items():
        if not found:
            clause_checks.record(CHECKER_CLAUSES.get(name, BALANCE_CLAUSE), f"the {name} checker found none", True)
        for violation in found:  # each names the clause it breaks: a payout its bet's paytable row
            clause_checks.record(violation.rule, f"the {name} checker: {violation}", False)
            failed.append(violation.rule)
    for clause in liveness_clauses(fault_scenario.doc):
        what = f"the run stopped early: {result.aborted}" if result.aborted else "the run played to its end"
        clause_checks.record(clause, what, not result.aborted)
        if result.aborted:
            failed.append(clause)
    if failed:
        message = "\n".join(result.report.lines()) + (f"\n  stopped early: {result.aborted}" if result.aborted else "")
        raise ClauseFailure(failed[0], "the fault run's checkers found violations:\n" + message)


@then("every round was played")
def every_round(fault_scenario: FaultScenario, clause_checks: CheckLog) -> None:
    """The run played every round of the schedule: a check of each of its liveness clauses (DC-1 in a disconnect
    storm, NET-1 with resets or blackholes, ERR-3 across a restart or line noise).

    Example: Then every round was played
    """
    result = fault_scenario.done
    rounds = fault_scenario.doc["rounds"]
    what = f"{result.rounds_played} of {rounds} rounds were played" + (f": {result.aborted}" if result.aborted else "")
    for clause in liveness_clauses(fault_scenario.doc):
        clause_checks.require(clause, result.rounds_played == rounds, what)


@then("every acknowledged bet was settled or refunded exactly once")
def exactly_once(fault_scenario: FaultScenario, clause_checks: CheckLog) -> None:
    """Every bet the server acknowledged is in its player's bet record (DC-3), once, and settled or refunded
    (DC-2).

    Example: Then every acknowledged bet was settled or refunded exactly once
    """
    result = fault_scenario.done
    assert result.final is not None, f"the run took no final read of the server: {result.aborted}"
    rows = {(p, r.client_bet_id): r for p, rs in result.final.records.items() for r in rs}
    acked = [op for op in result.history if op.f == OpFunction.BET and op.type == OpType.OK]
    assert acked, "no bet was acknowledged: the scenario proves nothing"
    missing = [op.client_bet_id for op in acked if (op.process, op.client_bet_id) not in rows]
    what = f"{len(missing)} of {len(acked)} acknowledged bets are missing from the bet record: {missing[:10]}"
    clause_checks.require("DC-3", not missing, what)
    resolved = (*DECIDED_RESULTS, BetResult.REFUND)
    open_rows = [rows[(op.process, op.client_bet_id)] for op in acked]
    unresolved = [f"{r.client_bet_id}: {r.result}" for r in open_rows if r.result not in resolved]
    what = f"{len(unresolved)} of {len(acked)} acknowledged bets are neither settled nor refunded: {unresolved[:10]}"
    clause_checks.require("DC-2", not unresolved, what)
    total = sum(len(rs) for rs in result.final.records.values())
    what = f"the bet records hold {total} rows for {len(rows)} bets: a bet is recorded more than once"
    clause_checks.require("DC-2", total == len(rows), what)


@then(parsers.parse("the server was restarted {count:d} times"))
def restarted(fault_scenario: FaultScenario, count: int) -> None:
    """The harness restarted the server exactly ``count`` times during the run (the fault took effect).

    Example: Then the server was restarted 1 times
    """
    history = fault_scenario.done.history
    heals = [op for op in history if op.f == OpFunction.HEAL and op.detail.startswith(FaultKind.SERVER_KILL)]
    assert len(heals) == count, f"the harness restarted the server {len(heals)} times, expected {count}"


@then(parsers.parse("some bets had an unknown outcome"))
def some_unknown(fault_scenario: FaultScenario) -> None:
    """At least one bet of the run had an unknown outcome (its answer was lost to a fault).

    Example: Then some bets had an unknown outcome
    """
    history = fault_scenario.done.history
    assert any(op.f == OpFunction.BET and op.type == OpType.INFO for op in history), "no bet had an unknown outcome"


@then(parsers.parse("some bets were refused because the player was offline"))
def some_offline(fault_scenario: FaultScenario) -> None:
    """At least one bet was not sent because its player was disconnected (the fault took effect).

    Example: Then some bets were refused because the player was offline
    """
    history = fault_scenario.done.history
    assert any(
        op.f == OpFunction.BET and op.type == OpType.FAIL and op.detail.startswith("disconnected") for op in history
    ), "no bet was left unsent because its player was offline"


@then(parsers.parse("the {device} line had {kind} noise on some frames"))
def frames_hit(fault_scenario: FaultScenario, device: str, kind: str) -> None:
    """At least one frame on the device line had this noise (the fault took effect).

    Example: Then the reader line had flip noise on some frames
    """
    counts = fault_scenario.done.serial_counts.get(device, {})
    assert counts.get(kind, 0) > 0, f"no frame on the {device} line had {kind} noise: {counts}"


@then(parsers.parse("round {n:d} was paused or settled on the table's faces"))
def paused_or_true(fault_scenario: FaultScenario, clause_checks: CheckLog, n: int) -> None:
    """Round n ended (ERR-3) and the run settled no bet on faces the table did not show (EQ-3: the payout
    checker found nothing); unless it was settled, the server paused it first (ERR-1) and, where it cancelled it,
    refunded every bet of it in full (ERR-3).

    Example: Then round 2 was paused or settled on the table's faces
    """
    result = fault_scenario.done
    assert result.final is not None, f"the run took no final read of the server: {result.aborted}"
    rid = str(n)
    events = [e for e in result.final.events if e.round_id == rid]
    kinds = [str(e.kind) for e in events]
    end = next((e for e in events if e.ends_round), None)
    clause_checks.require("ERR-3", end is not None, f"round {n}: expected ended, the server never ended it: {kinds}")
    assert end is not None
    paused = any(e.kind == RoundEventKind.PAUSED for e in events)
    payout = [str(v) for v in result.report.violations if v.checker == "payout"]
    what = f"expected no settlement on faces the table did not show, the payout checker found {payout[:10]}"
    clause_checks.require("EQ-3", not payout, what)
    if paused:
        clause_checks.record("ERR-1", f"round {n}: the server paused it: {kinds}", True)
    if end.kind == RoundEventKind.SETTLED:
        return
    clause_checks.require("ERR-1", paused, f"round {n}: expected paused before it ended, the server: {kinds}")
    if end.kind == RoundEventKind.CANCELLED:
        rows = [r for rs in result.final.records.values() for r in rs if r.round_id == rid]
        bad = [f"{r.bet_id}: {r.result} {r.returned} of {r.wagered}" for r in rows if r.result != BetResult.REFUND]
        bad += [f"{r.bet_id}: returned {r.returned} of {r.wagered}" for r in rows if r.returned != r.wagered]
        clause_checks.require("ERR-3", not bad, f"round {n}: cancelled, but bets not refunded in full: {bad[:10]}")
