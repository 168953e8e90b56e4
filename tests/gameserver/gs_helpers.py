"""Shared test helpers for the game server tests: a settable clock and a table driver that speaks in
engine-level table reports."""

from __future__ import annotations

from dataclasses import dataclass

from gameserver.engine import RoundEngine
from gameserver.events import Event, EventKind, ReportKind, TableReport
from gameserver.model import EngineConfig


@dataclass
class ManualClock:
    """A clock the test moves by hand (the engine's injected time source)."""

    t: float = 1000.0

    def __call__(self) -> float:
        return self.t


class Table:
    """An engine with a manual clock and a log of every event it emitted."""

    def __init__(self, config: EngineConfig | None = None, wallets: dict[str, int] | None = None) -> None:
        self.clock = ManualClock()
        self.engine = RoundEngine(config or EngineConfig(auto_open=False), self.clock)
        self.log: list[Event] = []
        for player, balance in (wallets or {"alice": 100_000, "bob": 100_000}).items():
            self.engine.open_wallet(player, balance)
        self.flush()

    def open_round(self) -> Table:
        """Open betting on a round now; returns self."""
        self.engine.open_round()
        self.flush()
        return self

    def flush(self) -> list[Event]:
        events = self.engine.drain()
        self.log.extend(events)
        return events

    def kinds(self) -> list[EventKind]:
        return [e.kind for e in self.log]

    def advance(self, seconds: float) -> None:
        self.clock.t += seconds
        self.engine.tick()
        self.flush()

    def send(self, kind: ReportKind, faces: str | None = None, overlap: bool = False, touch: bool = False) -> None:
        self.engine.report(TableReport(kind, "test", faces=faces, overlap=overlap, touch=touch))
        self.flush()

    def shake(self) -> None:
        for kind in (ReportKind.BOWL_ON, ReportKind.SHAKE_START, ReportKind.SHAKE_END):
            self.send(kind)

    def close_betting(self) -> None:
        """Advance past the betting deadline."""
        r = self.engine.active
        assert r is not None
        self.advance(r.closes_at - self.clock.t + 0.001)

    def reveal(self, faces: str) -> None:
        self.send(ReportKind.BOWL_OFF)
        self.send(ReportKind.RESULT, faces=faces)

    def bet(self, player: str, bet_type: str, stake: int, client_id: str | None = None) -> int:
        ack, _ = self.engine.place_bet(player, client_id or f"{player}-{len(self.log)}", bet_type, stake)
        self.flush()
        return ack.bet_id

    def last(self, kind: EventKind) -> Event:
        return [e for e in self.log if e.kind is kind][-1]
