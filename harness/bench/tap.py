"""A rig's tap on the bench event feed: what the table, its device lines, the players and the server do, published
to a :class:`~harness.feed.Feed` as it happens.

:func:`tap_rig` hooks into what the rig already exposes and never changes it: the emulated table's ground-truth
watchers (round state, dealer actions), the device hub's link events (decoded frames per line; heartbeats and
acknowledgements are control frames and are folded away, a frame's raw bytes come from the rig's trace), the
adapter's event watchers when it has them (server round events:
:class:`~harness.bench.adapters.capabilities.EventWatching`, the in-process adapter; without them the server's
events are read at every ground-truth event), and the rig's own lists of actions and sent bets, which are read when
one of those hooks fires. When a round has ended at the server and at the table the oracle judges that
round alone (its ground truth, the server's events for it and the bets sent into it) and the verdict is published;
the players who bet in it have their balances read. The seeded results of a run are the same with or without a tap:
nothing here draws from a random stream, schedules a SimPy event or writes to a line.

:func:`rig_taps` taps every rig built while it is active (commands whose rigs are built deep inside: certification
scenarios, fault runs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import MethodType
from typing import Any

from harness.bench import rig as rig_module
from harness.bench.adapters.capabilities import EventWatching
from harness.bench.rig import Rig
from harness.bench.tabletap import RAW_MAX, TableTap, message_text
from harness.errors import AdapterError
from harness.feed import Feed, FeedKind
from harness.judge.expect import ExpectedRound
from harness.judge.history import History
from harness.judge.oracle import Difference, Observation, SentBet, Verdict, judge
from harness.judge.timeline import Alteration
from harness.records import OpFunction, OpType, RoundEvent, RoundStatus
from harness.wire.messages import Message, Source

_FAULT_OPS = (OpFunction.FAULT, OpFunction.HEAL, OpFunction.SKIPPED, OpFunction.STUCK, OpFunction.CANCEL)


def difference_data(d: Difference) -> dict[str, str]:
    """A difference as feed data (its fields by name)."""
    return {
        "round": d.round,
        "bet": d.bet,
        "clause": d.clause,
        "what": d.what,
        "expected": d.expected,
        "actual": d.actual,
    }


class RigTap(TableTap):
    """Publishes one rig's events to ``feed`` (see the module's docstring): the table's (:class:`TableTap`), then the
    rig's notes, bets, the server's round events, balances and per-round verdicts. ``pace`` as for
    :class:`TableTap`. Call :meth:`finish` when the rig's work is done."""

    def __init__(self, rig: Rig, feed: Feed, label: str = "", pace: float = 0.0) -> None:
        self.rig = rig
        self._actions = self._sent = self._server = self._ops = 0
        self._history: History | None = None
        self._server_ended: dict[str, RoundEvent] = {}
        self._sent_by_round: dict[str, list[SentBet]] = {}
        self._pending: dict[str, None] = {}  # rounds the server ended that are not judged yet, in order
        self._events_by_round: dict[str, list[RoundEvent]] = {}
        self._finished = False
        self._bettors: dict[str, set[str]] = {}  # fault runs: round id -> players whose bets it took
        self._forged: list[tuple[Alteration, int]] = []  # frames the harness forged, not published yet; trace mark
        self._queued: list[Alteration] = []  # reports the harness queued on a device's own end, not sent yet
        bench = rig.bench
        super().__init__(
            rig.emulated,
            feed,
            bench.lines,
            lambda: rig.now,
            rig.recorder,
            pace,
            bench=bench.name,
            label=label,
            seed=rig.emulated.model.seed,  # the run's root seed (``--seed``), not the bench file's default
            realtime=bench.realtime,
            players=sorted(rig.opening),
        )
        adapter = rig.adapter
        self._watching = isinstance(adapter, EventWatching)  # it says when it has new events: read them only then
        if isinstance(adapter, EventWatching):
            adapter.event_watchers.append(self.drain)
        alter = rig.alter

        def altered(
            kind: str, source: str, message: str, round_tag: str | None = None, faces: str = "", line: str = ""
        ) -> Alteration:
            alteration = alter(kind, source, message, round_tag, faces, line)
            if kind == "forged":  # its bytes go out at the line's next service: the first chunk after this mark
                self._forged.append((alteration, len(rig.recorder.records)))
            elif kind == "queued":  # handed to the device's end right after: its frame is the next report
                self._queued.append(alteration)
            return alteration

        rig.alter = altered  # type: ignore[method-assign]  # observes the frames the harness makes

    def after_truth(self) -> None:
        self.drain(server=not self._watching)

    def watch_history(self, history: History) -> None:
        """Publish a fault run's history as it grows: faults applied, healed and skipped, probes, stuck rounds."""
        self._history = history

    # ------------------------------------------------------------------ draining the rig's lists
    def drain(self, server: bool = True) -> None:
        """Publish what the rig's lists gained since the last call (the server's round events too when ``server``);
        judge the rounds that have ended at both ends. Never raises on a server that is down (its events are read
        when it is back)."""
        rig = self.rig
        actions, sent = rig.actions, rig.sent
        if self._forged:
            self._publish_forged()
        if len(actions) == self._actions and len(sent) == self._sent and self._history is None and not server:
            if self._pending:
                self._judge_pending()
            return  # nothing new to publish (the common case: a truth event between two of the rig's actions)
        now = self.now
        if len(actions) > self._actions:
            for action in actions[self._actions :]:
                if action.what != "bet":
                    self.feed.publish(FeedKind.NOTE, now, who=action.who, what=action.what, detail=action.detail)
            self._actions = len(actions)
        for s in sent[self._sent :] if len(sent) > self._sent else ():
            r = s.reply
            self._sent_by_round.setdefault(r.round_id, []).append(s)
            bet: dict[str, Any] = {"player": r.player_id, "bet": r.bet_type, "stake": r.stake, "accepted": r.accepted}
            if r.code:
                bet["code"] = r.code
            if r.round_id:
                bet["round"], bet["table_round"] = r.round_id, rig.driver.rounds.get(r.round_id, 0)
            if s.after_close:
                bet["after_close"] = True
            self.feed.publish(FeedKind.BET, now, **bet)
        self._sent = len(sent)
        if self._history is not None:
            self._drain_history(now)
        if server:
            self._drain_server(now)
        if self._pending:
            self._judge_pending()

    def _report(self, src: Source, message: Message, now: float) -> None:
        queued = self._queued
        if queued and queued[0].source == src.value and queued[0].message == type(message).__name__:
            queued.pop(0)
            port = self.table.hub.roles.get(src)
            line = port.name if port is not None else src.value.lower()
            self._frame(now - self._t0, line, src, "tx", message_text(message), forged="queued")
        else:
            super()._report(src, message, now)

    def _publish_forged(self, final: bool = False) -> None:
        """Publish each frame the harness forged whose bytes the trace has seen (``final``: every one left, without
        bytes when none were seen): ``forged`` ``frame``, ``reply`` (in another device's reply on a bus) or
        ``noise``; ``raw`` the first chunk the line sent after the forgery (which carries it)."""
        records = self.rig.recorder.records
        left: list[tuple[Alteration, int]] = []
        for alteration, mark in self._forged:
            line, _, via = alteration.line.partition("@")
            name = self._trace_names.get(line, line.upper())
            chunk = next((r for r in records[mark:] if r.port == name and r.dir == "tx"), None)
            if chunk is None and not final:
                left.append((alteration, mark))
                continue
            raw = "" if chunk is None else chunk.data.decode("latin-1").encode("unicode_escape").decode("ascii")
            noise = alteration.message.startswith("noise:")
            msg = alteration.message.replace(":", " ", 1) if noise else alteration.message
            msg += "".join(f" {k}={v}" for k, v in (("faces", alteration.faces), ("round", alteration.round_tag)) if v)
            if via:
                msg += f" (in the {via} reply)"
            how = "noise" if noise else "reply" if via else "frame"
            self._frame(alteration.t - self._t0, line, alteration.source, "tx", msg, forged=how, raw=raw[:RAW_MAX])
        self._forged = left

    def _drain_server(self, now: float) -> None:
        rig = self.rig
        try:
            events = rig.adapter.round_events_since(self._server)
        except AdapterError:
            return
        for e in events:
            self._events_by_round.setdefault(e.round_id, []).append(e)
            data: dict[str, Any] = {"round": e.round_id, "table_round": rig.driver.rounds.get(e.round_id, 0)}
            data["event"] = str(e.kind)
            for key, value in (("clause", e.clause), ("faces", e.faces), ("reason", e.reason)):
                if value:
                    data[key] = value
            self.feed.publish(FeedKind.SERVER, now, **data)
            if e.ends_round and e.round_id not in self._server_ended:
                self._server_ended[e.round_id] = e
                self._pending[e.round_id] = None
        self._server += len(events)

    def _drain_history(self, now: float) -> None:
        assert self._history is not None
        ops = self._history.ops
        for op in ops[self._ops :]:
            if op.process == "bench" and op.f in _FAULT_OPS:
                self.feed.publish(FeedKind.FAULT, now, op=str(op.f), round=op.round_id, detail=op.detail)
            elif op.process == "bench":
                self.feed.publish(FeedKind.NOTE, now, who="bench", what=str(op.f), detail=op.detail, round=op.round_id)
            elif op.f == OpFunction.BET and op.type != OpType.INVOKE:  # a fault run's player: the bet's completion
                if op.type == OpType.OK:
                    self._bettors.setdefault(op.round_id, set()).add(op.process)
                self.feed.publish(
                    FeedKind.BET,
                    now,
                    player=op.process,
                    bet=op.bet_type,
                    stake=op.stake,
                    accepted=op.type == OpType.OK,
                    code="" if op.type == OpType.OK else f"{op.type} {op.detail}".strip(),
                    round=op.round_id,
                    table_round=self.rig.driver.rounds.get(op.round_id, 0),
                    bet_id=op.bet_id,
                )
        self._ops = len(ops)

    def _judge_pending(self, final: bool = False) -> None:
        """Judge each round the server has ended once the table has too, or once the dealer has placed the tokens
        of a later round (the table is done with this one: a lamp may open the next round while the dealer still
        lifts this one's bowl), or (``final``) now: a round is judged once, on what the final verdict will see."""
        later = self._table_dealt
        for rid in list(self._pending):
            number = self.rig.driver.rounds.get(rid)
            if final or number is None or number in self._table_ended or number < later:
                del self._pending[rid]
                self._publish_round_verdict(rid, number)

    def _publish_round_verdict(self, rid: str, number: int | None) -> None:
        rig = self.rig
        events = tuple(self._events_by_round.get(rid, ()))
        obs = Observation(
            truth=tuple(self._truth.get(number, ())) if number is not None else (),
            rounds={rid: number} if number is not None else {},
            server_events=events,
            records={},
            balances={},
            opening={},
            sent=tuple(self._sent_by_round.get(rid, ())),
            supervisor_cancelled=tuple(c for c in rig.cancelled if c == rid),
            server_clock_is_sim=rig.adapter.clock_is_sim_time,
            timing=rig.timing,
            kills=tuple(k for k in rig.kills if rid in k.in_play),
            corrections={r: f for r, f in rig.corrections.items() if r == rid},
            alterations=tuple(a for a in rig.alterations if a.round_id == rid),
            supervisor_paused=tuple(p for p in rig.paused if p == rid),
            reader_line=rig.observation_reader_line(),
        )
        verdict = judge(obs)
        expected = verdict.expected.get(rid)
        self.feed.publish(
            FeedKind.VERDICT,
            self.now,
            round=rid,
            table_round=number or 0,
            ok=verdict.passed,
            expected=_expected_text(expected),
            differences=[difference_data(d) for d in verdict.differences],
        )
        players = sorted({s.reply.player_id for s in obs.sent if s.reply.accepted} | self._bettors.get(rid, set()))
        balances: dict[str, int] = {}
        for player in players:
            with contextlib.suppress(AdapterError):
                balances[player] = rig.adapter.balance(player)
        if balances:
            self.feed.publish(FeedKind.BALANCE, self.now, round=rid, balances=balances)

    def finish(self, verdict: Verdict | None = None, summary: str = "") -> None:
        """Publish what is left, judge the rounds not judged yet, and (when given) the run's verdict. A second call
        publishes nothing."""
        if self._finished:
            return
        self._finished = True
        self.drain()
        self._publish_forged(final=True)
        self._judge_pending(final=True)
        if verdict is not None:
            self.feed.publish(
                FeedKind.VERDICT,
                self.now,
                final=True,
                ok=verdict.passed,
                summary=verdict.summary().splitlines()[0],
                differences=[difference_data(d) for d in verdict.differences],
            )
        if summary:
            self.feed.publish(FeedKind.END, self.now, summary=summary)


def _expected_text(expected: ExpectedRound | None) -> str:
    """The oracle's expected end of a round, as the feed shows it ("" when it has none)."""
    if expected is None:
        return ""
    status = str(expected.status)
    if expected.status == RoundStatus.SETTLED:
        return f"settled on {expected.faces}"
    return f"{status} ({expected.clause})" if expected.clause else status


def tap_rig(rig: Rig, feed: Feed, label: str = "", pace: float = 0.0) -> RigTap:
    """Tap ``rig`` onto ``feed`` (see :class:`RigTap`). Returns the tap; the caller calls its ``finish``."""
    return RigTap(rig, feed, label, pace)


@contextlib.contextmanager
def rig_taps(feed: Feed, label: Callable[[], str] = lambda: "", pace: float = 0.0) -> Iterator[list[RigTap]]:
    """Tap every rig built while the block runs; yields the list of taps (in build order), finished on exit."""
    taps: list[RigTap] = []

    def hook(rig: Rig) -> None:
        if taps:
            taps[-1].finish()
        taps.append(RigTap(rig, feed, label(), pace))

    rig_module.BUILD_HOOKS.append(hook)
    try:
        yield taps
    finally:
        rig_module.BUILD_HOOKS.remove(hook)
        if taps:
            with contextlib.suppress(Exception):
                taps[-1].finish()


def tap_of(rig: Rig) -> RigTap | None:
    """The tap on ``rig``, if one was attached by :func:`rig_taps` or :func:`tap_rig`."""
    for watcher in rig.emulated.watchers:  # a tap watches the table with one of its own methods
        if isinstance(watcher, MethodType) and isinstance(watcher.__self__, RigTap):
            return watcher.__self__
    return None
