"""The oracle is proven able to fail: the reference server, made to misreport one thing the way a buggy server would
(a :class:`~harness.bench.adapters.rewriting.RewritingAdapter` hook: rounds, devices and bets stay real), is caught,
and the exact differences it reports are asserted. Expected amounts are worked out by hand from RULES.md."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.bench.adapters.rewriting import RewritingAdapter
from harness.bench.config import Bench, load_bench
from harness.bench.rig import Rig
from harness.judge import Difference, Verdict
from harness.records import BetRecordRow, RoundEvent

BENCH = load_bench("in-process")


def _play(bench: Bench, script: list[dict[str, Any]], bets: list[tuple[str, int]]) -> Verdict:
    """One round on ``bench`` (the in-process bench, its server's reports perhaps rewritten); alice has 10,000."""
    with Rig.build(bench, {"alice": 10_000}, script) as rig:
        rig.adapter.connect("alice")
        rid = rig.open_round()
        for bet_type, stake in bets:
            assert rig.bet("alice", bet_type, stake).accepted
        rig.play_to_end(rid)
        return rig.verdict()


def _big_paid_on_two_two(row: BetRecordRow) -> BetRecordRow:
    """Pays Big as a win on two reds (RULES.md PAY-9: the stake is returned, a push); the wallet follows."""
    if row.bet_type == "big" and row.outcome.count("R") == 2 and row.round_status == "settled":
        return replace(row, result="win", returned=row.wagered * 196 // 100)
    return row


def test_the_reference_server_passes_the_same_round() -> None:
    verdict = _play(BENCH, [{"round": 1, "faces": "w w r r"}], [("big", 1000)])
    assert verdict.passed, verdict.summary()
    assert (verdict.rounds_checked, verdict.bets_checked) == (1, 1)


def test_big_paid_on_two_two_is_reported_with_round_bet_and_clause() -> None:
    bench = RewritingAdapter.on(BENCH, records=_big_paid_on_two_two)
    verdict = _play(bench, [{"round": 1, "faces": "w w r r"}], [("big", 1000)])
    # PAY-9: Big on two reds returns the stake (1,000); the double pays 1,000 + 960 = 1,960.
    assert verdict.differences == (
        Difference("1", "1", "PAY-9", "result of alice big 1000", "push", "win"),
        Difference("1", "1", "PAY-9", "returned for alice big 1000", "1000", "1960"),
        Difference("", "", "GLI 2.8.2", "balance of alice", "10000", "10960"),
    )
    assert not verdict.passed
    assert "round 1 bet 1 [PAY-9]: result of alice big 1000: expected push, server win" in verdict.summary()


def test_a_skipped_refund_on_a_touched_lift_is_reported_under_ref_1() -> None:
    # marks the bets of a void round refunded but never credits the stakes back
    skips_refund = RewritingAdapter.on(BENCH, records=lambda r: replace(r, returned=0) if r.result == "refund" else r)
    verdict = _play(skips_refund, [{"round": 1, "faces": "r r w w", "touch": True}], [("odd", 500), ("two_red", 1000)])
    # SH-5 voids the round and REF-1 returns both stakes (500 and 1,000) in full; the double keeps them:
    # 10,000 - 1,500 = 8,500. Refunded, but not in full: the refund's clause, not the void's.
    assert verdict.differences == (
        Difference("1", "1", "REF-1", "returned for alice odd 500", "500", "0"),
        Difference("1", "2", "REF-1", "returned for alice two_red 1000", "1000", "0"),
        Difference("", "", "GLI 2.8.2", "balance of alice", "10000", "8500"),
    )


def _token_3_misread(event: RoundEvent) -> RoundEvent:
    """Publishes settled outcomes with token 3 read the wrong colour (the reader, not the physical tokens)."""
    if event.kind == "settled" and event.faces:
        return replace(event, faces=event.faces[:3] + {"R": "W", "W": "R"}[event.faces[3]])
    return event


MISREADS_TOKEN_3 = RewritingAdapter.on(BENCH, events=_token_3_misread)


def test_a_misread_outcome_is_reported_as_an_outcome_difference() -> None:
    verdict = _play(MISREADS_TOKEN_3, [{"round": 1, "faces": "r r r w"}], [])
    assert verdict.differences == (Difference("1", "", "EQ-3", "outcome", "RRRW", "RRRR"),)


def test_a_misread_after_overlapping_tokens_names_sh1() -> None:
    verdict = _play(MISREADS_TOKEN_3, [{"round": 1, "faces": "w w w r", "overlap": True}], [])
    assert verdict.differences == (Difference("1", "", "SH-1", "outcome", "WWWR", "WWWW"),)


def test_a_bet_record_that_disagrees_with_the_round_history_is_reported() -> None:
    # its bet record never catches up: every bet still shows its round in progress after the round ended
    stale = RewritingAdapter.on(BENCH, records=lambda r: replace(r, round_status="in_progress"))
    verdict = _play(stale, [{"round": 1, "faces": "r w w w"}], [("one_red", 100)])
    what = "round status in the bet record vs the round's events"
    assert verdict.differences == (Difference("1", "1", "GLI 4.14.2", what, "settled", "in_progress"),)
