"""Acting as another principal (:class:`~harness.bench.adapters.capabilities.Principals`) on both reference adapters:
the in-process adapter with ``api: http`` (the server's ASGI application in this process) and the HTTP adapter (a
real ``xocdia-server`` process on pty lines). Each request's answer is the server's own, the judge checks them all,
and a player's token keeps working after a reconnect and after a server restart."""

from __future__ import annotations

import dataclasses

import pytest

from harness.bench.adapters.capabilities import Principals
from harness.bench.config import Bench, load_bench
from harness.bench.rig import Rig
from harness.errors import AdapterError
from harness.judge.access import AccessAction, AccessRequest, Answer, Credentials

REQUESTS = [
    (AccessRequest(Credentials.PLAYER, AccessAction.BET, "alice", "bob", "big", 100, "x-1"), Answer.REFUSED),
    (AccessRequest(Credentials.PLAYER, AccessAction.SUPERVISE, "alice", supervisor_action="pause"), Answer.DENIED),
    (AccessRequest(Credentials.NONE, AccessAction.BALANCE, target="alice"), Answer.DENIED),
    (AccessRequest(Credentials.UNKNOWN, AccessAction.BET_RECORD, target="bob"), Answer.DENIED),
    (AccessRequest(Credentials.UNKNOWN, AccessAction.CONNECT), Answer.DENIED),
    (AccessRequest(Credentials.NONE, AccessAction.CONNECT), Answer.DENIED),
    (AccessRequest(Credentials.PLAYER, AccessAction.BET_RECORD, "bob", "alice"), Answer.DENIED),
    (AccessRequest(Credentials.PLAYER, AccessAction.CONNECT, "bob"), Answer.ACCEPTED),
    (AccessRequest(Credentials.PLAYER, AccessAction.BET, "bob", "bob", "small", 100, "y-1"), Answer.ACCEPTED),
    (AccessRequest(Credentials.PLAYER, AccessAction.BALANCE, "bob", "bob"), Answer.ACCEPTED),
]


def _bench(name: str, api: str | None = None) -> Bench:
    bench = load_bench(name)
    if api is None:
        return bench
    options = {**bench.server.options, "api": api}
    return dataclasses.replace(bench, server=dataclasses.replace(bench.server, options=options))


def _round_of_requests(rig: Rig) -> None:
    adapter = rig.adapter
    assert isinstance(adapter, Principals) and adapter.checks_credentials
    rid = rig.open_round()
    got = [(request, adapter.request_as(request).answer) for request, _ in REQUESTS]
    assert got == REQUESTS
    assert [a.answer for a in adapter.access_log[-len(REQUESTS) :]] == [want for _, want in REQUESTS]
    rig.play_to_end(rid)
    verdict = rig.verdict()
    assert verdict.passed, verdict.summary()
    assert {"ACC-1", "ACC-2", "ACC-3", "ACC-4"} <= {c.clause for c in verdict.checks}


def test_in_process_api_answers_every_principal_and_keeps_tokens_across_a_restart() -> None:
    with Rig.build(_bench("in-process", "http"), {"alice": 10_000, "bob": 10_000}) as rig:
        for player in ("alice", "bob"):
            rig.adapter.connect(player)
        _round_of_requests(rig)
        adapter = rig.adapter
        assert isinstance(adapter, Principals)
        rig.kill_server(adapter.kill_server)  # type: ignore[attr-defined]
        with pytest.raises(AdapterError, match="down"):
            adapter.request_as(REQUESTS[-1][0])
        adapter.restart_server()  # type: ignore[attr-defined]
        for player in ("alice", "bob"):
            rig.adapter.connect(player)
        rid = rig.open_round()
        own = AccessRequest(Credentials.PLAYER, AccessAction.BET, "alice", "alice", "big", 100, "z-1")
        assert adapter.request_as(own).answer == Answer.ACCEPTED
        rig.play_to_end(rid)
        assert rig.verdict().passed


def test_in_process_direct_chooses_no_credentials() -> None:
    with Rig.build(_bench("in-process", "direct"), {"alice": 10_000}) as rig:
        adapter = rig.adapter
        assert isinstance(adapter, Principals) and not adapter.checks_credentials
        with pytest.raises(AdapterError) as caught:
            adapter.request_as(REQUESTS[2][0])
        assert caught.value.code == "not_supported"


def test_the_http_adapter_answers_every_principal_from_a_real_server_process() -> None:
    with Rig.build(_bench("local-hil"), {"alice": 10_000, "bob": 10_000}) as rig:
        for player in ("alice", "bob"):
            rig.adapter.connect(player)
        _round_of_requests(rig)
