"""Applying and healing faults during a run, and the players' sessions with the server.

:class:`Sessions` is who the bench believes is connected (a player is reconnected lazily, never while a
disconnect fault holds). :class:`Applier` fires a planned fault (kill the server, change a player's link or its
proxy, set a serial line's fault rates or pull its cable), heals it when its time comes, and heals everything in
:meth:`Applier.rollback`. Table incidents need nothing here: the simulator's script applies them.

A serial fault goes on the adapter's wrapper of the line's server end (``Faultable.serial_port``: the in-process
bench) or, when the adapter has none, on the rig's wrapper of its device end (``serial_ports``, from
:attr:`harness.bench.rig.Rig.serial_ports`: benches whose server opens its own ends). Either way it is a fault on
the line: the same rates in both directions, the same counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from harness.bench.adapters.base import GameServerAdapter
from harness.errors import AdapterError
from harness.faults.fault_adapters import Faultable, ProxiedPlayers
from harness.faults.links import PlayerLinks, RouteMode
from harness.faults.proxy import FaultProxy
from harness.faults.schedule_model import PLAYER_KINDS, SERIAL_KINDS, TABLE_KINDS, Fault, FaultKind
from harness.judge.history import History
from harness.records import OpFunction, OpType
from harness.wire.transports.faults import FaultRates, FaultyTransport


class Sessions:
    """The players' sessions as the bench sees them."""

    def __init__(self, adapter: GameServerAdapter, links: PlayerLinks, history: History, clock: Callable[[], float]):
        self.adapter = adapter
        self.links = links
        self.history = history
        self.clock = clock
        self.connected: set[str] = set()

    def connect(self, player: str) -> None:
        """Open the player's session unless it is open or the player is offline; a refusal is recorded."""
        if player in self.connected or self.links.down(player):
            return
        try:
            self.adapter.connect(player)
        except AdapterError as exc:
            self.history.add(self.clock(), player, OpType.FAIL, OpFunction.CONNECT, detail=exc.code)
            return
        self.connected.add(player)

    def forget(self, player: str) -> None:
        self.connected.discard(player)


class Applier:
    """Fires a planned fault (kill the server, change a player's link or its proxy, set a serial line's fault rates
    or pull its cable), heals it when its time comes, and heals everything in :meth:`rollback`. ``active``: (heal
    time, fault), in firing order.

    A serial fault goes on the adapter's wrapper of the line's server end (``Faultable.serial_port``) or, when the
    adapter has none, on the rig's wrapper of its device end (``serial_ports``); either way the same rates apply in
    both directions. Table incidents need nothing here: the simulator's script applies them.
    """

    def __init__(
        self,
        adapter: GameServerAdapter,
        players: tuple[str, ...],
        sessions: Sessions,
        history: History,
        clock: Callable[[], float],
        serial_ports: Mapping[str, FaultyTransport] | None = None,
        on_kill: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.adapter = adapter
        self.on_kill = on_kill  # given the kill to make: records it for the judge first (Rig.kill_server)
        self.serial_ports = dict(serial_ports or {})
        self._base_latency: dict[str, dict[str, float]] = {}  # per line and direction, before any fault
        self.control: Faultable | None = adapter if isinstance(adapter, Faultable) else None
        self.players = players
        self.sessions = sessions
        self.links = sessions.links
        self.history = history
        self.clock = clock
        self.active: list[tuple[float, Fault]] = []
        self.proxies: dict[str, FaultProxy] = {}
        if isinstance(adapter, ProxiedPlayers):
            found = {p: adapter.player_proxy(p) for p in players}
            self.proxies = {p: proxy for p, proxy in found.items() if proxy is not None}

    def supports(self, f: Fault) -> str:
        """Why this bench cannot apply ``f`` ("" when it can)."""
        if f.kind == FaultKind.SERVER_KILL and self.control is None:
            return "the bench's adapter cannot kill and restart its server"
        if f.kind == FaultKind.SERVER_KILL and self.control is not None and not self.control.can_restart:
            return (
                "the bench's adapter is attached to a server it did not start (e.g. by URL) and cannot kill and "
                "restart it; player and table faults work on this bench"
            )
        if f.kind in SERIAL_KINDS and self.serial_port(f.target) is None:
            return "serial faults are not available on this bench"
        return ""

    def serial_port(self, device: str) -> FaultyTransport | None:
        """The wrapper a serial fault on ``device``'s line goes on: the adapter's server end if it offers one, else
        the rig's device end; None when the line is not wrapped."""
        port = self.control.serial_port(device) if self.control is not None else None
        return port if port is not None else self.serial_ports.get(device)

    @property
    def server_up(self) -> bool:
        return self.control is None or self.control.server_up

    def _who(self, f: Fault) -> tuple[str, ...]:
        return self.players if f.target == "all" else (f.target,)

    # ------------------------------------------------------------------ firing
    def fire(self, f: Fault) -> None:
        self.history.add(self.clock(), "bench", OpType.NOTE, OpFunction.FAULT, detail=f.describe())
        if f.kind in TABLE_KINDS:
            return  # applied by the table's script
        self.active.append((self.clock() + f.duration, f))
        if f.kind == FaultKind.SERVER_KILL:
            assert self.control is not None
            if self.on_kill is not None:
                self.on_kill(self.control.kill_server)
            else:
                self.control.kill_server()
            self.sessions.connected.clear()
        elif f.kind in PLAYER_KINDS:
            self.links.apply(f)
            if f.kind == FaultKind.PLAYER_DISCONNECT:
                for p in self._who(f):
                    self.sessions.forget(p)
                    if p not in self.proxies:
                        self.adapter.disconnect(p)
            self.sync_proxies(self._who(f))
        else:
            self.apply_serial(f.target)

    # ------------------------------------------------------------------ healing
    def heal_due(self) -> None:
        now = self.clock()
        for item in [a for a in self.active if a[0] <= now]:
            self.active.remove(item)
            self.heal(item[1])

    def heal(self, f: Fault) -> None:
        """Undo ``f`` (already removed from ``active``): restart the server once no kill is left, reconnect the
        players it had cut off, or recompute the line's faults."""
        self.history.add(self.clock(), "bench", OpType.NOTE, OpFunction.HEAL, detail=f.describe())
        if f.kind == FaultKind.SERVER_KILL:
            if not any(a[1].kind == FaultKind.SERVER_KILL for a in self.active):
                assert self.control is not None
                self.control.restart_server()
                for p in self.players:
                    self.sessions.connect(p)
        elif f.kind in PLAYER_KINDS:
            back = self.links.heal(f)
            self.sync_proxies(self._who(f))
            for p in back:
                if p in self.proxies:
                    self.adapter.disconnect(p)  # the client notices its dead stream and reconnects
                    self.sessions.forget(p)
                self.sessions.connect(p)
        else:
            self.apply_serial(f.target)

    def rollback(self) -> None:
        """Heal every active fault, reset every link and proxy, restart a server left down, reconnect all."""
        for item in sorted(self.active, key=lambda a: a[0]):
            self.active.remove(item)
            self.heal(item[1])
        self.links.heal_all()
        for proxy in self.proxies.values():
            proxy.heal()
        if self.control is not None and not self.control.server_up:
            self.control.restart_server()
        for p in self.players:
            self.sessions.connect(p)

    # ------------------------------------------------------------------ links and lines
    def sync_proxies(self, players: tuple[str, ...]) -> None:
        """Make each proxied player's link do what the active faults say: disconnect (RST and refuse), latency,
        reset (answers become RSTs). A blackhole is applied by the player's client (the request is not sent): a
        real one would hold the bench's single thread for the adapter's whole HTTP timeout."""
        for p in players:
            proxy = self.proxies.get(p)
            if proxy is not None:
                route = self.links.route(p)
                proxy.set(down=self.links.down(p), latency=route.delay, reset_replies=route.mode == RouteMode.RESET)

    def apply_serial(self, device: str) -> None:
        """Set the device line's fault rates and plug state from the serial faults active on it now. A latency the
        line had before its first fault (the camera's processing time on a device-end reader) is kept: a
        ``serial_latency`` adds to it."""
        port = self.serial_port(device)
        assert port is not None
        on = [f for _, f in self.active if f.kind in SERIAL_KINDS and f.target == device]

        def most(kind: FaultKind, attr: str = "rate") -> float:
            return max((float(getattr(f, attr)) for f in on if f.kind == kind), default=0.0)

        rates = FaultRates(
            flip=most(FaultKind.SERIAL_FLIP),
            drop=most(FaultKind.SERIAL_DROP),
            duplicate=most(FaultKind.SERIAL_DUPLICATE),
            reorder=most(FaultKind.SERIAL_REORDER),
            line_error=most(FaultKind.SERIAL_LINE_ERROR),
            latency=most(FaultKind.SERIAL_LATENCY, "delay"),
        )
        base = self._base_latency.setdefault(device, {d: lane.rates.latency for d, lane in port.lanes.items()})
        for d, lane in port.lanes.items():  # a line's own latency (the camera's, on the reader) stays under faults
            lane.rates = replace(rates, latency=base[d] + rates.latency) if base[d] else rates
        unplugged = any(f.kind == FaultKind.SERIAL_UNPLUG for f in on)
        if unplugged and port.connected:
            port.unplug()
        elif not unplugged and not port.connected:
            port.replug()

    def serial_counts(self, devices: tuple[str, ...]) -> dict[str, dict[str, int]]:
        """Per device line: how many frames each serial fault hit so far (both directions)."""
        out: dict[str, dict[str, int]] = {}
        for device in devices:
            port = self.serial_port(device)
            if port is not None:
                rx, tx = port.counts("rx"), port.counts("tx")
                out[str(device)] = {str(k): rx[k] + tx[k] for k in rx if rx[k] + tx[k]}
        return out
