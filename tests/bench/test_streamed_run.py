"""A rig that judges its run round by round (``Rig.stream_judging``, as ``xocdia-hil run`` does) reaches the verdict
the whole-run oracle reaches on the same seeded run, holds only the rounds not judged yet, and still counts every
bet and every unit of money: reading each round's bets once (the in-process adapter is ``RoundRecords``) and, through
an adapter that is not, the whole bet records in batches."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from harness.bench.adapters.capabilities import RoundRecords
from harness.bench.adapters.rewriting import RewritingAdapter
from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.cli.run import VISITS, WALLET, _with_profile

SEATS = 6


class Played(NamedTuple):
    verdict: str  # repr(Verdict)
    money: tuple[int, int]
    held: int  # the most bets sent the rig held at once
    held_truth: int  # ... table events
    held_trace: int  # ... serial trace records
    held_events: int  # ... the server's round events (the adapter's)
    accepted: int
    passed: bool


def _play(profile: str, rounds: int, stream: bool, every: int | None, by_round: bool = True) -> Played:
    bench = load_bench("in-process")
    if profile != bench.profile:
        bench = _with_profile(bench, profile)
    if not by_round:  # passed through unchanged, but only the adapter interface: no RoundRecords
        bench = RewritingAdapter.on(bench)
    players = {f"p{s:02d}.{v}": WALLET for s in range(1, SEATS + 1) for v in range(1, VISITS + 1)}
    with Rig.build(bench, players, crowd=SEATS, seed=5, wallets_per_seat=VISITS) as rig:
        assert isinstance(rig.adapter, RoundRecords) is by_round
        if stream:
            rig.stream_judging(keep_checks=True, every=every)
        held = held_truth = held_trace = held_events = 0
        for _ in range(rounds):
            rig.play_to_end(rig.open_round())
            rig.judge_ended()
            held = max(held, len(rig.sent))
            held_truth = max(held_truth, len(rig.truth))
            held_trace = max(held_trace, len(rig.recorder.records))
            held_events = max(held_events, len(rig.adapter.round_events()))
        rig.run_for(0.2)
        verdict = rig.verdict()
        tally = rig.crowd_tally
        money = rig.money()
        return Played(repr(verdict), money, held, held_truth, held_trace, held_events, tally.accepted, verdict.passed)


@pytest.mark.parametrize(
    ("profile", "by_round", "every"),
    [("certification", True, None), ("chaotic", True, None), ("certification", False, 7), ("chaotic", False, 7)],
)
def test_a_run_judged_round_by_round_gets_the_whole_run_verdict(
    profile: str, by_round: bool, every: int | None
) -> None:
    whole = _play(profile, 60, stream=False, every=1)
    streamed = _play(profile, 60, True, every, by_round)
    assert streamed.verdict == whole.verdict
    assert whole.passed and whole.accepted > 200
    assert streamed.money == whole.money and whole.money[0] > 0
    assert streamed.accepted == whole.accepted
    assert whole.held >= whole.accepted  # the whole run keeps every bet sent, table event and trace record ...
    assert streamed.held < whole.accepted / 3  # ... the streamed one only those of the rounds not judged yet
    assert streamed.held_truth < whole.held_truth / 3 and streamed.held_trace < whole.held_trace / 3
    if by_round:  # the in-process adapter forgets the events judged (ForgetsRoundEvents); the rewriting one cannot
        assert streamed.held_events < whole.held_events / 3


def test_stream_judging_is_refused_once_a_round_has_opened() -> None:
    bench = load_bench("in-process")
    with Rig.build(bench, {"p01.1": WALLET}, crowd=0) as rig:
        with pytest.raises(ValueError, match="every must be >= 1 round, got 0"):
            rig.stream_judging(every=0)
        rig.open_round()
        with pytest.raises(ValueError, match="before the first round"):
            rig.stream_judging()
