"""A scripted stand-in for a game server's device gateway, for device tests that need no real server (this fake has
the same view of the wire: bytes on the server end of each line).

It acknowledges every frame (through the harness link layer), records what each device said, and drives the lamp
with a fixed schedule: OPEN, CLOSE after the betting time, and the next OPEN once the round is over by the rules of
docs/protocol.md §7 (or after a time limit).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import simpy

from harness.wire.line_events import Received
from harness.wire.link import Link
from harness.wire.messages import (
    CATALOGUE,
    BowlOff,
    Hello,
    LampClose,
    LampOpen,
    LampVoid,
    Message,
    ReaderRearranged,
    Result,
    Source,
    VoidClause,
)
from harness.wire.transports.base import Transport


class DevServer:
    def __init__(
        self,
        env: simpy.Environment,
        ends: Mapping[Source, Transport],
        *,
        rounds: int,
        betting_ms: int = 250,
        tick: float = 0.005,
    ) -> None:
        self.env = env
        self.ends = dict(ends)
        self.links = {
            src: Link(
                Source.SERVER,
                Hello("SRV-test", 1, "t"),
                frozenset(cls for (s, _t), cls in CATALOGUE.items() if s is src),
            )
            for src in ends
        }
        self.heard: list[tuple[float, Source, Message]] = []
        self.tags: list[str | None] = []  # the round tag of each frame in ``heard`` (docs/protocol.md §6)
        self.ats: list[int | None] = []  # the event time (device ms) of each frame in ``heard`` (§6, 1.2)
        self.opens: list[float] = []  # when each OPEN was queued
        self.betting_ms = betting_ms
        self.tick = tick
        self.rounds = rounds
        self.done = env.event()
        self._round_over: simpy.Event = env.event()
        env.process(self._io())
        env.process(self._schedule())

    def said(self, src: Source, round_no: int | None = None) -> list[Message]:
        """What ``src`` said (during round ``round_no``: from its OPEN to the next one)."""
        if round_no is None:
            return [m for _t, s, m in self.heard if s is src]
        start = self.opens[round_no - 1]
        end = self.opens[round_no] if round_no < len(self.opens) else float("inf")
        return [m for t, s, m in self.heard if s is src and start <= t < end]

    def _io(self) -> Generator[simpy.Event, Any, None]:
        for link in self.links.values():
            link.open(self.env.now)
        while True:
            now = self.env.now
            for src, link in self.links.items():
                end = self.ends[src]
                data = end.read(0.0) if end.connected else b""
                for event in link.receive(data, now) if data else []:
                    if isinstance(event, Received) and not isinstance(event.frame.message, Hello):
                        self.heard.append((now, src, event.frame.message))
                        self.tags.append(event.frame.round)
                        self.ats.append(event.frame.at)
                        self._judge(event.frame.message)
                link.poll(now)
                out = link.take_output()
                if out and end.connected:
                    end.write(out)
            yield self.env.timeout(self.tick)

    def _judge(self, msg: Message) -> None:
        over = (
            (isinstance(msg, Result) and "S" not in msg.faces and not msg.overlap)
            or isinstance(msg, ReaderRearranged)
            or (isinstance(msg, BowlOff) and msg.touch)
        )
        if over and not self._round_over.triggered:
            self._round_over.succeed(msg)

    def _lamp(self, message: Message) -> None:
        self.links[Source.LAMP].send(message, self.env.now)

    def _schedule(self) -> Generator[simpy.Event, Any, None]:
        yield self.env.timeout(0.05)
        for number in range(1, self.rounds + 1):
            self._round_over = self.env.event()
            self.opens.append(self.env.now)
            self._lamp(LampOpen(str(number), self.betting_ms))
            yield self.env.timeout(self.betting_ms / 1000)
            self._lamp(LampClose(str(number)))
            result = yield self._round_over | self.env.timeout(3.0)
            verdict = next(iter(result.values()), None)
            if isinstance(verdict, BowlOff):
                self._lamp(LampVoid(str(number), VoidClause.SH_5))
            yield self.env.timeout(0.1)
        self.done.succeed()
