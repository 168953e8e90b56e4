"""Fault hooks on the reference server's two adapters: kill -9 and restart on the same ledger, and the server
end of each serial line wrapped in :class:`harness.wire.transports.faults.FaultyTransport`.

:class:`Faultable` (declared with the adapter's other optional capabilities in
:mod:`harness.bench.adapters.capabilities`, importable here) is the small interface the injector needs from an
adapter beyond :class:`harness.bench.adapters.base.GameServerAdapter`; a lab adapter that implements it gets
server-kill faults too (when its ``can_restart`` is True). :class:`ProxiedPlayers` is the one for player faults
through per-player proxies. :func:`faultable_adapter_path` maps the reference adapters onto the subclasses here.

The reference adapters implement kill and restart themselves, as public methods with documented guarantees
(``kill_server``, ``restart_server``, ``server_up``, ``can_restart``; for HTTP also ``address`` and
``player_address``); the subclasses here only add what belongs to fault injection and use nothing else of their
parents':

- :class:`FaultableInProcessAdapter`: wraps each device line for serial faults. *kill* drops the engine
  (everything committed is in the ledger; nothing else survives) and makes every call fail with ``unreachable``;
  *restart* rebuilds the engine from the ledger and applies the restart policy (``recover_after_restart``: a
  round in progress is cancelled and refunded), with fresh device links, as a new process would.
- :class:`FaultableHttpAdapter`: routes each player through a :class:`FaultProxy`. *kill* sends SIGKILL to the
  server process; *restart* runs the same command line again (same ``--db``), on a new port, and points the
  proxies at it. Attached by ``url`` (a server it did not start) it can do neither (``can_restart`` is False):
  player faults still go through the proxies, and the server is taken as up from start to stop.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.capabilities import Faultable as Faultable
from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.adapters.reference_inprocess import EARLY_S, SERVICE_S, InProcessAdapter
from harness.bench.gridtimer import GridTimer
from harness.faults.proxy import FaultProxy, ProxyHub
from harness.wire.transports.base import Transport
from harness.wire.transports.faults import FaultyTransport

REFERENCE = {
    "harness.bench.adapters.reference_inprocess:InProcessAdapter": (
        "harness.faults.fault_adapters:FaultableInProcessAdapter"
    ),
    "harness.bench.adapters.reference_http:HttpAdapter": "harness.faults.fault_adapters:FaultableHttpAdapter",
}


@runtime_checkable
class ProxiedPlayers(Protocol):
    """An adapter whose players reach the server through :class:`harness.faults.proxy.FaultProxy` links."""

    def player_proxy(self, player_id: str) -> FaultProxy | None:
        """The player's proxy, or None when that player is not proxied."""


def faultable_adapter_path(path: str) -> str:
    """The faultable subclass for a reference adapter's dotted path; other paths unchanged."""
    return REFERENCE.get(path, path)


class FaultableInProcessAdapter(InProcessAdapter):
    """The in-process reference server with its device lines wrapped for serial faults (kill and restart are
    :meth:`InProcessAdapter.kill_server` / :meth:`InProcessAdapter.restart_server`). Options: ``fault_seed``
    seeds the serial-fault random stream; ``serial_faults: false`` leaves the lines unwrapped (a wrapped line with
    no fault active passes every byte through unchanged and at once, so the history is the same either way;
    unwrapped is faster)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._faulty: dict[str, FaultyTransport] = {}
        self._release: GridTimer | None = None

    def start(self, setup: ServerSetup) -> None:
        rng = random.Random(f"{self.options.get('fault_seed', 0)}/serial")
        wrapped: dict[str, Any] = {}
        wrap = bool(self.options.get("serial_faults", True))
        for name, transport in setup.devices.items():
            if wrap and isinstance(transport, Transport):
                ft = FaultyTransport(transport, rng, clock=lambda: float(setup.env.now))
                self._faulty[name] = ft
                wrapped[name] = ft
            else:
                wrapped[name] = transport
        super().start(replace(setup, devices=wrapped))
        self._release = GridTimer(setup.env, SERVICE_S, self._release_writes)
        self._release.start()

    def _release_writes(self, now: float) -> None:
        """Deliver the delayed or sliced writes of the wrapped lines whose time has come, on the grid of
        :data:`SERVICE_S` from the start (it runs for good, also while the server is killed)."""
        for ft in self._faulty.values():
            if ft.lanes["tx"].out:  # only a delayed or sliced write waits for its time
                ft.tick(now)
        self._arm_release()

    def _arm_release(self) -> None:
        times = [due for ft in self._faulty.values() if (due := ft.lanes["tx"].next_due()) is not None]
        if times and self._release is not None:
            self._release.arm_at(min(times) - EARLY_S)

    def _lines_written(self, now: float) -> None:
        if self._faulty:
            self._arm_release()

    def serial_port(self, device: str) -> FaultyTransport | None:
        """The wrapped server end of ``device``'s line; None when it is not wrapped (``serial_faults: false``)."""
        return self._faulty.get(device)


class FaultableHttpAdapter(HttpAdapter):
    """The reference server as a process (kill and restart are :meth:`HttpAdapter.kill_server` /
    :meth:`HttpAdapter.restart_server`). It has no server end of the device lines to wrap (the server opens its own
    pty ends): serial faults go on the device ends, which the rig wraps.

    Each player's requests and event stream go through their own :class:`FaultProxy` on loopback (option
    ``player_proxy: false`` turns that off); the supervisor and the final read go direct.
    """

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._hub: ProxyHub | None = None
        self._proxies: dict[str, FaultProxy] = {}

    def start(self, setup: ServerSetup) -> None:
        super().start(setup)
        if self.options.get("player_proxy", True):
            self._hub = ProxyHub()
            host, port = self.address
            self._proxies = {p.player_id: self._hub.proxy(host, port) for p in setup.players}

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            if self._hub is not None:
                self._hub.close()
                self._hub = None

    def player_proxy(self, player_id: str) -> FaultProxy | None:
        """The player's proxy, or None when players are not proxied."""
        return self._proxies.get(player_id)

    def player_address(self, player_id: str) -> tuple[str, int]:
        """The player's proxy on loopback when the player has one, else the server's address."""
        proxy = self._proxies.get(player_id)
        host, port = self.address
        return (host, port) if proxy is None else (host, proxy.port)

    def serial_port(self, device: str) -> FaultyTransport | None:
        """Always None: the server process opens its own ends of the device lines (the rig wraps the device ends)."""
        return None

    def restart_server(self) -> None:
        """:meth:`HttpAdapter.restart_server`, then point every player's proxy at the server's new port."""
        super().restart_server()
        host, port = self.address
        for proxy in self._proxies.values():
            proxy.retarget(host, port)
