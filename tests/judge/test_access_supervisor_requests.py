"""The supervisor's correction and creation of players as access requests (ACC-2): the request's fields, its
words, its clause, its form in the reference API, and the answers of the server's real ASGI application in-process
(``api: http``) to a player's and to the supervisor's requests."""

from __future__ import annotations

import dataclasses

import pytest

from harness.bench.adapters.access_http import http_ask
from harness.bench.adapters.capabilities import Principals
from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.errors import AdapterError
from harness.judge.access import CORRECT, CREATE_PLAYER, AccessAction, AccessRequest, Answer, Credentials, clause_of

SUPERVISE = AccessAction.SUPERVISE


def _correct(credentials: Credentials, holder: str, round_id: str, faces: str) -> AccessRequest:
    return AccessRequest(credentials, SUPERVISE, holder, supervisor_action=CORRECT, round_id=round_id, faces=faces)


def _create(credentials: Credentials, holder: str, target: str, balance: int) -> AccessRequest:
    return AccessRequest(credentials, SUPERVISE, holder, target, supervisor_action=CREATE_PLAYER, balance=balance)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"supervisor_action": CORRECT, "round_id": "1"}, "round_id, faces"),
        ({"supervisor_action": CORRECT, "faces": "RRWW"}, "round_id, faces"),
        ({"supervisor_action": "pause", "round_id": "1", "faces": "RRWW"}, "round_id, faces"),
        ({"supervisor_action": CREATE_PLAYER, "balance": 5}, "target, balance"),
        ({"supervisor_action": CREATE_PLAYER, "target": "carol", "balance": -1}, "target, balance"),
        ({"supervisor_action": "open", "balance": 5}, "balance"),
    ],
)
def test_a_supervisor_request_whose_fields_do_not_fit_is_refused_naming_them(
    fields: dict[str, object], named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        AccessRequest(Credentials.SUPERVISOR, SUPERVISE, **fields)  # type: ignore[arg-type]


def test_a_players_correction_or_creation_is_decided_by_acc_2_and_the_supervisors_by_acc_4() -> None:
    by_alice = _correct(Credentials.PLAYER, "alice", "7", "RRWW")
    assert clause_of(by_alice) == "ACC-2" and not by_alice.own
    assert by_alice.describe() == "a correction of round 7 to RRWW, with alice's credentials"
    creating = _create(Credentials.PLAYER, "bob", "carol", 5_000)
    assert clause_of(creating) == "ACC-2"
    assert creating.describe() == "a new player carol with a balance of 5000, with bob's credentials"
    assert clause_of(_create(Credentials.SUPERVISOR, "", "carol", 0)) == "ACC-4"
    assert clause_of(_correct(Credentials.NONE, "", "7", "RRWW")) == "ACC-3"


def test_the_reference_api_form_of_a_correction_and_of_a_player_to_create() -> None:
    ask = http_ask(_correct(Credentials.PLAYER, "alice", "7", "RRWW"), {"alice": "t-alice"}, "t-boss")
    assert (ask.method, ask.path, ask.token, ask.body) == (
        "POST",
        "/v1/supervisor/correct",
        "t-alice",
        {"round_id": 7, "faces": "RRWW"},
    )
    ask = http_ask(_create(Credentials.SUPERVISOR, "", "carol", 50), {}, "t-boss", {"carol": "carol-1a2b"})
    assert (ask.method, ask.path, ask.token) == ("POST", "/v1/supervisor/players", "t-boss")
    assert ask.body is not None
    (player,) = ask.body["players"]
    assert player["id"] == "carol-1a2b" and player["balance"] == 50 and len(player["token"]) >= 16


def test_the_in_process_api_refuses_a_players_correction_and_creation_and_takes_the_supervisors() -> None:
    bench = load_bench("in-process")
    bench = dataclasses.replace(
        bench, server=dataclasses.replace(bench.server, options={**bench.server.options, "api": "http"})
    )
    with Rig.build(bench, {"alice": 10_000}) as rig:
        adapter = rig.adapter
        assert isinstance(adapter, Principals) and adapter.checks_credentials
        rig.adapter.connect("alice")
        rid = rig.open_round()
        rig.play_to_end(rid)
        faces = "RRRR" if rig.adapter.round_events()[-1].faces != "RRRR" else "WWWW"
        assert adapter.request_as(_correct(Credentials.PLAYER, "alice", rid, faces)).answer == Answer.DENIED
        assert adapter.request_as(_create(Credentials.PLAYER, "alice", "carol", 9)).answer == Answer.DENIED
        with pytest.raises(AdapterError) as caught:
            rig.adapter.balance("carol")
        assert caught.value.code == "unknown_player"
        assert adapter.request_as(_create(Credentials.SUPERVISOR, "", "dave", 9)).answer == Answer.ACCEPTED
        assert rig.adapter.balance("dave") == 9
        verdict = rig.verdict()
        assert verdict.passed, verdict.summary()
        assert {"ACC-2", "ACC-4"} <= {c.clause for c in verdict.checks}
