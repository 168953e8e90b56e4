"""Which optional capabilities (``harness.bench.adapters.capabilities``) each reference adapter has, pinned: the
suite's steps, the fault injector and the live tap decide by ``isinstance`` alone, so a member renamed or dropped
would silently turn a scenario into "not applicable". A lab adapter with only the interface has none of them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.bench.adapters import capabilities
from harness.bench.adapters.base import BetRecordRow, BetReply, GameServerAdapter, RoundEvent, ServerSetup
from harness.bench.adapters.capabilities import (
    CrashPoints,
    EventWatching,
    Faultable,
    Identifying,
    NoiseReporting,
    Principals,
    Restartable,
    RoundRecords,
)
from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.adapters.rewriting import RewritingAdapter
from harness.errors import AdapterError
from harness.faults.fault_adapters import FaultableHttpAdapter, FaultableInProcessAdapter, ProxiedPlayers

CAPABILITIES: tuple[type, ...] = (
    Restartable,
    Faultable,
    CrashPoints,
    NoiseReporting,
    EventWatching,
    ProxiedPlayers,
    Principals,
    Identifying,
    RoundRecords,
)


class BareLabAdapter(GameServerAdapter):
    """A lab adapter with the interface's abstract methods and nothing else."""

    def start(self, setup: ServerSetup) -> None:
        return

    def stop(self) -> None:
        return

    def connect(self, player_id: str) -> None:
        return

    def disconnect(self, player_id: str) -> None:
        return

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        return BetReply(player_id, client_bet_id, bet_type, stake, False, True, code="closed")

    def supervise(self, action: str, reason: str = "") -> None:
        return

    def round_events(self) -> list[RoundEvent]:
        return []

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        return []

    def balance(self, player_id: str) -> int:
        return 0


def _names(adapter: object) -> set[str]:
    return {c.__name__ for c in CAPABILITIES if isinstance(adapter, c)}


#: What both reference adapters (in-process and HTTP) have.
REFERENCE = {"Restartable", "CrashPoints", "NoiseReporting", "Principals", "Identifying", "RoundRecords"}


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: InProcessAdapter({}), REFERENCE | {"EventWatching"}),
        (lambda: HttpAdapter({}), REFERENCE),
        (lambda: HttpAdapter({"url": "http://127.0.0.1:1"}), REFERENCE),
        (lambda: FaultableInProcessAdapter({}), REFERENCE | {"Faultable", "EventWatching"}),
        (lambda: FaultableHttpAdapter({}), REFERENCE | {"Faultable", "ProxiedPlayers"}),
        (lambda: RewritingAdapter({"inner": InProcessAdapter({})}), set()),
        (lambda: BareLabAdapter({}), set()),
    ],
    ids=["in-process", "http", "http-url", "faultable-in-process", "faultable-http", "rewriting", "bare-lab"],
)
def test_each_adapter_has_exactly_its_capabilities(make: Callable[[], GameServerAdapter], expected: set[str]) -> None:
    assert _names(make()) == expected


def test_principals_is_used_only_when_the_server_checks_the_credentials() -> None:
    """The in-process adapter reaches the engine past its API with ``api: direct`` (the default): it has the members
    but chooses no credentials; with ``api: http``, and on the HTTP adapter, every request carries them."""
    assert not InProcessAdapter({}).checks_credentials and InProcessAdapter({"api": "http"}).checks_credentials
    assert HttpAdapter({}).checks_credentials
    with pytest.raises(AdapterError, match=r"server.options.api: 'grpc'; expected one of http, direct"):
        InProcessAdapter({"api": "grpc"})


def test_restartable_is_used_only_when_it_can_restart() -> None:
    """An HTTP adapter attached by URL has the members but cannot restart: the harness reads ``can_restart``."""
    assert InProcessAdapter({}).can_restart and HttpAdapter({}).can_restart
    assert not HttpAdapter({"url": "http://127.0.0.1:1"}).can_restart


def test_the_capabilities_are_importable_where_they_were_declared_before() -> None:
    from harness.bench import adapters
    from harness.bench.adapters import base
    from harness.faults import fault_adapters

    assert base.CrashPoints is CrashPoints
    assert fault_adapters.Faultable is Faultable
    assert set(capabilities.__all__) <= set(adapters.__all__)


def test_the_optional_calls_of_the_interface_refuse_by_default() -> None:
    """``place_bet_for_round`` and ``correct`` are interface members, not capabilities: not overridden, they raise
    ``not_supported``, which a scenario reports as not applicable."""
    lab = BareLabAdapter({})
    for call in (lambda: lab.place_bet_for_round("alice", "a-1", "big", 100, "1"), lambda: lab.correct("1", "RRWW")):
        with pytest.raises(AdapterError) as caught:
            call()
        assert caught.value.code == "not_supported"
