"""Round engine, clause by clause (RULES.md GP, SH, ERR; docs/protocol.md §7). Amounts derived by hand."""

from __future__ import annotations

import pytest

from gameserver.events import EventKind, ReportKind
from gameserver.model import EngineConfig, Phase, Rejection
from tests.gameserver.gs_helpers import Table

R = ReportKind


def opened(config: EngineConfig | None = None) -> Table:
    return Table(config).open_round()


def results(t: Table, kind: EventKind) -> dict[int, tuple[str, int]]:
    return {line["bet_id"]: (line["result"], line["returned"]) for line in t.last(kind).data["bets"]}


def test_normal_round_settles_every_bet_on_the_faces() -> None:  # GP-1..3, EQ-3
    t = opened()
    a = t.bet("alice", "three_red", 1000)
    b = t.bet("bob", "big", 2000)
    c = t.bet("bob", "odd", 500)
    t.shake()
    t.close_betting()
    t.reveal("RRWR")
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("win", 3800), b: ("win", 3920), c: ("win", 980)}
    assert t.engine.wallets == {"alice": 100_000 - 1000 + 3800, "bob": 100_000 - 2500 + 3920 + 980}
    assert t.last(EventKind.ROUND_SETTLED).data["reds"] == 3


def test_big_and_small_are_returned_on_two_two() -> None:  # PAY-9, PAY-10
    t = opened()
    a = t.bet("alice", "big", 1000)
    b = t.bet("alice", "small", 1000)
    t.shake()
    t.close_betting()
    t.reveal("WRRW")
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("push", 1000), b: ("push", 1000)}
    assert t.engine.wallets["alice"] == 100_000


def test_overlap_waits_for_the_rearranged_read() -> None:  # SH-1
    t = opened()
    a = t.bet("alice", "four_white", 100)
    t.shake()
    t.close_betting()
    t.send(R.BOWL_OFF)
    t.send(R.RESULT, faces="WUWW", overlap=True)
    assert t.engine.active is not None and EventKind.READ_OVERLAP in t.kinds()
    t.send(R.REARRANGED, faces="WWWW")
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("win", 1500)}


def test_a_read_that_turns_a_token_seen_before_the_spread_pauses() -> None:  # PROC-1, ERR-1, ERR-2
    t = opened()
    a = t.bet("alice", "four_white", 100)
    t.shake()
    t.close_betting()
    t.send(R.BOWL_OFF)
    t.send(R.RESULT, faces="WUWW", overlap=True)
    t.send(R.REARRANGED, faces="WWRW")  # token 2 was seen white: it was turned, or misread
    assert t.last(EventKind.ROUND_PAUSED).data["reason"] == "contradicting_result: 'WUWW' then 'WWRW'"
    assert EventKind.ROUND_SETTLED not in t.kinds()
    t.engine.resume()
    t.send(R.REARRANGED, faces="WRWW")  # the hidden token may be either colour: this read agrees
    assert t.last(EventKind.ROUND_SETTLED).data["faces"] == "WRWW"
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("lose", 0)}


def test_a_bowl_never_reported_on_voids_the_round_at_its_lift() -> None:  # PROC-2, SH-4a over SH-5
    t = opened()
    a = t.bet("alice", "four_red", 1000)
    t.send(R.SHAKE_START)  # shaken, but the bowl sensor never said the bowl was on the plate
    t.send(R.SHAKE_END)
    t.close_betting()
    t.send(R.BOWL_OFF, touch=True)  # the bowl's own line: its ON would have come before this OFF
    assert t.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-4a"
    assert results(t, EventKind.ROUND_VOIDED) == {a: ("refund", 1000)}


def test_drop_reshakes_and_bets_stand() -> None:  # SH-2
    t = opened()
    a = t.bet("alice", "even", 1000)
    t.send(R.SHAKE_START)
    t.send(R.DROP)
    assert t.last(EventKind.RESHAKE).data == {"reason": "drop", "count": 1, "clause": "SH-2"}
    assert t.engine.wallets["alice"] == 99_000  # the bet stands
    t.shake()
    t.close_betting()
    t.reveal("RRWW")
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("win", 1960)}
    assert t.last(EventKind.ROUND_SETTLED).data["reshakes"] == 1


def test_end_after_a_drop_does_not_complete_the_dropped_shake() -> None:  # SH-2
    t = opened()
    t.bet("alice", "even", 1000)
    t.send(R.SHAKE_START)
    t.send(R.DROP)
    t.send(R.SHAKE_END)  # stray END of the dropped shake
    t.close_betting()
    t.send(R.BOWL_OFF)
    assert t.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-4a"


def test_standing_token_reshakes_then_settles() -> None:  # SH-3
    t = opened()
    a = t.bet("alice", "one_red", 1000)
    t.shake()
    t.close_betting()
    t.reveal("RSWW")
    assert t.last(EventKind.RESHAKE).data["reason"] == "standing"
    assert t.engine.active is not None
    t.shake()
    t.reveal("WWRW")
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("win", 3800)}


def test_no_shake_before_close_voids_and_refunds() -> None:  # SH-4a
    t = opened()
    a = t.bet("alice", "four_red", 1000)
    t.send(R.BOWL_ON)
    t.close_betting()
    voided = t.last(EventKind.ROUND_VOIDED)
    assert voided.data["clause"] == "SH-4a"
    assert results(t, EventKind.ROUND_VOIDED) == {a: ("refund", 1000)}
    assert t.engine.wallets["alice"] == 100_000


def test_shake_in_progress_at_close_is_not_sh4a() -> None:  # protocol §7
    t = opened()
    a = t.bet("alice", "four_red", 1000)
    t.send(R.BOWL_ON)
    t.send(R.SHAKE_START)
    t.close_betting()
    assert t.engine.active is not None
    t.send(R.SHAKE_END)
    t.reveal("RRRR")
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("win", 15_000)}


def test_bowl_lifted_during_betting_voids() -> None:  # SH-4b
    t = opened()
    a = t.bet("alice", "small", 1000)
    t.shake()
    t.send(R.BOWL_OFF)
    assert t.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-4b"
    assert results(t, EventKind.ROUND_VOIDED) == {a: ("refund", 1000)}


def test_touch_voids_even_if_faces_are_read_afterwards() -> None:  # SH-5
    t = opened()
    a = t.bet("bob", "two_red", 1000)
    t.shake()
    t.close_betting()
    t.send(R.BOWL_OFF, touch=True)
    t.send(R.RESULT, faces="RRWW")
    assert t.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-5"
    assert results(t, EventKind.ROUND_VOIDED) == {a: ("refund", 1000)}
    assert EventKind.ROUND_SETTLED not in t.kinds()
    assert t.engine.wallets["bob"] == 100_000


def test_console_problem_pauses_rejects_bets_and_resolved_resumes() -> None:  # ERR-1, ERR-2
    t = opened()
    t.advance(5.0)
    t.send(R.PROBLEM)
    assert t.last(EventKind.ROUND_PAUSED).data["phase"] == "betting"
    with pytest.raises(Rejection) as exc:
        t.engine.place_bet("alice", "x1", "odd", 100)
    assert exc.value.code == "round_paused"
    t.advance(20.0)  # longer than the betting period: the pause keeps the remaining 10 s
    t.send(R.RESOLVED)
    r = t.engine.active
    assert r is not None and r.paused_reason is None
    assert r.closes_at == pytest.approx(t.clock.t + 10.0)
    t.bet("alice", "odd", 100)


def test_pause_timeout_cancels_and_refunds() -> None:  # ERR-3
    t = opened(EngineConfig(auto_open=False, pause_timeout_s=60))
    a = t.bet("alice", "odd", 1000)
    t.engine.pause("dealer needs help")
    t.flush()
    t.advance(59.9)
    assert t.engine.active is not None
    t.advance(0.2)
    cancelled = t.last(EventKind.ROUND_CANCELLED)
    assert cancelled.data["clause"] == "ERR-3"
    assert results(t, EventKind.ROUND_CANCELLED) == {a: ("refund", 1000)}


def test_reshake_cap_exceeded_pauses() -> None:  # ERR-1 via re-shake cap
    t = opened(EngineConfig(auto_open=False, reshake_cap=2))
    for _ in range(2):
        t.send(R.SHAKE_START)
        t.send(R.DROP)
    assert EventKind.ROUND_PAUSED not in t.kinds()
    t.send(R.SHAKE_START)
    t.send(R.DROP)
    assert t.last(EventKind.ROUND_PAUSED).data["reason"] == "reshake_cap_exceeded"


def test_a_supervisor_may_resume_past_the_reshake_cap_and_the_count_restarts() -> None:  # ERR-2, RULES.md cap
    t = opened(EngineConfig(auto_open=False, reshake_cap=1))
    a = t.bet("alice", "two_red", 1000)
    t.shake()
    t.close_betting()
    for faces in ("SRWW", "RSWW"):  # re-shake 1, then re-shake 2: past the cap
        t.send(R.BOWL_OFF)
        t.send(R.RESULT, faces=faces)
        t.shake()
    assert t.last(EventKind.ROUND_PAUSED).data["reason"] == "reshake_cap_exceeded"
    t.engine.resume()
    t.flush()
    t.send(R.BOWL_OFF)
    t.send(R.RESULT, faces="RWSW")  # the first re-shake of the new budget: no pause
    assert [e.kind for e in t.log].count(EventKind.ROUND_PAUSED) == 1
    t.shake()
    t.reveal("RRWW")
    assert results(t, EventKind.ROUND_SETTLED) == {a: ("win", 2500)}
    assert t.last(EventKind.ROUND_SETTLED).data["reshakes"] == 3


def test_several_void_causes_the_first_established_decides() -> None:  # RULES.md, precedence of void causes
    early = opened()
    early.send(R.BOWL_ON)
    early.send(R.BOWL_OFF, touch=True)  # no shake and an early, touching lift: SH-4b, established first
    assert early.last(EventKind.ROUND_VOIDED).data["clause"] == "SH-4b"
    late = opened()
    late.send(R.BOWL_ON)
    late.close_betting()  # the forgotten shake is established at the close: SH-4a
    late.send(R.BOWL_OFF, touch=True)
    assert [e.data["clause"] for e in late.log if e.kind is EventKind.ROUND_VOIDED] == ["SH-4a"]


def test_unreadable_result_pauses() -> None:  # ERR-1
    t = opened()
    t.shake()
    t.close_betting()
    t.reveal("RUWR")
    assert t.last(EventKind.ROUND_PAUSED).data["reason"].startswith("unreadable_result")


def test_silent_table_after_close_pauses() -> None:  # ERR-1: no result within result_timeout_s
    t = opened(EngineConfig(auto_open=False, result_timeout_s=30))
    t.shake()
    t.close_betting()
    t.advance(29.0)
    assert EventKind.ROUND_PAUSED not in t.kinds()
    t.advance(1.5)
    assert t.last(EventKind.ROUND_PAUSED).data["reason"] == "no_result"


def test_supervisor_cancel_refunds_every_bet_once() -> None:  # ERR-3
    t = opened()
    t.bet("alice", "odd", 1000)
    t.bet("bob", "even", 2000)
    t.engine.cancel("camera broken")
    t.flush()
    assert [line["returned"] for line in t.last(EventKind.ROUND_CANCELLED).data["bets"]] == [1000, 2000]
    assert t.engine.wallets == {"alice": 100_000, "bob": 100_000}
    assert t.engine.round is not None and t.engine.round.phase is Phase.CANCELLED


def test_reports_after_the_round_ended_are_ignored() -> None:  # protocol §7 last line
    t = opened()
    t.shake()
    t.close_betting()
    t.reveal("RRRR")
    before = dict(t.engine.wallets)
    t.send(R.BOWL_OFF, touch=True)
    assert t.engine.ignored.sample[-1]["why"] == "no_round"
    assert t.engine.wallets == before


def test_auto_open_starts_the_next_round_after_the_gap() -> None:
    t = Table(EngineConfig(auto_open=True, round_gap_s=3, betting_s=10))
    t.advance(0)
    assert t.kinds()[-1] is EventKind.ROUND_OPENED
    t.close_betting()  # SH-4a void: nobody shook
    t.advance(2.9)
    assert t.kinds()[-1] is not EventKind.ROUND_OPENED
    t.advance(0.2)
    assert t.kinds()[-1] is EventKind.ROUND_OPENED and t.log[-1].round_id == 2


def test_event_log_is_ordered() -> None:
    t = opened()
    t.bet("alice", "odd", 1000)
    t.clock.t -= 50  # a clock stepping backwards must not reorder the log
    t.shake()
    t.close_betting()
    t.reveal("RWWW")
    seqs = [e.seq for e in t.log]
    ats = [e.at for e in t.log]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert ats == sorted(ats)
