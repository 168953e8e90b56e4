"""The judge's access-control check (:func:`harness.judge.access.check_access`, ACC-1..ACC-4): every answer is one
check of its clause, and a request that had to be refused and was accepted (or credentials denied for what they
allow) is a difference naming that clause, first among the verdict's root causes."""

from __future__ import annotations

import pytest

from harness.judge.access import (
    AccessAction,
    AccessAnswer,
    AccessRequest,
    Answer,
    Credentials,
    check_access,
    clause_of,
)
from harness.judge.checks import Check
from harness.judge.findings import Difference
from harness.judge.oracle import Observation, judge
from harness.records import BetRecordRow

ALICE_BETS_FOR_BOB = AccessRequest(Credentials.PLAYER, AccessAction.BET, "alice", "bob", "big", 1_000, "acc-1")
PAUSE_BY_ALICE = AccessRequest(Credentials.PLAYER, AccessAction.SUPERVISE, "alice", supervisor_action="pause")
NO_TOKEN_BALANCE = AccessRequest(Credentials.NONE, AccessAction.BALANCE, target="alice")
UNKNOWN_SESSION = AccessRequest(Credentials.UNKNOWN, AccessAction.CONNECT)
ALICE_READS_BOB = AccessRequest(Credentials.PLAYER, AccessAction.BET_RECORD, "alice", "bob")
ALICE_OWN_BET = AccessRequest(Credentials.PLAYER, AccessAction.BET, "alice", "alice", "odd", 500, "acc-2")


def _row(player: str, bet_id: str) -> BetRecordRow:
    return BetRecordRow(bet_id, "1", player, "big", 1_000, "pending", 0, "in_progress", "", 0, 0, "acc-1")


def _judged(
    answers: list[AccessAnswer], records: dict[str, list[BetRecordRow]]
) -> tuple[list[Difference], list[Check]]:
    checks: list[Check] = []
    return check_access(answers, records, checks), checks


def test_each_request_is_decided_by_its_clause() -> None:
    assert clause_of(ALICE_BETS_FOR_BOB) == clause_of(ALICE_READS_BOB) == "ACC-1"
    assert clause_of(PAUSE_BY_ALICE) == "ACC-2"
    assert clause_of(NO_TOKEN_BALANCE) == clause_of(UNKNOWN_SESSION) == "ACC-3"
    assert clause_of(ALICE_OWN_BET) == "ACC-4"
    assert clause_of(AccessRequest(Credentials.SUPERVISOR, AccessAction.SUPERVISE, supervisor_action="open")) == "ACC-4"


def test_refusals_pass_and_each_is_one_check() -> None:
    answers = [
        AccessAnswer(ALICE_BETS_FOR_BOB, Answer.REFUSED, "invalid_field"),
        AccessAnswer(PAUSE_BY_ALICE, Answer.DENIED, "forbidden"),
        AccessAnswer(NO_TOKEN_BALANCE, Answer.DENIED, "missing_token"),
        AccessAnswer(UNKNOWN_SESSION, Answer.DENIED, "invalid_token"),
        AccessAnswer(ALICE_READS_BOB, Answer.DENIED, "forbidden"),
        AccessAnswer(ALICE_OWN_BET, Answer.REFUSED, "betting_closed"),  # the game's refusal: no access failure
    ]
    diffs, checks = _judged(answers, {"alice": [], "bob": []})
    assert diffs == []
    assert [c.clause for c in checks] == ["ACC-1", "ACC-2", "ACC-3", "ACC-3", "ACC-1", "ACC-4"]
    assert all(c.passed for c in checks)


@pytest.mark.parametrize(
    ("answer", "records", "clause", "actual"),
    [
        (AccessAnswer(PAUSE_BY_ALICE, Answer.ACCEPTED), {}, "ACC-2", "accepted"),
        (AccessAnswer(NO_TOKEN_BALANCE, Answer.ACCEPTED), {}, "ACC-3", "accepted"),
        (AccessAnswer(UNKNOWN_SESSION, Answer.ACCEPTED), {}, "ACC-3", "accepted"),
        (AccessAnswer(ALICE_READS_BOB, Answer.ACCEPTED), {}, "ACC-1", "accepted"),
        (
            AccessAnswer(ALICE_BETS_FOR_BOB, Answer.ACCEPTED, "", "7", "1"),
            {"alice": [], "bob": [_row("bob", "7")]},
            "ACC-1",
            "accepted and booked to bob's account",
        ),
        (
            AccessAnswer(ALICE_BETS_FOR_BOB, Answer.ACCEPTED, "", "7", "1"),
            {"alice": [], "bob": []},
            "ACC-1",
            "accepted as bet 7, which alice's bet record does not hold",
        ),
        (AccessAnswer(ALICE_OWN_BET, Answer.DENIED, "invalid_token"), {}, "ACC-4", "denied (invalid_token)"),
    ],
    ids=[
        "player-pauses",
        "no-token-reads",
        "unknown-token-session",
        "reads-other",
        "booked-to-other",
        "booked-nowhere",
        "own-denied",
    ],
)
def test_a_wrong_answer_is_a_difference_naming_its_clause(
    answer: AccessAnswer, records: dict[str, list[BetRecordRow]], clause: str, actual: str
) -> None:
    diffs, checks = _judged([answer], records)
    assert [(d.clause, d.actual) for d in diffs] == [(clause, actual)]
    assert [(c.clause, c.passed) for c in checks] == [(clause, False)]


def test_a_bet_for_another_account_booked_to_the_requesters_own_passes() -> None:
    answer = AccessAnswer(ALICE_BETS_FOR_BOB, Answer.ACCEPTED, "", "7", "1")
    diffs, checks = _judged([answer], {"alice": [_row("alice", "7")], "bob": []})
    assert diffs == [] and [c.passed for c in checks] == [True]


def test_an_access_difference_is_the_verdicts_first_root_cause() -> None:
    """A round a player's token paused shows as a pause difference too; the accepted request comes first, so a
    failing step names ACC-2, not what the request changed."""
    obs = Observation(
        truth=(),
        rounds={},
        server_events=(),
        records={},
        balances={},
        opening={},
        access=(AccessAnswer(PAUSE_BY_ALICE, Answer.ACCEPTED),),
    )
    verdict = judge(obs)
    assert verdict.failed_clauses()[:1] == ["ACC-2"]
    assert verdict.failure().clause == "ACC-2"


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"credentials": Credentials.PLAYER, "action": AccessAction.CONNECT}, "holder"),
        ({"credentials": Credentials.NONE, "action": AccessAction.CONNECT, "holder": "alice"}, "holder"),
        ({"credentials": Credentials.NONE, "action": AccessAction.BALANCE}, "target"),
        ({"credentials": Credentials.NONE, "action": AccessAction.SUPERVISE, "supervisor_action": "fire"}, "open"),
        ({"credentials": Credentials.NONE, "action": AccessAction.BET, "target": "bob"}, "bet_type"),
        ({"credentials": "root", "action": AccessAction.CONNECT}, "root"),
    ],
)
def test_a_request_that_does_not_fit_is_refused_naming_the_field(fields: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        AccessRequest(**fields)  # type: ignore[arg-type]
