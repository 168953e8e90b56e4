"""The oracle is proven able to fail: a deliberately wrong server (see oracle_doubles) is caught, and the exact
differences it reports are asserted. Expected amounts are worked out by hand from RULES.md."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.judge import Difference, Verdict


def _play(adapter: str, script: list[dict[str, Any]], bets: list[tuple[str, int]]) -> Verdict:
    """One round on the in-process bench with ``adapter`` as the server; alice starts with 10,000."""
    bench = load_bench("in-process")
    bench = replace(bench, server=replace(bench.server, adapter=adapter))
    rig = Rig.build(bench, {"alice": 10_000}, script)
    try:
        rig.adapter.connect("alice")
        rid = rig.open_round()
        for bet_type, stake in bets:
            assert rig.bet("alice", bet_type, stake).accepted
        rig.play_to_end(rid)
        return rig.verdict()
    finally:
        rig.close()


def test_the_reference_server_passes_the_same_round() -> None:
    verdict = _play(
        "harness.bench.adapters.reference_inprocess:InProcessAdapter",
        [{"round": 1, "faces": "w w r r"}],
        [("big", 1000)],
    )
    assert verdict.passed, verdict.summary()
    assert (verdict.rounds_checked, verdict.bets_checked) == (1, 1)


def test_big_paid_on_two_two_is_reported_with_round_bet_and_clause() -> None:
    verdict = _play("tests.oracle.oracle_doubles:BigPaysOnTwoTwo", [{"round": 1, "faces": "w w r r"}], [("big", 1000)])
    # PAY-9: Big on two reds returns the stake (1,000); the double pays 1,000 + 960 = 1,960.
    assert verdict.differences == (
        Difference("1", "1", "PAY-9", "result of alice big 1000", "push", "win"),
        Difference("1", "1", "PAY-9", "returned for alice big 1000", "1000", "1960"),
        Difference("", "", "GLI 2.8.2", "balance of alice", "10000", "10960"),
    )
    assert not verdict.passed
    assert "round 1 bet 1 [PAY-9]: result of alice big 1000: expected push, server win" in verdict.summary()


def test_a_skipped_refund_on_a_touched_lift_is_reported_under_sh5() -> None:
    verdict = _play(
        "tests.oracle.oracle_doubles:SkipsRefund",
        [{"round": 1, "faces": "r r w w", "touch": True}],
        [("odd", 500), ("two_red", 1000)],
    )
    # SH-5: both stakes (500 and 1,000) must come back; the double keeps them: 10,000 - 1,500 = 8,500.
    assert verdict.differences == (
        Difference("1", "1", "SH-5", "returned for alice odd 500", "500", "0"),
        Difference("1", "2", "SH-5", "returned for alice two_red 1000", "1000", "0"),
        Difference("", "", "GLI 2.8.2", "balance of alice", "10000", "8500"),
    )


def test_a_misread_outcome_is_reported_as_an_outcome_difference() -> None:
    verdict = _play("tests.oracle.oracle_doubles:MisreadsToken3", [{"round": 1, "faces": "r r r w"}], [])
    assert verdict.differences == (Difference("1", "", "EQ-3", "outcome", "RRRW", "RRRR"),)


def test_a_misread_after_overlapping_tokens_names_sh1() -> None:
    verdict = _play(
        "tests.oracle.oracle_doubles:MisreadsToken3", [{"round": 1, "faces": "w w w r", "overlap": True}], []
    )
    assert verdict.differences == (Difference("1", "", "SH-1", "outcome", "WWWR", "WWWW"),)


def test_a_bet_record_that_disagrees_with_the_round_history_is_reported() -> None:
    verdict = _play("tests.oracle.oracle_doubles:StaleRecord", [{"round": 1, "faces": "r w w w"}], [("one_red", 100)])
    what = "round status in the bet record vs the round's events"
    assert verdict.differences == (Difference("1", "1", "GLI 4.14.2", what, "settled", "in_progress"),)
