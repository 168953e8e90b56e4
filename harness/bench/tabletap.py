"""A table's tap on the bench event feed: what an emulated table and its device lines do, published to a
:class:`~harness.feed.Feed` as it happens (the part of a rig's tap that needs no game server: ``xocdia-hil devices``
uses it alone).

It hooks into the table's ground-truth watchers (round state, dealer actions), the reports the table hands its
devices (each device's frames as it sends them) and its device hub's link events (the server's frames, errors, a
line going up or down); heartbeats and acknowledgements are control frames and are folded away; a frame's raw bytes
are the last bytes the line's trace saw in that direction. It only observes: nothing here draws from a random
stream, schedules a SimPy event or writes to a line.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from harness.bench.devices.emulated import EmulatedTable
from harness.feed import Feed, FeedKind
from harness.wire.dialects.base import LineSpec
from harness.wire.line_events import LinkChanged, LinkEvent, Received, Refused, Rejected
from harness.wire.messages import LAMP_COMMANDS, Message, Source
from harness.wire.trace import TraceRecorder
from simulator.events import (
    BetSent,
    BettingClosed,
    Event,
    LinkUp,
    PlayerJoined,
    PlayerLeft,
    RoundEnded,
    RoundOpened,
    TokensPlaced,
)

RAW_MAX = 160  # characters of a frame's raw bytes kept in the feed
# Not published: the crowd's planned bets (a rig's tap publishes the bets themselves as they are sent) and its seats'
# comings and goings and links coming back (a link going down is an incident and is published).
_QUIET_TRUTH = (BetSent, PlayerJoined, PlayerLeft, LinkUp)
# Published as ``round`` events only (their data is the same).
_ROUND_TRUTH = (RoundOpened, BettingClosed, RoundEnded)


_FIELDS: dict[type[Message], tuple[str, ...]] = {}


def message_text(message: Message) -> str:
    """A message as a person reads it: its wire type, then its fields (``OFF touch=True token=2``)."""
    cls = type(message)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(message))
    parts = [message.TYPE or cls.__name__]
    for name in names:
        value = getattr(message, name)
        if value is not None and value != "":
            parts.append(f"{name}={value}")
    return " ".join(parts)


class TableTap:
    """Publishes one emulated table's events to ``feed``: a ``bench`` event first (``header`` its data), then
    ``table``, ``round``, ``lamp`` and ``frame`` events. ``clock`` is the table's environment time; ``recorder``
    (optional) the trace the frames' raw bytes come from. ``pace`` > 0 holds the caller back so that bench time runs
    at most ``pace`` times the wall clock (a person watching a virtual-time bench); it only sleeps."""

    def __init__(
        self,
        table: EmulatedTable,
        feed: Feed,
        lines: Sequence[LineSpec],
        clock: Callable[[], float],
        recorder: TraceRecorder | None = None,
        pace: float = 0.0,
        **header: Any,
    ) -> None:
        self.table = table
        self.feed = feed
        self.clock = clock
        self.recorder = recorder
        self.pace = pace
        self._wall0 = time.monotonic()
        self._t0 = clock()
        self._truth: dict[int, list[Event]] = {}
        self._table_ended: set[int] = set()
        self._table_opened = 0  # the table's latest round
        self._table_dealt = 0  # the latest round the dealer has placed tokens for (done with every earlier one)
        self._trace_names = {line.name: line.trace_name for line in lines}
        feed.continue_from()
        feed.publish(FeedKind.BENCH, 0.0, **header, lines={line.name: [r.value for r in line.roles] for line in lines})
        table.watchers.append(self._on_truth)
        hub = table.hub
        previous = hub.on_event

        def on_link(src: Source, event: LinkEvent, now: float) -> None:
            if previous is not None:
                previous(src, event, now)
            self._on_link(src, event, now)

        hub.on_event = on_link
        send = hub.send

        def sent(src: Source, message: Message, now: float, round: str | None = None, at: int | None = None) -> bool:
            serve = send(src, message, now, round, at)
            self._report(src, message, now)
            return serve  # whether the hub needs a service now (DeviceHub.send)

        hub.send = sent  # type: ignore[method-assign]  # observes each report the table hands its devices

    @property
    def now(self) -> float:
        """Seconds since the tap was attached, on the table's clock."""
        return self.clock() - self._t0

    def after_truth(self) -> None:
        """Called after each ground-truth event is published (a rig's tap reads its lists here)."""

    # ------------------------------------------------------------------ hooks
    def _on_truth(self, event: Event) -> None:
        if isinstance(event, _QUIET_TRUTH):
            return
        now = self.now
        number = getattr(event, "round", None)
        if isinstance(number, int):
            self._truth.setdefault(number, []).append(event)
        if not isinstance(event, _ROUND_TRUTH):
            data = event.to_dict()
            data["event"] = data.pop("kind")
            data.pop("t", None)
            self.feed.publish(FeedKind.TABLE, now, **data)
        if isinstance(event, TokensPlaced):
            self._table_dealt = max(self._table_dealt, event.round)
        if isinstance(event, RoundOpened):
            self._table_opened = max(self._table_opened, event.round)
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
        self.after_truth()
        if self.pace > 0:
            ahead = self._wall0 + now / self.pace - time.monotonic()
            if ahead > 0:
                time.sleep(min(ahead, 5.0))

    def _on_link(self, src: Source, event: LinkEvent, now: float) -> None:
        port = self.table.hub.roles.get(src)
        line = port.name if port is not None else src.value.lower()
        t = now - self._t0
        if isinstance(event, Received):
            message = event.frame.message
            lamp = message.TYPE if type(message) in LAMP_COMMANDS else ""
            self._frame(t, line, src, "rx", message_text(message), lamp=lamp)
        elif isinstance(event, Refused):
            self._frame(t, line, src, "tx", message_text(event.message), error=f"NAK {event.reason}")
        elif isinstance(event, Rejected):
            self._frame(t, line, src, "rx", "", error=str(event.error))
        elif isinstance(event, LinkChanged):
            self._frame(t, line, src, "link", "up" if event.up else "down", error="" if event.up else event.why)

    def _report(self, src: Source, message: Message, now: float) -> None:
        """A device report as the device sends it (acknowledged or not: a terminal acknowledges nothing)."""
        port = self.table.hub.roles.get(src)
        line = port.name if port is not None else src.value.lower()
        self._frame(now - self._t0, line, src, "tx", message_text(message))

    def _frame(
        self,
        t: float,
        line: str,
        src: Source | str,
        direction: str,
        msg: str,
        error: str = "",
        lamp: str = "",
        forged: str = "",
        raw: str | None = None,
    ) -> None:
        """Publish one ``frame`` event; ``forged`` says how the harness made it (empty: the device sent it), ``raw``
        its bytes when known (None: the line's last bytes in that direction)."""
        data: dict[str, Any] = {
            "line": line,
            "device": src.value if isinstance(src, Source) else src,
            "dir": direction,
            "msg": msg,
        }
        if lamp:
            data["lamp"] = lamp
        raw = self._raw(line, direction) if raw is None else raw
        if raw:
            data["raw"] = raw
        if error:
            data["error"] = error
        if forged:
            data["forged"] = forged
        self.feed.publish(FeedKind.FRAME, t, **data)

    def _raw(self, line: str, direction: str) -> str:
        """The last bytes the trace saw on ``line`` in ``direction`` (escaped, at most :data:`RAW_MAX` chars)."""
        if self.recorder is None:
            return ""
        name = self._trace_names.get(line, line.upper())
        records = self.recorder.records
        for rec in records[-1:-17:-1]:
            if rec.port == name and rec.dir == direction:
                text = rec.data.decode("latin-1").encode("unicode_escape").decode("ascii")
                return text[:RAW_MAX]
        return ""
