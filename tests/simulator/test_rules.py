"""Rule handling as the physical table does it, forced by scripts on a table where nothing happens by chance.

The profile is the ``quiet`` fixture: every incident rate 0 and fixed timings (place 1 s, shake 4 s, react 0.5 s,
lift 1 s, rearrange 3 s, reassemble 8 s; betting 15 s, gap 4 s, max_reshakes 3, pause_timeout 60 s, supervisor
30 s). Expected times below are added up from those numbers. A plain round 1: opened 0, tokens placed 0, bowl 1,
shake 1-5, betting closed 15, lift done 16.5, settled 16.5.
"""

from __future__ import annotations

from typing import Any

import pytest

from simulator.events import (
    BettingClosed,
    BowlLifted,
    DropItem,
    Dropped,
    Event,
    Paused,
    PauseReason,
    Rearranged,
    Reshake,
    ReshakeReason,
    Resumed,
    Revealed,
    RoundEnded,
    RoundStatus,
    ShakeStarted,
)
from tests.simulator.sim_helpers import by_round, ended, kinds, profile_of, run_table, shipped

Data = dict[str, Any]


def round_one(quiet: Data, script: list[dict[str, Any]], rounds: int = 2, **fields: Any) -> list[Event]:
    events = run_table(profile_of(quiet, **fields), seed=5, rounds=rounds, script=script)
    return by_round(events)[1]


def only(events: list[Event], cls: type[Event]) -> list[Any]:
    return [e for e in events if type(e) is cls]


def test_a_plain_round_follows_the_fixed_timings(quiet: Data) -> None:
    events = round_one(quiet, [])
    assert kinds(events) == [
        "round_opened",
        "tokens_placed",
        "bowl_placed",
        "shake_started",
        "shake_ended",
        "betting_closed",
        "bowl_lifted",
        "revealed",
        "round_ended",
    ]
    assert [e.t for e in events] == [0, 0, 1, 1, 5, 15, 16.5, 16.5, 16.5]
    end = events[-1]
    assert isinstance(end, RoundEnded)
    assert (end.status, end.clause, end.reshakes) == (RoundStatus.SETTLED, None, 0)
    faces = only(events, Revealed)[0].faces
    assert (end.faces, end.reds) == (faces, faces.count("R"))


def test_forced_faces_r_r_w_w_settle_with_two_reds(quiet: Data) -> None:
    events = round_one(quiet, [{"round": 1, "faces": "r r w w"}])
    assert only(events, Revealed)[0].faces == "RRWW"
    end = only(events, RoundEnded)[0]
    assert (end.status, end.faces, end.reds) == (RoundStatus.SETTLED, "RRWW", 2)


def test_sh3_a_standing_token_on_shake_1_means_a_reshake_then_a_settled_round(quiet: Data) -> None:
    events = round_one(quiet, [{"round": 1, "standing": [2]}])
    assert kinds(events)[6:] == [
        "bowl_lifted",
        "revealed",
        "reshake",
        "bowl_placed",
        "shake_started",
        "shake_ended",
        "bowl_lifted",
        "revealed",
        "round_ended",
    ]
    first, second = only(events, Revealed)
    assert first.faces[2] == "S" and (first.t, second.t) == (16.5, 22.5)
    assert only(events, Reshake) == [Reshake(16.5, 1, ReshakeReason.STANDING, 1)]
    assert [e.shake for e in only(events, ShakeStarted)] == [1, 2]
    end = only(events, RoundEnded)[0]
    assert (end.t, end.status, end.reshakes, end.faces) == (22.5, RoundStatus.SETTLED, 1, second.faces)
    assert "S" not in second.faces


def test_sh1_overlap_is_rearranged_with_the_outcome_unchanged(quiet: Data) -> None:
    events = round_one(quiet, [{"round": 1, "faces": "r w r w", "overlap": True}])
    assert only(events, Revealed) == [Revealed(16.5, 1, "RWRW", True)]
    assert only(events, Rearranged) == [Rearranged(19.5, 1, "RWRW")]
    assert only(events, RoundEnded) == [RoundEnded(19.5, 1, RoundStatus.SETTLED, None, "RWRW", 2, 0)]


@pytest.mark.parametrize("item", list(DropItem))
def test_sh2_a_drop_means_reassemble_and_reshake(quiet: Data, item: DropItem) -> None:
    events = round_one(quiet, [{"round": 1, "drop": item.value}])
    dealer = [k for k in kinds(events) if k != "betting_closed"]  # the lamp may close during the re-shake
    assert dealer == [
        "round_opened",
        "tokens_placed",
        "bowl_placed",
        "shake_started",
        "dropped",
        "reassembled",
        "reshake",
        "bowl_placed",
        "shake_started",
        "shake_ended",
        "bowl_lifted",
        "revealed",
        "round_ended",
    ]
    (drop,) = only(events, Dropped)
    assert (drop.shake, drop.item) == (1, item)
    assert 1.0 <= drop.t < 5.0  # during the first shake
    if item is DropItem.TOKEN:
        assert drop.token in (0, 1, 2, 3)
    else:
        assert drop.token is None
    reassembled = events[kinds(events).index("reassembled")]
    assert reassembled.t == pytest.approx(drop.t + 8.0)
    assert only(events, Reshake) == [Reshake(reassembled.t, 1, ReshakeReason.DROP, 1)]
    end = only(events, RoundEnded)[0]
    assert (end.status, end.reshakes) == (RoundStatus.SETTLED, 1)


def test_sh4a_a_forgotten_shake_voids_the_round(quiet: Data) -> None:
    # Forced faces include a standing token: laid by hand, without a shake, every token lies flat.
    events = round_one(quiet, [{"round": 1, "forget_shake": True, "faces": "s r w w"}])
    assert kinds(events) == [
        "round_opened",
        "tokens_placed",
        "bowl_placed",
        "shake_skipped",
        "betting_closed",
        "bowl_lifted",
        "revealed",
        "round_ended",
    ]
    assert only(events, Revealed)[0].faces == "WRWW"
    assert only(events, RoundEnded) == [RoundEnded(16.5, 1, RoundStatus.VOID, "SH-4a", None, None, 0)]


def test_sh4b_an_early_lift_voids_the_round_before_betting_closes(quiet: Data) -> None:
    events = round_one(quiet, [{"round": 1, "early_lift": True}])
    lift = only(events, BowlLifted)[0]
    assert lift.early and not lift.touched
    assert lift.t < 15.0  # before the deadline of round 1
    assert only(events, BettingClosed) == []
    end = only(events, RoundEnded)[0]
    assert (end.t, end.status, end.clause, end.faces, end.reds) == (lift.t, RoundStatus.VOID, "SH-4b", None, None)


def test_several_void_causes_the_first_established_decides(quiet: Data) -> None:
    # RULES.md, "Precedence of void causes": an early lift (during betting) comes before the forgotten shake
    # (established at the close); a forgotten shake before a touch on a lift after the close.
    early = round_one(quiet, [{"round": 1, "forget_shake": True, "early_lift": True, "touch": True}])
    assert only(early, RoundEnded)[0].clause == "SH-4b"
    assert only(early, BowlLifted)[0].early
    late = round_one(quiet, [{"round": 1, "forget_shake": True, "touch": True, "touch_token": 1}])
    assert only(late, BowlLifted) == [BowlLifted(16.5, 1, False, True, 1)]
    assert only(late, RoundEnded) == [RoundEnded(16.5, 1, RoundStatus.VOID, "SH-4a", None, None, 0)]


def test_sh5_a_touch_on_lift_voids_the_round(quiet: Data) -> None:
    events = round_one(quiet, [{"round": 1, "touch": True, "touch_token": 2}])
    assert only(events, BowlLifted) == [BowlLifted(16.5, 1, False, True, 2)]
    assert only(events, RoundEnded) == [RoundEnded(16.5, 1, RoundStatus.VOID, "SH-5", None, None, 0)]


def test_standing_on_every_shake_past_the_cap_pauses_then_cancels(quiet: Data) -> None:
    script = [{"round": 1, "shake": k, "standing": [0]} for k in (1, 2, 3, 4)] + [{"round": 1, "supervisor": 90.0}]
    events = round_one(quiet, script)
    # Each re-shake adds place 1 + shake 4 + lift 1 = 6 s to the first reveal at 16.5.
    assert [e.t for e in only(events, Revealed)] == [16.5, 22.5, 28.5, 34.5]
    assert [(e.reason, e.count) for e in only(events, Reshake)] == [(ReshakeReason.STANDING, n) for n in (1, 2, 3)]
    assert only(events, Paused) == [Paused(34.5, 1, PauseReason.RESHAKE_CAP)]
    # The supervisor needs 90 s (> pause_timeout 60 s): ERR-3 cancels at 94.5.
    assert only(events, Resumed) == []
    assert only(events, RoundEnded) == [RoundEnded(94.5, 1, RoundStatus.CANCELLED, "ERR-3", None, None, 3)]


def test_past_the_cap_a_supervisor_who_resolves_in_time_resumes_the_round(quiet: Data) -> None:
    # ERR-2 applies to the cap's pause like any problem: the supervisor needs 30 s (the quiet profile's draw,
    # < pause_timeout 60 s), the round resumes at 64.5 with the re-shake it needed and settles on shake 5.
    script = [{"round": 1, "shake": k, "standing": [0]} for k in (1, 2, 3, 4)] + [
        {"round": 1, "shake": 5, "faces": "r r w r"}
    ]
    events = round_one(quiet, script)
    assert only(events, Paused) == [Paused(34.5, 1, PauseReason.RESHAKE_CAP)]
    assert only(events, Resumed) == [Resumed(64.5, 1)]
    assert only(events, Reshake)[-1] == Reshake(64.5, 1, ReshakeReason.STANDING, 4)
    # place 1 + shake 4 + lift 1 after the resume
    assert only(events, RoundEnded) == [RoundEnded(70.5, 1, RoundStatus.SETTLED, None, "RRWR", 3, 4)]


def test_after_a_resume_the_cap_counts_again_from_zero(quiet: Data) -> None:
    # cap 1: shake 1 stands (re-shake 1), shake 2 stands (cap pause, resumed: re-shake 2 belongs to the old
    # budget), shake 3 stands (re-shake 3, the first of the new budget), shake 4 stands (a second cap pause).
    script = [{"round": 1, "shake": k, "standing": [2]} for k in (1, 2, 3, 4)] + [
        {"round": 1, "shake": 5, "faces": "w w w w"}
    ]
    events = round_one(quiet, script, table__max_reshakes=1)
    assert [p.reason for p in only(events, Paused)] == [PauseReason.RESHAKE_CAP] * 2
    assert len(only(events, Resumed)) == 2
    end = only(events, RoundEnded)[0]
    assert (end.status, end.faces, end.reshakes) == (RoundStatus.SETTLED, "WWWW", 4)


@pytest.mark.parametrize("cap", [0, 1, 2])
def test_the_reshake_cap_is_a_profile_setting(quiet: Data, cap: int) -> None:
    script = [{"round": 1, "shake": k, "standing": [3]} for k in range(1, cap + 2)] + [{"round": 1, "supervisor": 61}]
    events = round_one(quiet, script, table__max_reshakes=cap)
    assert len(only(events, ShakeStarted)) == cap + 1
    assert len(only(events, Reshake)) == cap
    assert [p.reason for p in only(events, Paused)] == [PauseReason.RESHAKE_CAP]
    end = only(events, RoundEnded)[0]
    assert (end.status, end.clause, end.reshakes) == (RoundStatus.CANCELLED, "ERR-3", cap)


def test_a_drop_on_every_shake_past_the_cap_pauses_without_reassembly(quiet: Data) -> None:
    script = [{"round": 1, "shake": k, "drop": "plate"} for k in (1, 2, 3, 4)] + [{"round": 1, "supervisor": 90}]
    events = round_one(quiet, script)
    assert [d.shake for d in only(events, Dropped)] == [1, 2, 3, 4]
    assert [(e.reason, e.count) for e in only(events, Reshake)] == [(ReshakeReason.DROP, n) for n in (1, 2, 3)]
    last_drop = only(events, Dropped)[-1]
    after = [k for e, k in zip(events, kinds(events), strict=True) if e.t >= last_drop.t and k != "betting_closed"]
    assert after[:2] == ["dropped", "paused"]
    assert "reassembled" not in after
    assert only(events, Paused)[0].reason is PauseReason.RESHAKE_CAP
    assert only(events, RoundEnded)[0].clause == "ERR-3"


def test_a_drop_past_the_cap_resolved_in_time_is_reassembled_after_the_resume(quiet: Data) -> None:
    script = [{"round": 1, "shake": 1, "drop": "bowl"}, {"round": 1, "shake": 2, "faces": "w r w w"}]
    events = round_one(quiet, script, table__max_reshakes=0)
    moves = [k for k in kinds(events) if k not in ("round_opened", "betting_closed")]
    assert moves[moves.index("dropped") :][:5] == ["dropped", "paused", "resumed", "reassembled", "reshake"]
    end = only(events, RoundEnded)[0]
    assert (end.status, end.faces, end.reshakes) == (RoundStatus.SETTLED, "WRWW", 1)


def test_err2_a_problem_resolved_in_time_resumes_and_moves_the_deadline(quiet: Data) -> None:
    events = round_one(quiet, [{"round": 1, "problem": {"after": 2.0, "resolve": 10.0}}])
    assert only(events, Paused) == [Paused(2.0, 1, PauseReason.EQUIPMENT)]
    assert only(events, Resumed) == [Resumed(12.0, 1)]
    # 15 s of betting plus the 10 s pause: betting closes at 25, the lift ends at 26.5.
    assert only(events, BettingClosed) == [BettingClosed(25.0, 1)]
    end = only(events, RoundEnded)[0]
    assert (end.t, end.status) == (26.5, RoundStatus.SETTLED)


def test_err3_a_problem_longer_than_the_pause_timeout_cancels(quiet: Data) -> None:
    events = round_one(quiet, [{"round": 1, "problem": {"after": 2.0, "resolve": 90.0}}])
    assert only(events, Paused) == [Paused(2.0, 1, PauseReason.EQUIPMENT)]
    assert only(events, Resumed) == []
    assert only(events, BettingClosed) == []
    assert only(events, BowlLifted) == []
    assert only(events, RoundEnded) == [RoundEnded(62.0, 1, RoundStatus.CANCELLED, "ERR-3", None, None, 0)]


def test_the_next_round_opens_after_the_gap(quiet: Data) -> None:
    events = run_table(profile_of(quiet), seed=5, rounds=3)
    opened = [e.t for e in events if e.kind == "round_opened"]
    # Each plain round: closes at +15, settles at +16.5, next opens 4 s later.
    assert opened == [0, 20.5, 41.0]


def outcomes(events: list[Event]) -> dict[int, tuple[object, ...]]:
    return {r: (e.status, e.clause, e.faces, e.reds, e.reshakes) for r, e in ended(events).items()}


@pytest.mark.parametrize(
    "step",
    [
        {"faces": "r r w w"},
        {"touch": True},
        {"standing": [1]},  # adds a re-shake to round 3
        {"drop": "bowl"},  # adds a re-shake to round 3
    ],
    ids=["faces", "touch", "standing", "drop"],
)
def test_scripting_round_3_leaves_every_other_round_unchanged(standard_data: Data, step: dict[str, Any]) -> None:
    profile = profile_of(standard_data)
    plain = run_table(profile, seed=7, rounds=12, players=10)
    scripted = run_table(profile, seed=7, rounds=12, players=10, script=[{"round": 3, **step}])
    before, after = outcomes(plain), outcomes(scripted)
    assert before[3] != after[3]
    assert {r: o for r, o in before.items() if r != 3} == {r: o for r, o in after.items() if r != 3}


def test_a_round_cancelled_during_reassembly_takes_no_further_reshake(quiet: Data) -> None:
    # The pause starts at 0 and times out at 6; the drop happens in [1, 5) and reassembly lasts 8 s, so the
    # cancellation always falls inside the reassembly. The round is over: no re-shake may follow its verdict.
    events = round_one(
        quiet, [{"round": 1, "drop": "bowl", "problem": {"after": 0.0, "resolve": 90.0}}], table__pause_timeout=6.0
    )
    end = only(events, RoundEnded)[0]
    assert (end.t, end.status, end.clause, end.reshakes) == (6.0, RoundStatus.CANCELLED, "ERR-3", 0)
    assert only(events, Reshake) == []


def test_a_dealer_still_busy_with_a_cancelled_round_does_not_lose_the_next_round(quiet: Data) -> None:
    # Betting 5 s, gap 1 s, pause timeout 6 s: round 1 is cancelled at 6 and round 2 opens at 7, while the dealer
    # is still reassembling after the drop (until 21-25). Round 2 must still be dealt and end.
    profile = profile_of(
        quiet,
        table__betting_period=5.0,
        table__round_gap=1.0,
        table__pause_timeout=6.0,
        dealer__timing__reassemble=20.0,
    )
    events = run_table(
        profile, seed=5, rounds=3, script=[{"round": 1, "drop": "bowl", "problem": {"after": 0.0, "resolve": 90.0}}]
    )
    assert sorted(ended(events)) == [1, 2, 3]


def test_a_reshake_cap_pause_during_an_equipment_pause_still_lets_the_table_go_on(quiet: Data) -> None:
    # Betting 2 s, placing 3 s: the equipment pause starts at 0.5, the lamp's deadline (2) passes during it, then the
    # plate drops during the first shake (in [3, 7)) with max_reshakes 0: a second, re-shake-cap pause. The
    # supervisor resolves the equipment problem at 30.5; the cap pause, which he cannot clear, cancels round 1 (ERR-3)
    # 60 s after the drop. Round 1 must end cancelled and the table must go on to rounds 2 and 3.
    profile = profile_of(quiet, table__betting_period=2.0, table__max_reshakes=0, dealer__timing__place=3.0)
    script = [{"round": 1, "drop": "plate", "problem": {"after": 0.5, "resolve": 30.0}, "supervisor": 90.0}]
    events = run_table(profile, seed=5, rounds=3, script=script)
    verdicts = ended(events)
    assert sorted(verdicts) == [1, 2, 3]
    assert (verdicts[1].status, verdicts[1].clause) == (RoundStatus.CANCELLED, "ERR-3")


def test_a_script_adding_two_reshakes_to_round_3_leaves_every_other_round_unchanged() -> None:
    # On the chaotic table some later rounds need a third shake of their own; forcing two standing re-shakes in
    # round 3 must not change what those rounds show.
    profile = profile_of(shipped("chaotic"))
    script = [{"round": 3, "shake": 1, "standing": [0]}, {"round": 3, "shake": 2, "standing": [1]}]
    before = outcomes(run_table(profile, seed=0, rounds=60))
    after = outcomes(run_table(profile, seed=0, rounds=60, script=script))
    assert after[3][4] == 2  # the script did add two re-shakes
    assert {r: o for r, o in before.items() if r != 3} == {r: o for r, o in after.items() if r != 3}


def test_a_reshake_after_a_resume_counts_in_the_new_budget(quiet: Data) -> None:
    # cap 1. The bowl drops during shake 1 (in [1, 5)); an equipment problem pauses the round at 5 and is resolved at
    # 7, during the 8 s reassembly. Re-shake 1 happens after that resume, so it is the first of the new budget (as
    # a game server counts it, from the report it gets after the resume): the drop on shake 2 is past the cap.
    script = [
        {"round": 1, "shake": 1, "drop": "bowl", "problem": {"after": 5.0, "resolve": 2.0}, "supervisor": 10.0},
        {"round": 1, "shake": 2, "drop": "plate"},
        {"round": 1, "shake": 3, "faces": "r w w w"},
    ]
    events = round_one(quiet, script, table__max_reshakes=1)
    moves = [k for k in kinds(events) if k not in ("round_opened", "betting_closed", "tokens_placed")]
    assert moves[: moves.index("shake_started", 2) + 1] == [
        "bowl_placed", "shake_started", "dropped", "paused", "resumed", "reassembled", "reshake", "bowl_placed",
        "shake_started",
    ]  # fmt: skip
    assert [p.reason for p in only(events, Paused)] == [PauseReason.EQUIPMENT, PauseReason.RESHAKE_CAP]
    end = only(events, RoundEnded)[0]
    assert (end.status, end.faces, end.reshakes) == (RoundStatus.SETTLED, "RWWW", 2)
