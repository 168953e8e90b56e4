"""The audit pipeline on real CSV files: verdicts, settlement check, measured RTP and the PNG plots."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.judge.paytable import returned
from harness.stats.audit import audit_file, audit_files, settlement_mismatches
from harness.stats.defects import defect
from harness.stats.readers import RecordError, read_bets
from harness.stats.settlement import draw_patterns, make_generator
from simulator.bets import BetType
from tests.stats.stats_helpers import WriteRows, outcome_rows

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def patterns(p: float, rounds: int, seed: int) -> list[int]:
    return [int(x) for x in draw_patterns(make_generator(seed), rounds, [p] * 4)]


def test_fair_outcomes_pass_and_plots_are_real_pngs(write_outcomes: WriteRows, tmp_path: Path) -> None:
    path = write_outcomes("OUTCOMES.csv", outcome_rows(patterns(0.5, 12_000, seed=21)))
    result = audit_file(path, tmp_path / "plots")
    assert result.passed and result.alarm is None and result.verdict == "PASS" and result.exit_code == 0
    assert result.kind == "outcomes" and result.fairness.settled == 12_000
    assert result.reason.startswith("PASS: none of 28 tests rejects at family-wise alpha 0.01 over 12000")
    names = sorted(p.name for p in result.plots)
    assert names == ["monitor.png", "outcome_histogram.png", "rtp_convergence.png"]
    for plot in result.plots:
        assert plot.read_bytes()[:8] == PNG_MAGIC
        assert plot.stat().st_size > 5_000


def test_biased_outcomes_fail_with_an_alarm(write_outcomes: WriteRows) -> None:
    path = write_outcomes("OUTCOMES.csv", outcome_rows(patterns(0.52, 12_000, seed=22)))
    result = audit_file(path)
    assert not result.passed
    assert result.alarm is not None and result.alarm.direction == "red"
    assert result.to_dict()["monitor"]["alarm"]["direction"] == "red"
    # the live alarm is inside the family: the monitor's own test is rejected too, on the same rounds
    assert next(t for t in result.fairness.tests if t.name == "monitor").rejected
    assert result.verdict == "FAIL" and result.exit_code == 1


def test_an_alarm_always_means_the_audit_of_those_rounds_fails(write_outcomes: WriteRows) -> None:
    full = patterns(0.515, 12_000, seed=27)
    alarm = audit_file(write_outcomes("ALL.csv", outcome_rows(full))).alarm
    assert alarm is not None
    upto = audit_file(write_outcomes("UPTO.csv", outcome_rows(full[: alarm.round])))
    assert upto.alarm == alarm and upto.verdict == "FAIL"
    assert "monitor" in {t.name for t in upto.fairness.rejected()}


def test_fewer_rounds_than_the_minimum_are_insufficient_not_a_pass(write_outcomes: WriteRows) -> None:
    result = audit_file(write_outcomes("OUTCOMES.csv", outcome_rows(patterns(0.5, 500, seed=28))))
    assert result.verdict == "INSUFFICIENT" and result.exit_code == 3 and not result.passed
    assert result.reason.startswith("INSUFFICIENT: 500 settled rounds, fewer than the 10,000")
    # a rejection on few rounds is still a FAIL: the budget holds at any length
    sticky = [int(p) for p in defect("sticky_0.10").generate(make_generator(29), 1, 3_000)[0]]
    assert audit_file(write_outcomes("STICKY.csv", outcome_rows(sticky))).verdict == "FAIL"


def bets_rows(pats: list[int]) -> list[list[object]]:
    rows: list[list[object]] = []
    for i, pat in enumerate(pats):
        reds = pat.bit_count()
        faces = "".join("R" if pat >> j & 1 else "W" for j in range(4))
        for bet in (BetType.BIG, BetType.FOUR_RED):
            back = returned(bet, reds, 100)
            result = "win" if back > 100 else ("push" if back == 100 else "lose")
            bet_id, settled_at = f"b{i}{bet}", i + 1
            rows.append(
                [
                    bet_id,
                    f"r{i}",
                    "p1",
                    i,
                    settled_at,
                    bet.value,
                    100,
                    result,
                    back,
                    "settled",
                    faces,
                    reds,
                    0,
                    0,
                ]
            )
    return rows


def test_bets_file_gives_measured_rtp_beside_theory(write_bets: WriteRows) -> None:
    path = write_bets("BETS.csv", bets_rows(patterns(0.5, 2_000, seed=23)))
    result = audit_file(path)
    assert result.kind == "bets" and not result.mismatches
    lines = {(line.bet.value if line.bet else "all"): line for line in result.rtp}
    assert set(lines) == {"big", "four_red", "all"}
    assert lines["big"].bets == 2_000 and lines["big"].consistent
    big = next(line for line in result.to_dict()["rtp"] if line["bet"] == "big")
    assert big["theoretical"] == "0.9875"


def test_a_bet_paid_against_the_paytable_fails_the_audit(write_bets: WriteRows) -> None:
    rows = bets_rows(patterns(0.5, 200, seed=24))
    winner = next(r for r in rows if r[7] == "win")
    winner[8] = int(str(winner[8])) + 50  # overpaid by 50 minor units
    path = write_bets("BETS.csv", rows)
    assert settlement_mismatches(read_bets(path)) == (winner[0],)
    result = audit_file(path)
    assert result.verdict == "FAIL" and result.fairness.passed
    assert result.reason.startswith(f"FAIL: 1 bet(s) settled against the paytable (first {winner[0]})")


def test_bet_records_of_several_players_are_merged(write_bets: WriteRows, tmp_path: Path) -> None:
    rows = bets_rows(patterns(0.5, 300, seed=25))
    first = write_bets("BETS_p1.csv", rows[:300])
    second = write_bets("BETS_p2.csv", rows[300:])
    merged = audit_files([first, second])
    assert merged.fairness.settled == 300
    assert next(line for line in merged.rtp if line.bet is None).bets == 600


def test_mixed_formats_are_refused_by_name(write_bets: WriteRows, write_outcomes: WriteRows) -> None:
    bets = write_bets("BETS.csv", bets_rows(patterns(0.5, 10, seed=26)))
    outcomes = write_outcomes("OUTCOMES.csv", outcome_rows([1, 2]))
    with pytest.raises(RecordError, match=r"OUTCOMES\.csv: not the format of .*BETS\.csv \(bets\)"):
        audit_files([bets, outcomes])
