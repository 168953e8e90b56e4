"""An emulated device as a network serial server, read with pyserial's rfc2217:// and socket:// clients."""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Iterator

import pytest
import serial

from harness.bench.devices.hub import DeviceHub
from harness.wire.frame_errors import BadFrame
from harness.wire.line_events import Delivered, LinkEvent
from harness.wire.messages import BowlOn, Frame, Hello, Source
from harness.wire.text import FrameDecoder
from harness.wire.transports.netserver import SerialServer


class HubThread:
    """Services a hub on the wall clock in a background thread (the bench's loop, minus SimPy)."""

    def __init__(self, hub: DeviceHub) -> None:
        self.hub = hub
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.events: list[LinkEvent] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            select.select(self.hub.fds(), [], [], 0.01)
            with self.lock:
                self.hub.service(time.monotonic())

    def send(self, message: BowlOn) -> None:
        with self.lock:
            self.hub.send(Source.BOWL, message, time.monotonic())


@pytest.fixture(params=[True, False], ids=["rfc2217", "socket"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[HubThread, SerialServer]]:
    server = SerialServer("bowl", rfc2217=request.param)
    events: list[LinkEvent] = []
    hub = DeviceHub({Source.BOWL: server}, on_event=lambda _s, e, _t: events.append(e))
    runner = HubThread(hub)
    runner.events = events
    hub.start(time.monotonic())
    runner.thread.start()
    yield runner, server
    runner.stop.set()
    runner.thread.join(timeout=5)
    hub.close()


def read_frames(port: serial.Serial, count: int) -> list[Frame]:
    decoder, frames = FrameDecoder(), []
    deadline = time.monotonic() + 5.0
    while len(frames) < count and time.monotonic() < deadline:
        frames += [f for f in decoder.feed(port.read(256)) if not isinstance(f, BadFrame)]
    return frames


def test_client_gets_hello_on_connect_and_frames_after_its_ack(
    served: tuple[HubThread, SerialServer],
) -> None:
    runner, server = served
    assert server.address.startswith("rfc2217://" if server.rfc2217 else "socket://")
    with serial.serial_for_url(server.address, timeout=0.05) as port:
        hello = read_frames(port, 1)
        assert [f.message for f in hello] == [Hello("BOWL-0001", 1, "xocdia-hil-0.1")]
        port.write(b"$1 0 SRV ACK of=1*C448\r\n")
        deadline = time.monotonic() + 5.0
        while not any(isinstance(e, Delivered) for e in runner.events) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert any(isinstance(e, Delivered) and e.seq == 1 for e in runner.events)
        runner.send(BowlOn())
        frames = read_frames(port, 1)
        assert [(f.seq, f.message) for f in frames] == [(2, BowlOn())]
        if server.rfc2217:
            port.baudrate = 9600  # RFC 2217 line settings are negotiated with the emulated line
            deadline = time.monotonic() + 5.0
            while server.line.baudrate != 9600 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert server.line.baudrate == 9600


def test_a_second_client_is_refused_while_one_is_connected(served: tuple[HubThread, SerialServer]) -> None:
    _runner, server = served
    with serial.serial_for_url(server.address, timeout=0.05) as first:
        assert read_frames(first, 1)
        import socket

        with socket.create_connection((server.host, server.port), timeout=2.0) as second:
            second.settimeout(2.0)
            assert second.recv(16) == b""  # closed by the server at once
        assert server.refused == 1
