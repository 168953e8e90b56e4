"""The players' links as the fault injector sees them: which faults are active on each player's connection.

This is the in-memory implementation of the player-link seam (the bench decides, per bet, what the network
does with it); :mod:`harness.faults.proxy` is the real one, a TCP proxy on loopback between players and a
server process. Both apply the same four faults:

- ``player_disconnect``: the player is offline; bets are not sent (``fail``), the session reconnects on heal;
- ``player_latency``: each request arrives ``delay`` seconds late (it may arrive after betting closed);
- ``player_blackhole``: requests vanish; the player waits and gives up (``unknown``: never delivered);
- ``player_reset``: the request arrives but the connection is reset before the reply (``unknown``: delivered).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from harness.faults.schedule_model import Fault, FaultKind


class RouteMode(StrEnum):
    """What a player's link does with a request sent now."""

    OK = "ok"  # delivered (perhaps late)
    DOWN = "down"  # the player is offline: not sent
    BLACKHOLE = "blackhole"  # sent and lost: no reply
    RESET = "reset"  # delivered, but the connection is reset before the reply


@dataclass(frozen=True, slots=True)
class Route:
    """What happens to one request now: its :class:`RouteMode`, plus extra ``delay`` seconds."""

    mode: RouteMode
    delay: float = 0.0


@dataclass
class PlayerLinks:
    """Active link faults per player. ``players``: every player id (a fault on ``all`` hits each)."""

    players: tuple[str, ...]
    active: dict[str, list[Fault]] = field(default_factory=dict)

    def _who(self, fault: Fault) -> tuple[str, ...]:
        return self.players if fault.target == "all" else (fault.target,)

    def apply(self, fault: Fault) -> None:
        for p in self._who(fault):
            self.active.setdefault(p, []).append(fault)

    def heal(self, fault: Fault) -> list[str]:
        """Remove ``fault``; returns the players it had disconnected and that now have no disconnect left."""
        back: list[str] = []
        for p in self._who(fault):
            faults = self.active.get(p, [])
            if fault in faults:
                faults.remove(fault)
            if fault.kind in (FaultKind.PLAYER_DISCONNECT, FaultKind.PLAYER_RESET) and not self.down(p):
                back.append(p)
        return back

    def heal_all(self) -> None:
        self.active.clear()

    def down(self, player: str) -> bool:
        return any(f.kind == FaultKind.PLAYER_DISCONNECT for f in self.active.get(player, ()))

    def route(self, player: str) -> Route:
        """The route of a request sent now; disconnect beats blackhole beats reset; latencies add up."""
        faults = self.active.get(player, ())
        if not faults:
            return _CLEAR
        delay = sum(f.delay for f in faults if f.kind == FaultKind.PLAYER_LATENCY)
        for mode, kind in _ROUTE_FAULTS:
            if any(f.kind == kind for f in faults):
                return Route(mode, delay)
        return Route(RouteMode.OK, delay)


_CLEAR = Route(RouteMode.OK)  # a player with no fault on its link
_ROUTE_FAULTS = (  # in order of precedence
    (RouteMode.DOWN, FaultKind.PLAYER_DISCONNECT),
    (RouteMode.BLACKHOLE, FaultKind.PLAYER_BLACKHOLE),
    (RouteMode.RESET, FaultKind.PLAYER_RESET),
)
