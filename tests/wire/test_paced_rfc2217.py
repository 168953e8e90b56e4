"""A paced network serial server: an RFC 2217 client's baud, parity and stop-bit changes take effect for the bytes
that follow them, in both directions; a raw TCP client negotiates nothing and the bench's speed holds.

Real sockets, real time: the assertions check the recorded line times and lower bounds of what was observed.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import serial

from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.line import LineSettings
from harness.wire.transports.netserver import SerialServer
from harness.wire.transports.paced import PacedTransport

BASE = LineSettings(115200)
FRAME = b"$1 5 READER RESULT faces=RWRW overlap=0\r\n"[:40]


class Loop:
    """The bench's loop on the wall clock, in a thread: wait on the fds or the next tick, tick, read."""

    def __init__(self, server: SerialServer) -> None:
        self.server = server
        self.recorder = TraceRecorder(clock=time.monotonic)
        self.paced = PacedTransport(server, BASE, time.monotonic)
        self.traced = TracingTransport(self.paced, self.recorder, "READER")
        self.received = bytearray()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        due: float | None = None
        while not self.stop.is_set():
            wait = 0.01 if due is None else min(max(due - time.monotonic(), 0.0), 0.01)
            select.select(self.traced.fds(), [], [], wait)
            with self.lock:
                due = self.traced.tick(time.monotonic())
                self.received += self.traced.read(0.0)

    def write(self, data: bytes) -> None:
        with self.lock:
            self.traced.write(data)

    def until(self, done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            with self.lock:
                if done():
                    return
            time.sleep(0.005)
        raise AssertionError(f"timed out waiting for {what}")

    def last_tx_time(self) -> float:
        with self.lock:
            rec = [r for r in self.recorder.records if r.dir == "tx"][-1]
        assert rec.first is not None and rec.last is not None
        return rec.last - rec.first


def _serve(rfc2217: bool) -> Iterator[Loop]:
    runner = Loop(SerialServer("reader", rfc2217=rfc2217, line=BASE))
    yield runner
    runner.stop.set()
    runner.thread.join(timeout=5)
    runner.traced.close()


@pytest.fixture(params=[True, False], ids=["rfc2217", "socket"])
def loop(request: pytest.FixtureRequest) -> Iterator[Loop]:
    yield from _serve(request.param)


@pytest.fixture
def rfc2217_loop() -> Iterator[Loop]:
    yield from _serve(True)


def read_all(port: serial.Serial, n: int) -> bytes:
    got = bytearray()
    deadline = time.monotonic() + 5.0
    while len(got) < n and time.monotonic() < deadline:
        got += port.read(n - len(got))
    return bytes(got)


def test_a_client_baud_change_takes_effect_for_the_following_bytes(loop: Loop) -> None:
    with serial.serial_for_url(loop.server.address, baudrate=115200, timeout=0.05) as port:
        loop.until(lambda: loop.paced.connected, "the client to be accepted")
        loop.write(FRAME)
        assert read_all(port, len(FRAME)) == FRAME
        assert loop.last_tx_time() == pytest.approx(BASE.frame_time_s(40), rel=0.01)  # 3.47 ms at 115200

        port.baudrate = 9600
        if loop.server.rfc2217:
            loop.until(lambda: loop.paced.settings().baud == 9600, "the server to take the new baud")
        else:
            time.sleep(0.05)  # raw TCP carries no settings: nothing to wait for
        slow = LineSettings(9600) if loop.server.rfc2217 else BASE
        start = time.monotonic()
        loop.write(FRAME)
        assert read_all(port, len(FRAME)) == FRAME
        took = time.monotonic() - start
        assert loop.last_tx_time() == pytest.approx(slow.frame_time_s(40), rel=0.10)  # 41.67 ms after the change
        assert took >= 0.9 * slow.frame_time_s(40)

        start_rx = len(loop.recorder.records)
        port.write(FRAME)  # the client's bytes reach the device at the negotiated speed too
        loop.until(lambda: bytes(loop.received).endswith(FRAME), "the client's bytes")
        with loop.lock:
            rx = [r for r in loop.recorder.records[start_rx:] if r.dir == "rx"]
        first, last = rx[0].first, rx[-1].last
        assert first is not None and last is not None
        assert last - first == pytest.approx(slow.frame_time_s(40), rel=0.10)


def test_parity_and_stop_bits_count_and_a_new_client_starts_from_the_bench_speed(rfc2217_loop: Loop) -> None:
    loop = rfc2217_loop
    with serial.serial_for_url(loop.server.address, baudrate=9600, timeout=0.05) as port:
        loop.until(lambda: loop.paced.settings().baud == 9600, "the client's settings")
        port.parity = serial.PARITY_EVEN
        port.stopbits = serial.STOPBITS_TWO
        loop.until(lambda: loop.paced.settings() == LineSettings(9600, 8, "E", 2), "8E2")
        loop.write(FRAME)
        assert read_all(port, len(FRAME)) == FRAME
        assert loop.last_tx_time() == pytest.approx(40 * 12 / 9600, rel=0.10)  # 12 bits a byte: 50 ms
    loop.until(lambda: not loop.paced.connected, "the client to go")
    assert loop.paced.settings() == BASE  # what a client set ends with its connection
