"""Reproducibility (same seed and schedule → same history, byte for byte), safety (refusal, rollbacks on abort
and on errors) and the steady-state abort rule, on the in-process bench."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.bench.config import Bench
from harness.faults.injector import run_schedule
from harness.faults.prepare import InjectionRefused
from harness.faults.schedule import load_schedule
from harness.judge.history import canonical_lines
from harness.records import Outcome, OutcomeStatus
from tests.faults.faults_helpers import Make, fault

CHAOS = Path(__file__).resolve().parents[2] / "fixtures" / "faults" / "chaos.yaml"


def test_same_seed_same_history_byte_for_byte(bench: Bench) -> None:
    schedule = load_schedule(CHAOS)
    first, second = run_schedule(bench, schedule, 11), run_schedule(bench, schedule, 11)
    assert canonical_lines(first.history, first.final) == canonical_lines(second.history, second.final)
    assert first.history_hash == second.history_hash
    assert len(first.history) > 100 and first.faults  # a real run, with faults
    assert run_schedule(bench, schedule, 12).history_hash != first.history_hash


def test_a_bench_not_marked_for_faults_is_refused(bench: Bench, make_schedule: Make) -> None:
    production = replace(bench, faults_allowed=False)
    with pytest.raises(InjectionRefused, match="not marked as a fault-injection target"):
        run_schedule(production, make_schedule())


def test_failed_probes_abort_the_run_and_the_rollback_restarts_the_server(bench: Bench, make_schedule: Make) -> None:
    schedule = make_schedule(fault("server_kill", at={"round": 1, "phase": "shaking"}, duration=600.0), rounds=4)
    result = run_schedule(bench, schedule)
    assert result.aborted.startswith("abort: 3 steady-state probes failed in a row")
    assert result.outcome == Outcome.aborted(result.aborted) and result.passed  # stopped early, nothing wrong
    assert result.rounds_played < 4
    kinds = [(op.f, op.type) for op in result.history if op.f in ("fault", "heal", "probe")]
    heal = kinds.index(("heal", "info"))
    assert kinds[heal - 3 : heal] == [("probe", "fail")] * 3  # aborted first, then the rollback healed
    assert kinds[-1] == ("probe", "ok")  # the server answers again after the rollback
    assert result.final is not None and result.report.passed  # and nothing was lost on the way


def test_rollback_runs_when_the_server_fails_mid_run(bench: Bench, make_schedule: Make) -> None:
    unplug = fault("serial_unplug", target="bowl", at={"round": 1, "phase": "betting_open"}, duration=600.0)
    result = run_schedule(
        bench, make_schedule(unplug, rounds=3), adapter="tests.faults.faults_doubles:NoSecondRoundAdapter"
    )
    assert result.aborted.startswith("error: ") and "no_second_round" in result.aborted
    assert result.outcome.status is OutcomeStatus.ERROR
    heals = [op.detail for op in result.history if op.f == "heal"]
    assert heals == ["serial_unplug(bowl) at round 1 betting_open for 600s"]
    assert result.final is not None


def test_a_run_whose_final_read_fails_does_not_pass(bench: Bench, make_schedule: Make) -> None:
    result = run_schedule(bench, make_schedule(), adapter="tests.faults.faults_doubles:UnreadableAdapter")
    assert result.final is None and not result.passed
    assert result.aborted == "final read failed: unreachable: bet records are down"
    assert result.outcome == Outcome.error(result.aborted)


def test_a_lift_after_the_servers_close_seen_late_by_a_slow_lamp_is_not_a_payout_violation(bench: Bench) -> None:
    # Heavy-chaos seed 211 (docs/faults.md, "Late reports and late lamps"): the lamp's line is slow, so the lamp
    # still shows betting open when the dealer lifts in round 4, after the server closed; the server rightly
    # settles. The payout checker must judge the lift by the server's close (the in-process server's clock is the
    # bench's), not by the lamp.
    schedule = load_schedule(CHAOS.with_name("chaos-heavy.yaml"))
    result = run_schedule(bench, schedule, 211)
    assert not [v for v in result.report.violations if v.checker == "payout"], result.report
