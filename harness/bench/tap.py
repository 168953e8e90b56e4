"""A rig's tap on the bench event feed: what the table, its device lines, the players and the server do, published
to a :class:`~harness.feed.Feed` as it happens.

:func:`tap_rig` hooks into what the rig already exposes and never changes it: the emulated table's ground-truth
watchers (round state, dealer actions), the device hub's link events (decoded frames per line; heartbeats and
acknowledgements are control frames and are folded away, a frame's raw bytes come from the rig's trace), the
in-process adapter's event watchers (server round events), and the rig's own lists of actions and sent bets, which
are read when one of those hooks fires. When a round has ended at the server and at the table the oracle judges that
round alone (its ground truth, the server's events for it and the bets sent into it) and the verdict is published;
the players who bet in it have their balances read. The seeded results of a run are the same with or without a tap:
nothing here draws from a random stream, schedules a SimPy event or writes to a line.

:func:`rig_taps` taps every rig built while it is active (commands whose rigs are built deep inside: certification
scenarios, fault runs).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any

from harness.bench import rig as rig_module
from harness.bench.rig import Rig
from harness.errors import AdapterError
from harness.feed import Feed, FeedKind
from harness.judge.history import History
from harness.judge.oracle import Difference, Observation, Verdict, judge
from harness.records import RoundEvent, RoundEventKind
from harness.wire.protocol.link import Delivered, LinkChanged, LinkEvent, Received, Refused, Rejected
from harness.wire.protocol.messages import LAMP_COMMANDS, Message, Source
from simulator.events import BetSent, BettingClosed, Event, RoundEnded, RoundOpened

RAW_MAX = 160  # characters of a frame's raw bytes kept in the feed
_QUIET_TRUTH = (BetSent,)  # the crowd's planned bets: the bets themselves are published as they are sent


def message_text(message: Message) -> str:
    """A message as a person reads it: its wire type, then its fields (``OFF touch=1 token=2``)."""
    parts = [message.TYPE or type(message).__name__]
    for f in dataclasses.fields(message):
        value = getattr(message, f.name)
        if value is not None and value != "":
            parts.append(f"{f.name}={value}")
    return " ".join(parts)


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


class RigTap:
    """Publishes one rig's events to ``feed`` (see the module's docstring). ``pace`` > 0 holds the caller back so
    that bench time runs at most ``pace`` times the wall clock (a person watching a virtual-time bench); it only
    sleeps, so results are unchanged. Call :meth:`finish` when the rig's work is done."""

    def __init__(self, rig: Rig, feed: Feed, label: str = "", pace: float = 0.0) -> None:
        self.rig = rig
        self.feed = feed
        self.pace = pace
        self._wall0 = time.monotonic()
        self._t0 = rig.now
        self._actions = self._sent = self._server = self._ops = 0
        self._history: History | None = None
        self._truth: dict[int, list[Event]] = {}
        self._table_ended: set[int] = set()
        self._server_ended: dict[str, RoundEvent] = {}
        self._judged: set[str] = set()
        self._trace_names = {line.name: line.trace_name for line in rig.bench.lines}
        feed.continue_from()
        feed.publish(
            FeedKind.BENCH,
            0.0,
            bench=rig.bench.name,
            label=label,
            seed=rig.bench.seed,
            realtime=rig.bench.realtime,
            lines={line.name: [r.value for r in line.roles] for line in rig.bench.lines},
            players=sorted(rig.opening),
        )
        rig.emulated.watchers.append(self._on_truth)
        hub = rig.emulated.hub
        previous = hub.on_event

        def on_link(src: Source, event: LinkEvent, now: float) -> None:
            if previous is not None:
                previous(src, event, now)
            self._on_link(src, event, now)

        hub.on_event = on_link
        watchers: list[Callable[[], None]] | None = getattr(rig.adapter, "event_watchers", None)
        if watchers is not None:
            watchers.append(self.drain)

    @property
    def now(self) -> float:
        return self.rig.now - self._t0

    def watch_history(self, history: History) -> None:
        """Publish a fault run's history as it grows: faults applied, healed and skipped, probes, stuck rounds."""
        self._history = history

    # ------------------------------------------------------------------ hooks
    def _on_truth(self, event: Event) -> None:
        if isinstance(event, _QUIET_TRUTH):
            return
        now = self.now
        data = event.to_dict()
        data["event"] = data.pop("kind")
        data.pop("t", None)
        number = getattr(event, "round", None)
        if isinstance(number, int):
            self._truth.setdefault(number, []).append(event)
        self.feed.publish(FeedKind.TABLE, now, **data)
        if isinstance(event, RoundOpened):
            deadline = event.deadline - self._t0
            self.feed.publish(FeedKind.ROUND, now, round=event.round, state="opened", deadline=round(deadline, 6))
        elif isinstance(event, BettingClosed):
            self.feed.publish(FeedKind.ROUND, now, round=event.round, state="closed")
        elif isinstance(event, RoundEnded):
            self._table_ended.add(event.round)
            self.feed.publish(
                FeedKind.ROUND,
                now,
                round=event.round,
                state="ended",
                status=str(event.status),
                clause=event.clause or "",
                faces=event.faces or "",
            )
        self.drain()
        if self.pace > 0:
            ahead = self._wall0 + now / self.pace - time.monotonic()
            if ahead > 0:
                time.sleep(min(ahead, 5.0))

    def _on_link(self, src: Source, event: LinkEvent, now: float) -> None:
        port = self.rig.emulated.hub.roles.get(src)
        line = port.name if port is not None else src.value.lower()
        t = now - self._t0
        if isinstance(event, Received):
            message = event.frame.message
            self._frame(t, line, src, "rx", message_text(message))
            if type(message) in LAMP_COMMANDS:
                self.feed.publish(FeedKind.LAMP, t, state=message.TYPE, round=getattr(message, "round", ""))
        elif isinstance(event, Delivered):
            self._frame(t, line, src, "tx", message_text(event.message))
        elif isinstance(event, Refused):
            self._frame(t, line, src, "tx", message_text(event.message), error=f"NAK {event.reason}")
        elif isinstance(event, Rejected):
            self._frame(t, line, src, "rx", "", error=str(event.error))
        elif isinstance(event, LinkChanged):
            self._frame(t, line, src, "link", "up" if event.up else "down", error="" if event.up else event.why)

    def _frame(self, t: float, line: str, src: Source, direction: str, msg: str, error: str = "") -> None:
        data: dict[str, Any] = {"line": line, "device": src.value, "dir": direction, "msg": msg}
        raw = self._raw(line, direction)
        if raw:
            data["raw"] = raw
        if error:
            data["error"] = error
        self.feed.publish(FeedKind.FRAME, t, **data)

    def _raw(self, line: str, direction: str) -> str:
        """The last bytes the trace saw on ``line`` in ``direction`` (escaped, at most :data:`RAW_MAX` chars)."""
        name = self._trace_names.get(line, line.upper())
        records = self.rig.recorder.records
        for rec in records[-1:-17:-1]:
            if rec.port == name and rec.dir == direction:
                text = rec.data.decode("latin-1").encode("unicode_escape").decode("ascii")
                return text[:RAW_MAX]
        return ""

    # ------------------------------------------------------------------ draining the rig's lists
    def drain(self) -> None:
        """Publish what the rig's lists gained since the last call; judge the rounds that have ended at both ends.
        Never raises on a server that is down (its events are read when it is back)."""
        rig, now = self.rig, self.now
        actions = rig.actions
        for action in actions[self._actions :]:
            if action.what != "bet":
                self.feed.publish(FeedKind.NOTE, now, who=action.who, what=action.what, detail=action.detail)
        self._actions = len(actions)
        sent = rig.sent
        for s in sent[self._sent :]:
            r = s.reply
            self.feed.publish(
                FeedKind.BET,
                now,
                player=r.player_id,
                bet=r.bet_type,
                stake=r.stake,
                accepted=r.accepted,
                code=r.code,
                round=r.round_id,
                table_round=rig.driver.rounds.get(r.round_id, 0) if r.round_id else 0,
                bet_id=r.bet_id,
                after_close=s.after_close,
            )
        self._sent = len(sent)
        if self._history is not None:
            self._drain_history(now)
        try:
            events = rig.adapter.round_events()
        except AdapterError:
            return
        for e in events[self._server :]:
            self.feed.publish(
                FeedKind.SERVER,
                now,
                round=e.round_id,
                table_round=rig.driver.rounds.get(e.round_id, 0),
                event=str(e.kind),
                clause=e.clause,
                faces=e.faces,
                reason=e.reason,
            )
            if e.ends_round:
                self._server_ended.setdefault(e.round_id, e)
            elif e.kind == RoundEventKind.OPENED:
                self._judge_pending(final=True)  # a new round: the ones before it will not change any more
        self._server = len(events)
        self._judge_pending()

    def _drain_history(self, now: float) -> None:
        assert self._history is not None
        ops = self._history.ops
        for op in ops[self._ops :]:
            if op.process == "bench":
                self.feed.publish(FeedKind.FAULT, now, op=str(op.f), round=op.round_id, detail=op.detail)
        self._ops = len(ops)

    def _judge_pending(self, final: bool = False) -> None:
        for rid in list(self._server_ended):
            if rid in self._judged:
                continue
            number = self.rig.driver.rounds.get(rid)
            if final or number is None or number in self._table_ended:
                self._judged.add(rid)
                self._publish_round_verdict(rid, number)

    def _publish_round_verdict(self, rid: str, number: int | None) -> None:
        rig = self.rig
        try:
            events = tuple(e for e in rig.adapter.round_events() if e.round_id == rid)
        except AdapterError:
            return
        obs = Observation(
            truth=tuple(self._truth.get(number, ())) if number is not None else (),
            rounds={rid: number} if number is not None else {},
            server_events=events,
            records={},
            balances={},
            opening={},
            sent=tuple(s for s in rig.sent if s.reply.round_id == rid),
            supervisor_cancelled=tuple(c for c in rig.cancelled if c == rid),
            server_clock_is_sim=rig.adapter.clock_is_sim_time,
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
        players = sorted({s.reply.player_id for s in obs.sent if s.reply.accepted})
        for player in players:
            try:
                balance = rig.adapter.balance(player)
            except AdapterError:
                continue
            self.feed.publish(FeedKind.BALANCE, self.now, player=player, balance=balance)

    def finish(self, verdict: Verdict | None = None, summary: str = "") -> None:
        """Publish what is left, judge the rounds not judged yet, and (when given) the run's verdict."""
        self.drain()
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


def _expected_text(expected: Any) -> str:
    if expected is None:
        return ""
    status = str(expected.status)
    if status == "settled":
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
    for watcher in rig.emulated.watchers:
        owner = getattr(watcher, "__self__", None)
        if isinstance(owner, RigTap):
            return owner
    return None
