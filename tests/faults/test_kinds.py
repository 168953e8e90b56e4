"""Each fault kind takes effect on the in-process bench (and the reference server stays correct)."""

from __future__ import annotations

import pytest

from harness.bench.config import Bench
from harness.faults.injector import run_schedule
from harness.faults.result import RunResult
from harness.records import RoundEvent
from tests.faults.faults_helpers import Make, bet_ops, fault, fault_window

OPEN_1 = {"round": 1, "phase": "betting_open"}


def run(bench: Bench, make_schedule: Make, *faults: dict[str, object]) -> RunResult:
    result = run_schedule(bench, make_schedule(*faults))
    assert result.passed, result.report.lines()
    assert not result.aborted
    return result


def ends(result: RunResult) -> dict[str, RoundEvent]:
    assert result.final is not None
    return {e.round_id: e for e in result.final.events if e.ends_round}


@pytest.mark.parametrize("kind", ["serial_flip", "serial_drop"])
def test_serial_noise_on_the_reader_pauses_and_refunds_never_misreads(
    bench: Bench, make_schedule: Make, kind: str
) -> None:
    result = run(bench, make_schedule, fault(kind, target="reader", at=OPEN_1, duration=3.0, rate=1.0))
    assert result.serial_counts["reader"][kind.removeprefix("serial_")] > 0
    assert result.final is not None
    paused = [e for e in result.final.events if e.kind == "paused" and e.round_id == "1"]
    assert paused and "reader link down" in paused[0].reason
    assert ends(result)["1"].kind == "cancelled"  # ERR-3 after the pause: every bet refunded
    assert ends(result)["2"].kind == "settled"


@pytest.mark.parametrize("kind", ["serial_duplicate", "serial_reorder"])
def test_duplicated_or_reordered_frames_are_absorbed(bench: Bench, make_schedule: Make, kind: str) -> None:
    result = run(bench, make_schedule, fault(kind, target="reader", at=OPEN_1, duration=3.0, rate=1.0))
    assert result.serial_counts["reader"][kind.removeprefix("serial_")] > 0
    assert ends(result)["1"].kind == "settled"


def test_serial_latency_delays_the_result(bench: Bench, make_schedule: Make) -> None:
    base = run(bench, make_schedule)
    slow = run(bench, make_schedule, fault("serial_latency", target="reader", at=OPEN_1, duration=3.0, delay=0.5))
    assert ends(slow)["1"].at - ends(base)["1"].at >= 0.5
    assert ends(slow)["1"].faces == ends(base)["1"].faces


def test_unplugged_shaker_means_no_shake_was_seen(bench: Bench, make_schedule: Make) -> None:
    result = run(bench, make_schedule, fault("serial_unplug", target="shaker", at=OPEN_1, duration=1.0))
    end = ends(result)["1"]
    assert (end.kind, end.clause) == ("void", "SH-4a")


def test_disconnected_player_sends_nothing_then_reconnects(bench: Bench, make_schedule: Make) -> None:
    result = run(bench, make_schedule, fault("player_disconnect", target="p1", at=OPEN_1, duration=1.0))
    start, heal = fault_window(result.history, "player_disconnect")
    inside = [op for op in bet_ops(result.history, "p1") if start <= op.t < heal]
    assert inside and all(op.type == "fail" and op.detail.startswith("disconnected") for op in inside)
    assert all(op.type == "ok" for op in bet_ops(result.history, "p2"))
    assert any(op.type == "ok" and op.t > heal for op in bet_ops(result.history, "p1"))


def test_blackholed_bets_never_arrive(bench: Bench, make_schedule: Make) -> None:
    result = run(bench, make_schedule, fault("player_blackhole", target="p1", at=OPEN_1, duration=1.0))
    lost = bet_ops(result.history, "p1", "unknown")
    assert len(lost) == 2  # both round-1 bets
    assert result.final is not None
    recorded = {r.client_bet_id for r in result.final.records["p1"]}
    assert not recorded & {op.client_bet_id for op in lost}


def test_reset_connections_deliver_the_bet_but_lose_the_reply(bench: Bench, make_schedule: Make) -> None:
    result = run(bench, make_schedule, fault("player_reset", target="p1", at=OPEN_1, duration=1.0))
    unknown = bet_ops(result.history, "p1", "unknown")
    assert len(unknown) == 2
    assert result.final is not None
    rows = {r.client_bet_id: r for r in result.final.records["p1"]}
    assert all(rows[op.client_bet_id].result != "pending" for op in unknown)  # present and resolved


def test_player_latency_delays_each_request(bench: Bench, make_schedule: Make) -> None:
    result = run(bench, make_schedule, fault("player_latency", target="p1", at=OPEN_1, duration=1.0, delay=1.5))
    invoked = {op.client_bet_id: op.t for op in result.history if op.f == "bet" and op.type == "invoke"}
    start, heal = fault_window(result.history, "player_latency")
    slow = [op for op in bet_ops(result.history, "p1") if start <= invoked[op.client_bet_id] < heal]
    assert slow and all(round(op.t - invoked[op.client_bet_id], 6) == 1.5 for op in slow)
    # sent during round 1, it arrives after that round ended: the adapter sends no round id, so round 2 takes it
    assert {op.round_id for op in slow} == {"2"}


@pytest.mark.parametrize("phase", ["betting_open", "shaking", "betting_closed"])
def test_server_kill_cancels_the_round_in_progress_and_refunds(bench: Bench, make_schedule: Make, phase: str) -> None:
    result = run(bench, make_schedule, fault("server_kill", at={"round": 1, "phase": phase}, duration=0.5))
    end = ends(result)["1"]
    assert (end.kind, end.clause, end.reason) == ("cancelled", "ERR-3", "server restart")
    assert result.final is not None
    assert all(r.result == "refund" for r in result.final.records["p1"] if r.round_id == "1")
    assert any(op.f == "heal" and op.detail.startswith("server_kill") for op in result.history)


@pytest.mark.parametrize(
    ("kind", "extra", "end_kind", "clause", "reshake"),
    [
        ("table_drop", {"item": "plate"}, "settled", "", "SH-2"),
        ("table_standing", {"token": 2}, "settled", "", "SH-3"),
        ("table_touch", {}, "void", "SH-5", ""),
        ("table_early_lift", {}, "void", "SH-4b", ""),
        ("table_no_shake", {}, "void", "SH-4a", ""),
    ],
)
def test_table_incidents_reach_the_server(
    bench: Bench, make_schedule: Make, kind: str, extra: dict[str, object], end_kind: str, clause: str, reshake: str
) -> None:
    result = run(bench, make_schedule, fault(kind, at={"round": 1}, **extra))
    end = ends(result)["1"]
    assert (end.kind, end.clause) == (end_kind, clause)
    assert result.final is not None
    reshakes = [e.clause for e in result.final.events if e.kind == "reshake" and e.round_id == "1"]
    assert reshakes == ([reshake] if reshake else [])


def test_overlap_is_spread_and_settled_on_the_true_faces(bench: Bench, make_schedule: Make) -> None:
    base = run(bench, make_schedule)
    result = run(bench, make_schedule, fault("table_overlap", at={"round": 1}))
    assert ends(result)["1"].kind == "settled"
    assert ends(result)["1"].at > ends(base)["1"].at  # spreading the tokens took the dealer time


def test_time_triggered_fault_fires_at_its_time(bench: Bench, make_schedule: Make) -> None:
    result = run(bench, make_schedule, fault("player_blackhole", target="all", at={"time": 1.5}, duration=0.2))
    start, heal = fault_window(result.history, "player_blackhole")
    assert 1.5 <= start < 1.52 and heal - start == pytest.approx(0.2, abs=0.011)
