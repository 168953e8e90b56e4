"""A rig's tap: what a run publishes, and that the run ends exactly as it does without a tap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.bench.config import load_bench
from harness.bench.rig import BUILD_HOOKS, Rig
from harness.bench.tap import rig_taps, tap_of, tap_rig
from harness.feed import Feed, FeedKind

BENCH = Path(__file__).resolve().parents[2] / "fixtures" / "benches" / "in-process.yaml"
TOUCH = [{"round": 2, "touch": True}]  # SH-5: the bowl touches a token on lift: the round is void
PLAYERS = {f"p{seat:02d}.{visit}": 100_000 for seat in range(1, 4) for visit in range(1, 3)}  # the crowd's names


def _play(feed: Feed | None, rounds: int = 3) -> tuple[list[Any], list[Any], str]:
    bench = load_bench(str(BENCH))
    with Rig.build(bench, PLAYERS, script=TOUCH, crowd=3) as rig:
        tap = tap_rig(rig, feed) if feed is not None else None
        for _ in range(rounds):
            rig.play_to_end(rig.open_round())
        rig.run_for(0.2)
        verdict = rig.verdict()
        if tap is not None:
            tap.finish(verdict, "done")
        truth = [e.to_dict() for e in rig.truth]
        server = [(e.round_id, e.kind, e.at, e.clause, e.faces) for e in rig.adapter.round_events()]
        return truth, server, verdict.summary()


def test_the_tap_changes_nothing_in_a_seeded_run() -> None:
    assert _play(Feed()) == _play(None)


def test_a_run_publishes_rounds_frames_bets_server_events_and_verdicts() -> None:
    feed = Feed()
    _play(feed)
    kinds = {e.kind for e in feed.events}
    assert {FeedKind.BENCH, FeedKind.ROUND, FeedKind.TABLE, FeedKind.FRAME} <= kinds
    lamps = [e.data["lamp"] for e in feed.events if e.kind == FeedKind.FRAME and "lamp" in e.data]
    assert lamps[:3] == ["OPEN", "CLOSE", "OPEN"]
    assert {FeedKind.BET, FeedKind.SERVER, FeedKind.VERDICT, FeedKind.BALANCE, FeedKind.END} <= kinds
    balances = [e.data["balances"] for e in feed.events if e.kind == FeedKind.BALANCE]
    assert balances and all(isinstance(v, int) for b in balances for v in b.values())
    verdicts = [e.data for e in feed.events if e.kind == FeedKind.VERDICT and not e.data.get("final")]
    assert [v["table_round"] for v in verdicts] == [1, 2, 3]
    assert verdicts[1]["expected"] == "void (SH-5)"
    assert all(v["ok"] for v in verdicts)
    final = [e.data for e in feed.events if e.kind == FeedKind.VERDICT and e.data.get("final")]
    assert final and final[0]["ok"] and final[0]["summary"].startswith("oracle: PASS")
    frames = [e.data for e in feed.events if e.kind == FeedKind.FRAME]
    assert not any(f["msg"].startswith(("HB", "ACK")) for f in frames)  # control frames are folded away
    touch = [f for f in frames if f["line"] == "bowl" and "touch=True" in f["msg"]]
    assert touch and touch[0]["raw"].startswith("$1 ")
    assert [e.seq for e in feed.events] == list(range(len(feed.events)))
    times = [e.t for e in feed.events]
    assert times == sorted(times)


def test_rig_taps_taps_every_rig_built_in_the_block() -> None:
    feed = Feed()
    bench = load_bench(str(BENCH))
    with rig_taps(feed, label=lambda: "scenario") as taps:
        for _ in range(2):
            with Rig.build(bench, PLAYERS, crowd=0) as rig:
                assert tap_of(rig) is taps[-1]
                rig.play_to_end(rig.open_round())
    assert len(taps) == 2
    assert not BUILD_HOOKS
    benches = [e for e in feed.events if e.kind == FeedKind.BENCH]
    assert len(benches) == 2 and benches[1].t > benches[0].t
    assert len([e for e in feed.events if e.kind == FeedKind.VERDICT]) == 2
