"""Fault hooks on the reference server's two adapters: kill -9 and restart on the same ledger, and the server
end of each serial line wrapped in :class:`harness.transports.faults.FaultyTransport`.

:class:`Faultable` is the small interface the injector needs from an adapter beyond
:class:`harness.adapters.base.GameServerAdapter`; a lab adapter that implements it gets server-kill faults
too. :func:`faultable_adapter_path` maps the reference adapters onto the subclasses here.

- :class:`FaultableInProcessAdapter`: *kill* drops the engine (everything committed is in the ledger, as a
  SQLite WAL would hold it; nothing else survives) and makes every call fail with ``unreachable``; *restart*
  rebuilds the engine from the ledger snapshot and applies the restart policy (``recover_after_restart``:
  a round in progress is cancelled and refunded), with fresh device links, as a new process would.
- :class:`FaultableHttpAdapter`: *kill* sends SIGKILL to the server process; *restart* runs the same command
  line again (same ``--db``), on a new port.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import threading
from collections.abc import Generator, Mapping
from typing import Any, Protocol, runtime_checkable

import simpy

from gameserver.device_clock import DeviceClock
from gameserver.engine import RoundEngine
from gameserver.link import ServerLink
from gameserver.protocol import Decoder
from harness.adapters.base import AdapterError, BetRecordRow, BetReply, RoundEvent, ServerSetup
from harness.adapters.reference_http_adapter import HttpAdapter
from harness.adapters.reference_inprocess_adapter import SERVICE_S, InProcessAdapter
from harness.faults.proxy import FaultProxy, ProxyHub
from harness.transports.base import Transport
from harness.transports.faults import FaultyTransport

REFERENCE = {
    "harness.adapters.reference_inprocess_adapter:InProcessAdapter": (
        "harness.faults.fault_adapters:FaultableInProcessAdapter"
    ),
    "harness.adapters.reference_http_adapter:HttpAdapter": "harness.faults.fault_adapters:FaultableHttpAdapter",
}


@runtime_checkable
class Faultable(Protocol):
    """What fault injection needs from a server adapter besides the adapter interface."""

    def kill_server(self) -> None:
        """Kill the server abruptly (no shutdown); every call fails until :meth:`restart_server`."""

    def restart_server(self) -> None:
        """Start the server again on the same durable state. Raises AdapterError if it does not come up."""

    @property
    def server_up(self) -> bool:
        """False between a kill and the restart."""

    def serial_port(self, device: str) -> FaultyTransport | None:
        """The server end of a device line, wrapped for serial faults; None when this bench cannot fault it."""


@runtime_checkable
class ProxiedPlayers(Protocol):
    """An adapter whose players reach the server through :class:`harness.faults.proxy.FaultProxy` links."""

    def player_proxy(self, player_id: str) -> FaultProxy | None:
        """The player's proxy, or None when that player is not proxied."""


def faultable_adapter_path(path: str) -> str:
    """The faultable subclass for a reference adapter's dotted path; other paths unchanged."""
    return REFERENCE.get(path, path)


class FaultableInProcessAdapter(InProcessAdapter):
    """See the module docstring. Options: ``fault_seed`` seeds the serial-fault random stream;
    ``serial_faults: false`` leaves the lines unwrapped (a wrapped line with no fault active passes every byte
    through unchanged and at once, so the history is the same either way; unwrapped is faster)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._up = True
        self._faulty: dict[str, FaultyTransport] = {}
        self._heartbeat_s = 3.0
        self._generation = 0

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
        self._heartbeat_s = setup.heartbeat_s
        super().start(_with_devices(setup, wrapped))
        setup.env.process(self._tick_faulty(setup.env))

    def _tick_faulty(self, env: simpy.Environment) -> Generator[simpy.Event, Any, None]:
        while True:
            now = float(env.now)
            for ft in self._faulty.values():
                if ft.lanes["tx"].out:  # only a delayed or sliced write waits for its time
                    ft.tick(now)
            yield env.timeout(SERVICE_S)

    def _serve(self) -> Generator[simpy.Event, Any, None]:
        assert self._env is not None
        generation = self._generation
        inner = super()._serve()
        while self._up and generation == self._generation:
            yield next(inner)

    # ------------------------------------------------------------------ Faultable
    @property
    def server_up(self) -> bool:
        return self._up

    def serial_port(self, device: str) -> FaultyTransport | None:
        return self._faulty.get(device)

    def kill_server(self) -> None:
        self._up = False
        self._generation += 1
        self._connected.clear()

    def restart_server(self) -> None:
        if self._up:
            return
        env = self._env
        assert env is not None and self._engine is not None
        engine = RoundEngine(self._engine.config, lambda: float(env.now), self._ledger.snapshot())
        engine.recover_after_restart()
        self._engine = engine
        now = float(env.now)
        for port in self._ports:
            port.link = ServerLink(port.name, now, self._heartbeat_s)
            port.decoder = Decoder()
            port.clock = DeviceClock()  # a restarted server has learnt no line's clock offset yet
        self._up = True
        self._flush()
        env.process(self._serve())

    def _require_up(self) -> None:
        if not self._up:
            raise AdapterError("unreachable", "the server is down (killed)")

    # ------------------------------------------------------------------ every call fails while down
    def connect(self, player_id: str) -> None:
        self._require_up()
        super().connect(player_id)

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        self._require_up()
        return super().place_bet(player_id, client_bet_id, bet_type, stake, lose_reply=lose_reply)

    def supervise(self, action: str, reason: str = "") -> None:
        self._require_up()
        super().supervise(action, reason)

    def round_events(self) -> list[RoundEvent]:
        self._require_up()
        return super().round_events()

    def bet_record(self, player_id: str) -> list[BetRecordRow]:
        self._require_up()
        return super().bet_record(player_id)

    def balance(self, player_id: str) -> int:
        self._require_up()
        return super().balance(player_id)


class FaultableHttpAdapter(HttpAdapter):
    """See the module docstring. Serial faults are not available here (the server owns its pty ends).

    Each player's requests and event stream go through their own :class:`FaultProxy` on loopback (option
    ``player_proxy: false`` turns that off); the supervisor and the final read go direct.
    """

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self._argv: list[str] = []
        self._dead: list[subprocess.Popen[str]] = []
        self._hub: ProxyHub | None = None
        self._proxies: dict[str, FaultProxy] = {}

    def start(self, setup: ServerSetup) -> None:
        super().start(setup)
        if self.options.get("player_proxy", True):
            self._hub = ProxyHub()
            self._proxies = {p.player_id: self._hub.proxy(self._host, self._port) for p in setup.players}

    def stop(self) -> None:
        live = self._proc
        try:
            super().stop()
        finally:
            if live is not None:
                self._dead.append(live)  # HttpAdapter.stop leaves its pipes open (ResourceWarning)
            for proc in self._dead:
                for stream in (proc.stdout, proc.stderr):
                    if stream is not None:
                        stream.close()
            self._dead.clear()
            if self._hub is not None:
                self._hub.close()
                self._hub = None

    def player_proxy(self, player_id: str) -> FaultProxy | None:
        return self._proxies.get(player_id)

    def _through(self, player_id: str) -> int:
        """Point this adapter at the player's proxy; returns the direct port to restore."""
        direct = self._port
        proxy = self._proxies.get(player_id)
        if proxy is not None:
            self._port = proxy.port
        return direct

    def connect(self, player_id: str) -> None:
        direct = self._through(player_id)
        try:
            super().connect(player_id)
        finally:
            self._port = direct

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, *, lose_reply: bool = False
    ) -> BetReply:
        direct = self._through(player_id)
        try:
            return super().place_bet(player_id, client_bet_id, bet_type, stake, lose_reply=lose_reply)
        finally:
            self._port = direct

    @property
    def server_up(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def serial_port(self, device: str) -> FaultyTransport | None:
        return None

    def kill_server(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._argv = [str(a) for a in proc.args] if isinstance(proc.args, list | tuple) else []
        for player in list(self._streams):
            self.disconnect(player)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()
        self._dead.append(proc)  # its stdout is left to its pump thread (reads to EOF); closed at stop

    def restart_server(self) -> None:
        if self.server_up or not self._argv:
            return
        try:
            self._proc = subprocess.Popen(self._argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            raise AdapterError("start_failed", f"cannot restart the server: {exc.strerror}") from None
        threading.Thread(target=self._pump, daemon=True).start()
        self._port = self._wait_listening()
        for proxy in self._proxies.values():
            proxy.retarget(self._host, self._port)


def _with_devices(setup: ServerSetup, devices: Mapping[str, Any]) -> ServerSetup:
    from dataclasses import replace

    return replace(setup, devices=devices)
