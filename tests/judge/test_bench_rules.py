"""The judge's rules that use what the bench itself did (harness/judge/timeline.py), on hand-built observations:
each rule passes the correct server and fails the wrong one, naming the clause whose check failed.

Expected values are written from RULES.md by hand (a win on three reds at 2.8 returns 1,000 + 2,800 = 3,800)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from harness.judge import Observation, SentBet, judge
from harness.judge.checks import CheckLog, ClauseFailure
from harness.judge.timeline import Alteration, Kill, Timing
from harness.records import BetRecordRow, BetReply, RoundEvent
from simulator.events import Event, Paused, PauseReason, Reshake, ReshakeReason, RoundEnded, RoundStatus

TIMING = Timing(betting_s=1.0, pause_timeout_s=2.0, result_timeout_s=1.0, max_reshakes=3)


def _settled(sim: int = 1, faces: str = "WRRR", reshakes: int = 0) -> RoundEnded:
    return RoundEnded(3.0, sim, RoundStatus.SETTLED, None, faces, faces.count("R"), reshakes)


def _opened(rid: str, at: float, closes_at: float | None = None) -> RoundEvent:
    raw: dict[str, Any] = {"data": {"closes_at": closes_at}} if closes_at is not None else {}
    return RoundEvent(rid, "opened", at, raw=raw)


def _obs(truth: Sequence[Event], events: Sequence[RoundEvent], **kw: Any) -> Observation:
    base: dict[str, Any] = {
        "truth": tuple(truth),
        "rounds": {"1": 1},
        "server_events": tuple(events),
        "records": {},
        "balances": {},
        "opening": {},
        "server_clock_is_sim": True,
        "timing": TIMING,
    }
    base.update(kw)
    return Observation(**base)


def _clauses(obs: Observation) -> list[str]:
    return judge(obs).failed_clauses()


def test_a_pause_without_a_cause_names_the_reshake_clause_of_the_round_or_err_1() -> None:
    truth = [Reshake(0.5, 1, ReshakeReason.DROP, 1), Reshake(0.6, 1, ReshakeReason.DROP, 2), _settled(reshakes=2)]
    events = [_opened("1", 0.0), RoundEvent("1", "reshake", 0.5), RoundEvent("1", "reshake", 0.6)]
    paused = [*events, RoundEvent("1", "paused", 0.6), RoundEvent("1", "cancelled", 2.6, clause="ERR-3")]
    verdict = judge(_obs(truth, paused))
    assert verdict.failed_clauses() == ["SH-2"]  # the cancellation hangs under the pause that caused it
    assert [d.clause for d in verdict.roots[0].consequences] == ["GP-3"]
    no_reshake = [_opened("1", 0.0), RoundEvent("1", "paused", 0.6), RoundEvent("1", "cancelled", 2.6, clause="ERR-3")]
    assert _clauses(_obs([_settled()], no_reshake)) == ["ERR-1"]
    # the table itself stopped: the pause and the cancellation are what the rules ask
    table_paused = [
        Paused(0.6, 1, PauseReason.EQUIPMENT),
        RoundEnded(2.6, 1, RoundStatus.CANCELLED, "ERR-3", None, None, 0),
    ]
    assert _clauses(_obs(table_paused, no_reshake)) == []


def test_a_pause_the_bench_made_due_and_nobody_resolved_ends_cancelled_never_settled() -> None:
    lost = Alteration("1", 0.2, "miss", "READER", "Result")
    base = [_opened("1", 0.0), RoundEvent("1", "closed", 1.0), RoundEvent("1", "paused", 2.0)]
    cancelled = [*base, RoundEvent("1", "cancelled", 4.0, clause="ERR-3")]
    settled = [*base, RoundEvent("1", "settled", 3.0, faces="WRRR")]
    assert _clauses(_obs([_settled()], cancelled, alterations=(lost,))) == []
    assert _clauses(_obs([_settled()], settled, alterations=(lost,))) == ["ERR-3"]
    # the read was sent late, but before the pause: a delay, not a loss; the pause is then the server's own
    late = Alteration("1", 1.5, "queued", "READER", "Result", "1", "WRRR")
    assert judge(_obs([_settled()], settled, alterations=(lost, late))).expected["1"].status == RoundStatus.SETTLED


def test_the_betting_period_is_the_configured_one_plus_the_pauses_taken_in_it() -> None:
    truth = [_settled()]
    ok = [_opened("1", 0.0, 1.0), RoundEvent("1", "closed", 1.0), RoundEvent("1", "settled", 3.0, faces="WRRR")]
    assert _clauses(_obs(truth, ok)) == []
    short = [_opened("1", 0.0, 0.9), *ok[1:]]
    assert _clauses(_obs(truth, short)) == ["GP-3"]  # announced shorter than configured
    early = [ok[0], RoundEvent("1", "closed", 0.9), ok[2]]
    assert _clauses(_obs(truth, early)) == ["GP-3"]
    # a pause of 0.5 s during betting: the period ends 0.5 s later, and a close at 1.0 is early (ERR-2)
    paused = [ok[0], RoundEvent("1", "paused", 0.4), RoundEvent("1", "resumed", 0.9), RoundEvent("1", "closed", 1.0)]
    assert _clauses(_obs(truth, [*paused, ok[2]], supervisor_paused=("1",))) == ["ERR-2"]
    given_back = [*paused[:3], RoundEvent("1", "closed", 1.5), ok[2]]
    assert _clauses(_obs(truth, given_back, supervisor_paused=("1",))) == []


def _reply(accepted: bool, code: str = "", bet_id: str = "1", round_id: str = "1", client: str = "c1") -> BetReply:
    return BetReply("alice", client, "big", 1000, accepted, True, bet_id if accepted else "", round_id, code)


def test_a_bet_refused_as_closed_while_betting_was_open_is_a_difference_of_the_period() -> None:
    truth = [_settled()]
    events = [_opened("1", 0.0, 1.0), RoundEvent("1", "closed", 1.0), RoundEvent("1", "settled", 3.0, faces="WRRR")]
    early = SentBet(_reply(False, "betting_closed", round_id=""), False, 0.95, "1")
    late = SentBet(_reply(False, "betting_closed", round_id=""), False, 1.0, "1")
    funds = SentBet(_reply(False, "insufficient_balance", round_id=""), False, 0.5, "1")
    assert _clauses(_obs(truth, events, sent=(early,))) == ["GP-3"]
    assert _clauses(_obs(truth, events, sent=(late, funds))) == []  # at the close, or refused for money
    assert _clauses(_obs(truth, events, sent=(early,), server_clock_is_sim=False)) == []  # two clocks: not timed


def _record(bet_id: str, client: str, returned: int = 1960) -> BetRecordRow:
    return BetRecordRow(bet_id, "1", "alice", "big", 1000, "win", returned, "settled", "WRRR", 10000, 10960, client)


def test_a_retry_gets_the_original_confirmation_and_places_nothing() -> None:
    truth = [_settled()]
    events = [_opened("1", 0.0), RoundEvent("1", "settled", 3.0, faces="WRRR")]
    first = SentBet(_reply(True), False, 0.1, "1")
    same = SentBet(_reply(True), False, 0.2, "1")
    records = {"alice": [_record("1", "c1")]}
    money = {"balances": {"alice": 10960}, "opening": {"alice": 10000}}
    assert _clauses(_obs(truth, events, sent=(first, same), records=records, **money)) == []
    second = SentBet(_reply(True, bet_id="2"), False, 0.2, "1")
    assert _clauses(_obs(truth, events, sent=(first, second), records=records, **money)) == ["IDEM-1"]
    killed = (Kill(0.15, ()),)
    assert _clauses(_obs(truth, events, sent=(first, second), records=records, kills=killed, **money)) == ["IDEM-2"]
    other = SentBet(replace(_reply(True, bet_id="3"), bet_type="small"), False, 0.2, "1")
    assert "IDEM-1" in _clauses(_obs(truth, events, sent=(first, other), records=records, **money))
    twice = {"alice": [_record("1", "c1"), _record("2", "c1")]}
    assert "IDEM-1" in _clauses(_obs(truth, events, sent=(first, same), records=twice, **money))


def test_a_round_in_play_at_a_planned_kill_may_be_cancelled_and_refunded() -> None:
    truth: list[Event] = []  # the table never reached a verdict: the server was killed under it
    events = [_opened("1", 0.0), RoundEvent("1", "cancelled", 0.5, clause="ERR-3")]
    assert _clauses(_obs(truth, events)) == ["GP-3"]  # no kill known: the server ended a round in play
    assert _clauses(_obs(truth, events, kills=(Kill(0.4, ("1",)),))) == []


def test_after_an_accepted_correction_the_bets_are_due_on_the_corrected_faces() -> None:
    truth = [_settled(faces="WRRR")]
    events = [_opened("1", 0.0), RoundEvent("1", "settled", 3.0, faces="WRRR")]
    resettled = BetRecordRow("1", "1", "alice", "big", 1000, "push", 1000, "settled", "WWRR", 10000, 10000, "c1")
    stale = BetRecordRow("1", "1", "alice", "big", 1000, "win", 1960, "settled", "WRRR", 10000, 10960, "c1")
    money = {"opening": {"alice": 10000}}
    good = _obs(
        truth, events, records={"alice": [resettled]}, balances={"alice": 10000}, corrections={"1": "WWRR"}, **money
    )
    assert _clauses(good) == []
    bad = _obs(truth, events, records={"alice": [stale]}, balances={"alice": 10960}, corrections={"1": "WWRR"}, **money)
    assert _clauses(bad) == ["COR-1"]


def test_a_round_settled_on_a_result_forged_for_another_round_names_dev_2() -> None:
    truth = [_settled(faces="WWWW")]
    events = [_opened("1", 0.0), RoundEvent("1", "settled", 3.0, faces="RRRR")]
    replayed = Alteration("1", 2.0, "queued", "READER", "Result", "0", "RRRR")
    assert _clauses(_obs(truth, events, alterations=(replayed,))) == ["DEV-2"]
    assert _clauses(_obs(truth, events)) == ["EQ-3"]
    forged = Alteration("1", 2.0, "forged", "READER", "Result", "1", "RRRR", "console")
    assert _clauses(_obs(truth, events, alterations=(forged,), reader_line="reader")) == ["DEV-1"]


def test_a_wrong_outcome_explains_every_bet_and_balance_of_its_round() -> None:
    truth = [_settled(faces="WRRR")]
    events = [_opened("1", 0.0), RoundEvent("1", "settled", 3.0, faces="WWRR")]
    row = BetRecordRow("1", "1", "alice", "big", 1000, "push", 1000, "settled", "WWRR", 10000, 10000, "c1")
    obs = _obs(truth, events, records={"alice": [row]}, balances={"alice": 10000}, opening={"alice": 10000})
    (finding,) = judge(obs).roots
    assert finding.clause == "EQ-3"
    assert [d.clause for d in finding.consequences] == ["PAY-9", "PAY-9", "GLI 2.8.2"]


def test_a_players_disconnection_is_checked_under_dc_1_to_dc_3() -> None:
    truth = [_settled()]
    events = [_opened("1", 0.0), RoundEvent("1", "settled", 3.0, faces="WRRR")]
    sent = (SentBet(_reply(True), False, 0.1, "1"),)
    obs = _obs(
        truth,
        events,
        sent=sent,
        records={"alice": [_record("1", "c1")]},
        balances={"alice": 10960},
        opening={"alice": 10000},
        disconnects=(("alice", "1"),),
    )
    verdict = judge(obs)
    assert verdict.passed
    ran = {c.clause for c in verdict.checks}
    assert {"DC-1", "DC-2", "DC-3", "PAY-9", "EQ-3", "GP-3"} <= ran


def test_a_check_log_names_its_clause_and_a_failure_lists_its_consequences() -> None:
    log = CheckLog()
    log.require("PAY-2", True, "three reds paid 2.8")
    with pytest.raises(ClauseFailure) as failure:
        log.require("GLI 2.8.2", False, "balance", "expected 3800, server 3500")
    assert failure.value.clause == "GLI 2.8.2"
    assert str(failure.value) == "[GLI 2.8.2] balance: expected 3800, server 3500"
    assert (log.ran(), log.failed()) == (["PAY-2", "GLI 2.8.2"], ["GLI 2.8.2"])
    text = str(ClauseFailure("PAY-2", "root", ["balance off"], "a step"))
    assert text.splitlines() == ["[PAY-2] root", "    the step saw: a step", "    consequence: balance off"]
