"""Real time on real ptys: the select bridge wakes on fds, and a pyserial 'server' in another thread runs rounds
against the emulated table."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import serial
import simpy

from harness.bench.devices.emulated import EmulatedTable
from harness.files import load_profile
from harness.wire.line_events import Received
from harness.wire.link import Link
from harness.wire.messages import CATALOGUE, DEVICES, Hello, LampClose, LampOpen, Message, Result, Source
from harness.wire.realtime import SelectEnvironment
from harness.wire.transports.base import Transport
from harness.wire.transports.pty import PtyPort
from simulator import events as ev


def test_bridge_wakes_on_a_readable_fd_instead_of_sleeping_to_the_next_event() -> None:
    r, w = os.pipe()
    seen: list[tuple[float, bytes]] = []
    env = SelectEnvironment(fds=lambda: [r])
    env.on_ready = lambda ready: seen.append((env.now, os.read(r, 64)))
    order: list[str] = []

    def late() -> Generator[simpy.Event, Any, None]:
        yield env.timeout(1.0)
        order.append("event")

    env.process(late())
    writer = threading.Timer(0.05, lambda: os.write(w, b"ack"))
    try:
        writer.start()
        env.sync()
        env.run(until=1.5)
    finally:
        writer.cancel()
        os.close(r)
        os.close(w)
    assert [data for _t, data in seen] == [b"ack"]
    assert 0.0 < seen[0][0] < 1.0  # handled at its arrival time, before the 1 s event
    assert order == ["event"]


class SerialGateway(threading.Thread):
    """A minimal game-server gateway on the pty paths, with pyserial: ACKs, records, drives 2 rounds."""

    def __init__(self, paths: dict[Source, str], rounds: int) -> None:
        super().__init__(daemon=True)
        self.ports = {src: serial.Serial(path, 115200, timeout=0) for src, path in paths.items()}
        self.links = {
            src: Link(
                Source.SERVER,
                Hello("SRV-rt", 1, "t"),
                frozenset(c for (s, _t), c in CATALOGUE.items() if s is src),
            )
            for src in paths
        }
        self.heard: list[tuple[Source, Message]] = []
        self.rounds = rounds
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def pump(self) -> None:
        now = time.monotonic()
        for src, port in self.ports.items():
            link = self.links[src]
            data = port.read(4096)
            for e in link.receive(data, now) if data else []:
                if isinstance(e, Received) and not isinstance(e.frame.message, Hello):
                    self.heard.append((src, e.frame.message))
            link.poll(now)
            out = link.take_output()
            if out:
                port.write(out)

    def wait(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pump()
            time.sleep(0.002)

    def run(self) -> None:
        try:
            for link in self.links.values():
                link.open(time.monotonic())
            self.wait(0.1)
            for n in range(1, self.rounds + 1):
                self.links[Source.LAMP].send(LampOpen(str(n), 150), time.monotonic())
                self.wait(0.15)
                self.links[Source.LAMP].send(LampClose(str(n)), time.monotonic())
                self.wait(0.35)
            while not self.stop.is_set():  # keep reading and acknowledging until the test is done
                self.wait(0.01)
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc
        finally:
            for port in self.ports.values():
                port.close()


def test_rounds_run_in_real_time_against_a_pyserial_gateway(tmp_path: Path) -> None:
    ptys: dict[Source, Transport] = {d: PtyPort(d.value.lower(), tmp_path) for d in DEVICES}
    env = SelectEnvironment()
    table = EmulatedTable(load_profile("compressed"), 3, ptys, env=env, players=0)
    env.fds = table.hub.fds
    env.on_ready = table.wake
    gateway = SerialGateway({d: t.address for d, t in ptys.items()}, rounds=2)
    try:
        gateway.start()
        env.sync()
        env.run(until=1.4)
        for _ in range(60):  # on a busy machine the last frames may still wait for their ACK
            if table.hub.pending() == 0:
                break
            env.run(until=env.now + 0.05)
    finally:
        gateway.stop.set()
        gateway.join(timeout=10)
        table.hub.close()
    assert gateway.error is None
    assert [e.round for e in table.model.log.of(ev.RoundOpened)] == [1, 2]  # type: ignore[attr-defined]
    truth = [e.faces for e in table.model.log.of(ev.Revealed)]  # type: ignore[attr-defined]
    read = [m.faces for s, m in gateway.heard if s is Source.READER and isinstance(m, Result)]
    assert len(truth) >= 2 and read == truth
    assert table.hub.pending() == 0  # everything acknowledged over the real ports
