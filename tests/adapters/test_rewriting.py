"""The rewriting adapter double: every hook, the balance that follows the rewritten records, the bench-file form
(dotted paths) and the errors that name a bad option. The oracle tests use it on the real engine
(tests/oracle/test_oracle_can_fail.py); here the inner adapter is canned."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from harness.bench.adapters.base import GameServerAdapter, ServerSetup
from harness.bench.adapters.rewriting import RewritingAdapter
from harness.bench.config import load_bench
from harness.records import BetRecordRow, BetReply, RoundEvent

ROW = BetRecordRow("b1", "1", "alice", "big", 1000, "refund", 1000, "void", "", 10_000, 9_000)
EVENTS = [RoundEvent("1", "opened", 0.0), RoundEvent("1", "void", 1.0, clause="SH-5")]


class Canned(GameServerAdapter):
    """A server that always says the same things, and remembers what it was asked."""

    clock_is_sim_time = True

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self.calls: list[str] = []

    def start(self, setup: ServerSetup) -> None:
        self.calls.append("start")

    def stop(self) -> None:
        self.calls.append("stop")

    def connect(self, player_id: str) -> None:
        self.calls.append(f"connect {player_id}")

    def disconnect(self, player_id: str) -> None:
        self.calls.append(f"disconnect {player_id}")

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        return BetReply(player_id, client_bet_id, bet_type, stake, True, round_id="1")

    def supervise(self, action: str, reason: str = "") -> None:
        self.calls.append(f"supervise {action}")

    def round_events(self) -> list[RoundEvent]:
        return list(EVENTS)

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        return [ROW]

    def balance(self, player_id: str) -> int:
        return 10_000


def no_refund(row: BetRecordRow) -> BetRecordRow:
    return replace(row, returned=0) if row.result == "refund" else row


def test_without_hooks_everything_passes_through() -> None:
    inner = Canned({})
    with RewritingAdapter({"inner": inner}) as adapter:
        adapter.start(None)  # type: ignore[arg-type]
        adapter.connect("alice")
        adapter.supervise("open")
        adapter.disconnect("alice")
        assert adapter.round_events() == EVENTS and adapter.bet_record("alice") == [ROW]
        assert adapter.balance("alice") == 10_000 and adapter.place_bet("alice", "a-1", "big", 100).accepted
        assert adapter.clock_is_sim_time and adapter.inner is inner
    assert inner.calls == ["start", "connect alice", "supervise open", "disconnect alice", "stop"]


def test_each_hook_rewrites_what_the_server_reports_and_none_drops_it() -> None:
    adapter = RewritingAdapter(
        {
            "inner": Canned,
            "events": lambda e: None if e.kind == "opened" else e,
            "replies": lambda r: replace(r, accepted=False, code="betting_closed"),
            "records": no_refund,
        }
    )
    assert adapter.round_events() == EVENTS[1:]
    assert adapter.place_bet("alice", "a-1", "big", 100).code == "betting_closed"
    assert [r.returned for r in adapter.bet_record("alice")] == [0]
    assert adapter.balance("alice") == 9_000  # follows the record: the 1,000 refund was never credited


def test_the_balance_can_ignore_the_records_or_be_rewritten_itself() -> None:
    untouched = RewritingAdapter({"inner": Canned, "records": no_refund, "balance_follows_records": False})
    assert untouched.balance("alice") == 10_000
    doubled = RewritingAdapter({"inner": Canned, "records": no_refund, "balance": lambda _p, b: 2 * b})
    assert doubled.balance("alice") == 18_000


def test_a_bench_file_names_the_inner_adapter_and_the_hooks_by_path() -> None:
    adapter = RewritingAdapter({"inner": f"{__name__}:Canned", "records": f"{__name__}:no_refund", "x": 1})
    assert isinstance(adapter.inner, Canned) and adapter.inner.options == {"x": 1}  # its own options stay its own
    assert adapter.bet_record("alice")[0].returned == 0


def test_on_wraps_the_bench_s_own_adapter_and_keeps_its_options() -> None:
    bench = load_bench("in-process")
    rewritten = RewritingAdapter.on(bench, records=no_refund)
    assert rewritten.server.adapter == "harness.bench.adapters.rewriting:RewritingAdapter"
    assert rewritten.server.options["inner"] == bench.server.adapter
    assert rewritten.server.options["records"] is no_refund and "events" not in rewritten.server.options
    assert rewritten.name == bench.name and bench.server.adapter != rewritten.server.adapter


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "option 'inner' must name the adapter to wrap, got None"),
        ({"inner": "no.such.module:Adapter"}, "cannot import no.such.module"),
        ({"inner": Canned, "records": 3}, "option 'records': expected a function or 'package.module:function'"),
        ({"inner": Canned, "events": "no.such.module:f"}, "option 'events': cannot import no.such.module"),
        ({"inner": Canned, "events": f"{__name__}:NOTHING"}, "option 'events': expected a function"),
    ],
)
def test_a_bad_option_is_named(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RewritingAdapter(options)
