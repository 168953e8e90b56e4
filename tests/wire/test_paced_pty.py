"""A paced pty at 9600 baud, read and written by pyserial on the other side: the trace shows each frame spread
over the time the line needs, and the bytes never arrive sooner than the line could carry them.

Real time on a possibly loaded machine: the assertions check the recorded line times (computed, exact) and only
lower bounds of what was observed (pacing never delivers early), never how promptly a thread woke up.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import serial

from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.line import LineSettings
from harness.wire.transports.paced import PacedTransport
from harness.wire.transports.pty import PtyPort

LINE = LineSettings(9600)
FRAME = b"$1 12 BOWL OFF touch=0 token=- at=56*19\r\n"[:40]  # 40 bytes
NEEDED = LINE.frame_time_s(len(FRAME))  # 41.67 ms


@pytest.fixture
def line() -> Iterator[tuple[PacedTransport, TracingTransport, TraceRecorder, serial.Serial]]:
    pty = PtyPort("bowl")
    recorder = TraceRecorder(clock=time.monotonic)
    paced = PacedTransport(pty, LINE, time.monotonic)
    traced = TracingTransport(paced, recorder, "BOWL")
    port = serial.serial_for_url(pty.address, baudrate=9600, timeout=0)
    try:
        yield paced, traced, recorder, port
    finally:
        port.close()
        traced.close()


def test_a_frame_written_at_9600_baud_is_spread_over_the_line_time(
    line: tuple[PacedTransport, TracingTransport, TraceRecorder, serial.Serial],
) -> None:
    paced, traced, recorder, port = line
    assert len(FRAME) == 40 and pytest.approx(0.041667, abs=1e-6) == NEEDED
    start = time.monotonic()
    traced.write(FRAME)
    got = bytearray()
    arrivals: list[float] = []
    deadline = start + 5.0
    while len(got) < len(FRAME) and time.monotonic() < deadline:
        now = time.monotonic()
        due = paced.tick(now)
        chunk = port.read(256)
        if chunk:
            got += chunk
            arrivals.append(time.monotonic())
        time.sleep(max(0.0, min((due or now + 0.001) - now, 0.002)))
    assert bytes(got) == FRAME
    (record,) = [r for r in recorder.records if r.dir == "tx"]
    assert record.data == FRAME and record.first is not None and record.last is not None
    assert record.last - record.first == pytest.approx(NEEDED, rel=0.10)  # the trace: spread over the line time
    assert record.last - record.first >= 0.9 * NEEDED
    assert arrivals[0] - start >= 0.9 * LINE.byte_time_s  # the first byte needs its own time on the wire
    assert arrivals[-1] - start >= 0.9 * NEEDED  # and the whole frame never arrives sooner than the line allows


def test_what_the_server_writes_reaches_the_device_at_the_line_speed(
    line: tuple[PacedTransport, TracingTransport, TraceRecorder, serial.Serial],
) -> None:
    _paced, traced, recorder, port = line
    start = time.monotonic()
    port.write(FRAME)  # the server's write lands at once in the pty; the device's UART takes it in at 9600
    got = bytearray()
    deadline = start + 5.0
    while len(got) < len(FRAME) and time.monotonic() < deadline:
        got += traced.read(0.002)
    done = time.monotonic()
    assert bytes(got) == FRAME
    rx = [r for r in recorder.records if r.dir == "rx"]
    assert all(r.first is not None and r.last is not None for r in rx)
    first, last = rx[0].first, rx[-1].last
    assert first is not None and last is not None
    assert last - first == pytest.approx(NEEDED, rel=0.10)
    assert done - start >= 0.9 * NEEDED
