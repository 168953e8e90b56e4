"""The shared vocabulary (:mod:`harness.records`): kinds are StrEnums that compare, format and serialise as the
words the server and the files use; the server's words are parsed into them (an unknown round-event kind is not
a round event, an unknown bet result or round status is kept as sent); and one :class:`Outcome` for verdicts."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from enum import StrEnum
from typing import Any

import pytest

from harness.bench.adapters.reference_events import bet_row, round_event
from harness.faults.campaign import CampaignSummary, SeedOutcome
from harness.faults.links import RouteMode
from harness.faults.schedule import ScheduleError, schedule_from_text
from harness.faults.schedule_model import FaultKind
from harness.judge import Observation, judge
from harness.judge.history import History, canonical_lines
from harness.judge.oracle import Difference, Verdict
from harness.records import (
    BetResult,
    DeviceRole,
    OpFunction,
    OpType,
    Outcome,
    OutcomeStatus,
    RoundEvent,
    RoundEventKind,
    RoundStatus,
    parse_or_raw,
)

ENUMS: tuple[type[StrEnum], ...] = (
    RoundEventKind,
    RoundStatus,
    BetResult,
    DeviceRole,
    OpType,
    OpFunction,
    OutcomeStatus,
    FaultKind,
    RouteMode,
)


# ---------------------------------------------------------------------- Outcome
def test_named_constructors_give_their_status_and_reason() -> None:
    assert Outcome.passed() == Outcome(OutcomeStatus.PASS) and Outcome.passed().ok
    made = {
        Outcome.failed: OutcomeStatus.FAIL,
        Outcome.error: OutcomeStatus.ERROR,
        Outcome.aborted: OutcomeStatus.ABORTED,
        Outcome.refused: OutcomeStatus.REFUSED,
    }
    for make, status in made.items():
        got = make("why")
        assert (got.status, got.reason, got.ok) == (status, "why", False)


def test_an_outcome_prints_as_its_status_then_its_reason() -> None:
    assert str(Outcome.passed()) == "PASS"
    assert str(Outcome.failed("3 differences")) == "FAIL (3 differences)"
    assert f"{Outcome.aborted('abort: 3 probes failed')}" == "ABORTED (abort: 3 probes failed)"
    assert str(Outcome.refused("")) == "REFUSED"


def test_an_outcome_is_frozen() -> None:
    outcome = Outcome.passed()
    with pytest.raises(FrozenInstanceError):
        outcome.reason = "changed"  # type: ignore[misc]


def test_the_oracles_verdict_has_an_outcome_and_summarises_as_before() -> None:
    clean = Verdict((), 2, 3)
    assert clean.outcome == Outcome.passed() and clean.passed
    assert clean.summary() == "oracle: PASS: 2 rounds, 3 bets checked"
    diff = Difference("7", "", "EQ-3", "outcome", "RRRW", "RRRR")
    found = Verdict((diff, diff), 1, 0)
    assert found.outcome == Outcome.failed("2 differences") and not found.passed
    assert found.summary().splitlines() == [
        "oracle: FAIL (2 differences): 1 rounds, 0 bets checked",
        "  - round 7 [EQ-3]: outcome: expected RRRW, server RRRR",
        "  - round 7 [EQ-3]: outcome: expected RRRW, server RRRR",
    ]


def test_a_campaign_seed_reads_refused_and_aborted_from_its_outcome() -> None:
    refused = SeedOutcome(1, Outcome.refused("serial faults are not available"), False, (), "", 0)
    stopped = SeedOutcome(2, Outcome.aborted("abort: 3 probes failed"), True, (), "h2", 3)
    broken = SeedOutcome(3, Outcome.error("error: RuntimeError: boom"), False, ("[lost] x",), "h3", 1)
    failed = SeedOutcome(4, Outcome.failed("1 violations"), False, ("[payout] y",), "h4", 5)
    assert (refused.refused, refused.aborted) == ("serial faults are not available", "")
    assert (stopped.refused, stopped.aborted) == ("", "abort: 3 probes failed")
    assert (broken.aborted, failed.aborted, failed.refused) == ("error: RuntimeError: boom", "", "")
    summary = CampaignSummary((refused, stopped, broken, failed))
    assert [o.seed for o in summary.refused] == [1]
    assert [o.seed for o in summary.aborted] == [2, 3]  # an aborted seed may pass (2) or fail (3)
    assert [o.seed for o in summary.failing] == [3, 4]


# ---------------------------------------------------------------------- the enums read and print as words
@pytest.mark.parametrize("member", [m for enum in ENUMS for m in enum], ids=lambda m: f"{type(m).__name__}.{m.name}")
def test_a_member_compares_formats_and_serialises_as_its_word(member: StrEnum) -> None:
    word = member.value
    assert member == word and hash(member) == hash(word) and word in {member}
    assert f"{member}" == str(member) == f"{member:<1}" == word and type(str(member)) is str
    assert json.dumps(member) == json.dumps(word) and json.dumps({member: [member]}) == json.dumps({word: [word]})


def test_the_indeterminate_op_type_is_jepsens_info_but_is_written_unknown() -> None:
    assert (OpType.INFO.value, OpType.NOTE.value) == ("unknown", "info")  # the words the history hash covers
    history = History()
    history.add(0.5, "p1", OpType.INFO, OpFunction.BET, client_bet_id="p1-1", bet_type="big", stake=100)
    assert canonical_lines(history.ops, None) == [
        '{"bet_id":"","bet_type":"big","client_bet_id":"p1-1","detail":"","f":"bet","index":0,"process":"p1",'
        '"round_id":"","stake":100,"t":0.5,"type":"unknown"}'
    ]


def test_the_history_takes_the_words_and_refuses_an_unknown_op_type() -> None:
    history = History()
    words: Any = ("info", "fault")  # as a lab's code might still pass them
    op = history.add(0.0, "bench", *words)
    assert op.type is OpType.NOTE and op.f is OpFunction.FAULT
    bad: Any = "maybe"
    with pytest.raises(ValueError, match="op type must be one of invoke, ok, fail, unknown, info; got 'maybe'"):
        history.add(0.0, "p1", bad, OpFunction.BET)


# ---------------------------------------------------------------------- the server's words
def test_the_servers_event_names_map_to_kinds_and_unknown_ones_are_not_round_events() -> None:
    event = round_event({"kind": "round_voided", "round_id": 4, "at": 1.5, "data": {"clause": "SH-5"}})
    assert event is not None and event.kind is RoundEventKind.VOID and event.ends_round
    assert (event.round_id, event.clause, event.faces) == ("4", "SH-5", "")
    settled = round_event({"kind": "round_settled", "round_id": 5, "data": {"faces": "RRWW"}})
    assert settled is not None and settled.kind is RoundEventKind.SETTLED and settled.faces == "RRWW"
    assert round_event({"kind": "round_exploded", "round_id": 4}) is None  # as before: left out, not an error
    assert round_event({"kind": "wallet_credited", "round_id": None}) is None


BET = {
    "bet_id": "9",
    "round_id": "5",
    "player_id": "p1",
    "bet_type": "big",
    "wagered": 200,
    "result": "refund",
    "returned": 200,
    "round_status": "void",
    "balance_before": 1000,
    "balance_after": 1000,
}


def test_the_servers_bet_record_words_parse_to_members() -> None:
    row = bet_row(BET)
    assert row.result is BetResult.REFUND and row.round_status is RoundStatus.VOID


def test_an_unknown_result_or_status_from_a_server_is_kept_as_sent_and_judged_a_difference() -> None:
    row = bet_row({**BET, "result": "jackpot", "round_status": "limbo"})
    assert (row.result, row.round_status) == ("jackpot", "limbo")
    assert type(row.result) is str and type(row.round_status) is str
    verdict = judge(
        Observation(
            truth=[],
            rounds={},
            server_events=[RoundEvent("5", RoundEventKind.OPENED, 0.0), RoundEvent("5", RoundEventKind.VOID, 1.0)],
            records={"p1": [row]},
            balances={},
            opening={},
        )
    )
    got = {(d.what, d.expected, d.actual) for d in verdict.differences}
    assert ("result of p1 big 200", "refund", "jackpot") in got
    assert ("round status in the bet record vs the round's events", "void", "limbo") in got


def test_parse_or_raw_is_exact() -> None:
    assert parse_or_raw(BetResult, "push") is BetResult.PUSH
    assert parse_or_raw(BetResult, "PUSH") == "PUSH" and type(parse_or_raw(BetResult, "PUSH")) is str
    assert RoundStatus(RoundEventKind.CANCELLED) is RoundStatus.CANCELLED  # a round end's kind is its status


# ---------------------------------------------------------------------- fault kinds in schedules
SCHEDULE = """\
rounds: 2
faults:
  - {kind: serial_drop, target: bowl, at: {round: 1, phase: shaking}, rate: 0.2}
random: {kinds: [server_kill, player_reset], rate: 0.5}
"""


def test_fault_kinds_parse_from_a_schedule_and_dump_back_as_plain_yaml() -> None:
    schedule = schedule_from_text(SCHEDULE)
    assert schedule.faults[0].kind is FaultKind.SERIAL_DROP
    assert schedule.random is not None and schedule.random.kinds == (FaultKind.SERVER_KILL, FaultKind.PLAYER_RESET)
    assert schedule.targets.devices == tuple(DeviceRole)
    text = schedule.to_yaml()
    assert "!!" not in text and "kind: serial_drop" in text and "- server_kill" in text and "- bowl" in text
    assert schedule_from_text(text) == schedule


def test_a_bad_or_forbidden_fault_kind_is_named_by_its_word() -> None:
    with pytest.raises(ScheduleError, match=r"faults\[0\]\.kind: must be one of serial_flip, .*; got 'serial_melt'$"):
        schedule_from_text("faults: [{kind: serial_melt, at: {round: 1}}]")
    forbidden = "targets: {server: false}\nrandom: {kinds: [server_kill]}"
    with pytest.raises(ScheduleError, match=r"may not inject server_kill; got 'server_kill'$"):
        schedule_from_text(forbidden)
