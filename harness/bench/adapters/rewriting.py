"""A test double that makes any game server misreport on purpose: :class:`RewritingAdapter`.

It wraps another adapter (the "inner" one: the reference server in-process, a lab's own adapter) and passes every
call through, but rewrites what the server reports on the way back with plain functions, much as httpx's
``MockTransport`` answers requests with a handler. Use it to prove that the oracle (or a lab's own check) catches a
defect, without writing a server that has it::

    from dataclasses import replace
    from harness.bench.adapters.rewriting import RewritingAdapter
    from harness.bench.config import load_bench
    from harness.bench.rig import Rig
    from harness.records import BetResult

    def no_refunds(row):  # a server that marks refunds but never credits them
        return replace(row, returned=0) if row.result == BetResult.REFUND else row

    with Rig.build(RewritingAdapter.on(load_bench("in-process"), records=no_refunds), {"alice": 10_000}) as rig:
        ...  # play rounds; rig.verdict() reports the missing refunds and the balance they leave wrong

The hooks, each optional, each called once per item every time the harness reads it (so they must be pure):

- ``events(RoundEvent) -> RoundEvent | None``: each round event (None: the server never published it);
- ``replies(BetReply) -> BetReply``: each answer to a bet;
- ``records(BetRecordRow) -> BetRecordRow | None``: each row of a player's bet record (None: the row is missing);
- ``balance(player_id, balance) -> int``: each balance, after the adjustment below.

By default the balance follows the rewritten records, as a consistent (if wrong) server's wallet would: it moves by
what the rewrite changed in each row's ``returned``. Pass ``balance_follows_records=False`` to report the inner
server's balance untouched (a record that disagrees with the wallet).

In a bench file (``server.adapter: harness.bench.adapters.rewriting:RewritingAdapter``) the options are
``inner`` (the wrapped adapter's ``package.module:ClassName``), the hooks as ``package.module:function`` paths,
and ``balance_follows_records``; every other option is handed to the inner adapter. In code,
:meth:`RewritingAdapter.on` turns a bench into the same bench with its server's reports rewritten, and the options
may hold the functions (and the inner adapter's class or instance) themselves.

The wrapped adapter is :attr:`RewritingAdapter.inner`; only the adapter interface is passed through (a rewriting
adapter is not ``Faultable``: fault runs need the bench's own adapter).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from harness.bench.adapters.base import GameServerAdapter, ServerSetup
from harness.bench.adapters.loader import load_adapter
from harness.bench.config import Bench
from harness.errors import InputError
from harness.records import BetRecordRow, BetReply, RoundEvent

EventRewrite = Callable[[RoundEvent], RoundEvent | None]
ReplyRewrite = Callable[[BetReply], BetReply]
RecordRewrite = Callable[[BetRecordRow], BetRecordRow | None]
BalanceRewrite = Callable[[str, int], int]

_OWN = ("inner", "events", "replies", "records", "balance", "balance_follows_records")


class RewritingAdapter(GameServerAdapter):
    """Another adapter (:attr:`inner`) whose reports are rewritten by functions on the way back: ``events`` (each
    round event; None drops it), ``replies`` (each answer to a bet), ``records`` (each bet-record row; None drops
    it), ``balance`` (each balance). Every other call passes through unchanged. With ``balance_follows_records``
    (default) a balance moves by what the rewrite changed in the rows' ``returned``. Not ``Faultable``.

    Raises:
        InputError: ``inner`` is missing or names no adapter, or a hook is neither callable nor a
            ``package.module:function`` path that imports.
    """

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        passed = {k: v for k, v in options.items() if k not in _OWN}
        self.inner = _inner_adapter(options.get("inner"), passed)
        self.clock_is_sim_time = self.inner.clock_is_sim_time
        self.bet_record_fields = self.inner.bet_record_fields
        self.events: EventRewrite | None = _hook(options.get("events"), "events")
        self.replies: ReplyRewrite | None = _hook(options.get("replies"), "replies")
        self.records: RecordRewrite | None = _hook(options.get("records"), "records")
        self.rewrite_balance: BalanceRewrite | None = _hook(options.get("balance"), "balance")
        self.balance_follows_records = bool(options.get("balance_follows_records", True))

    @classmethod
    def on(
        cls,
        bench: Bench,
        *,
        events: EventRewrite | None = None,
        replies: ReplyRewrite | None = None,
        records: RecordRewrite | None = None,
        balance: BalanceRewrite | None = None,
        balance_follows_records: bool = True,
    ) -> Bench:
        """``bench`` with its server's adapter wrapped in a rewriting adapter with these hooks."""
        hooks = {"events": events, "replies": replies, "records": records, "balance": balance}
        options = {
            **bench.server.options,
            "inner": bench.server.adapter,
            **{k: v for k, v in hooks.items() if v is not None},
            "balance_follows_records": balance_follows_records,
        }
        adapter = f"{cls.__module__}:{cls.__qualname__}"
        return replace(bench, server=replace(bench.server, adapter=adapter, options=options))

    # ------------------------------------------------------------------ passed through
    def start(self, setup: ServerSetup) -> None:
        self.inner.start(setup)

    def stop(self) -> None:
        self.inner.stop()

    def connect(self, player_id: str) -> None:
        self.inner.connect(player_id)

    def disconnect(self, player_id: str) -> None:
        self.inner.disconnect(player_id)

    def supervise(self, action: str, reason: str = "") -> None:
        self.inner.supervise(action, reason)

    def evidence(self) -> dict[str, str]:
        return self.inner.evidence()

    # ------------------------------------------------------------------ rewritten
    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        reply = self.inner.place_bet(player_id, client_bet_id, bet_type, stake, lose_reply=lose_reply)
        return reply if self.replies is None else self.replies(reply)

    def place_bet_for_round(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: str
    ) -> BetReply:
        reply = self.inner.place_bet_for_round(player_id, client_bet_id, bet_type, stake, round_id)
        return reply if self.replies is None else self.replies(reply)

    def round_events(self) -> list[RoundEvent]:
        events = self.inner.round_events()
        if self.events is None:
            return events
        return [e for e in map(self.events, events) if e is not None]

    def round_events_since(self, n: int) -> list[RoundEvent]:
        if self.events is None:
            return self.inner.round_events_since(n)
        return super().round_events_since(n)  # a rewrite may drop events: count them after it

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        rows = self.inner.bet_record(player_id)
        if self.records is None:
            return rows
        return [r for r in map(self.records, rows) if r is not None]

    def balance(self, player_id: str) -> int:
        balance = self.inner.balance(player_id)
        if self.records is not None and self.balance_follows_records:
            for row in self.inner.bet_record(player_id):
                new = self.records(row)
                if new is not None:
                    balance += new.returned - row.returned
        return balance if self.rewrite_balance is None else self.rewrite_balance(player_id, balance)


def _inner_adapter(inner: object, options: Mapping[str, Any]) -> GameServerAdapter:
    if isinstance(inner, GameServerAdapter):
        return inner
    if isinstance(inner, type) and issubclass(inner, GameServerAdapter):
        return inner(options)
    if isinstance(inner, str) and inner:
        return load_adapter(inner, options)
    raise InputError(f"rewriting adapter: option 'inner' must name the adapter to wrap, got {inner!r}")


def _hook(value: object, name: str) -> Any:
    """A hook given as a callable or as a ``package.module:function`` path; None when not given."""
    if value is None or callable(value):
        return value
    if isinstance(value, str):
        module_name, _, attr = value.partition(":")
        try:
            found = getattr(importlib.import_module(module_name), attr, None) if module_name and attr else None
        except ImportError as exc:
            raise InputError(f"rewriting adapter: option {name!r}: cannot import {module_name}: {exc}") from None
        if callable(found):
            return found
    raise InputError(
        f"rewriting adapter: option {name!r}: expected a function or 'package.module:function', got {value!r}"
    )
