"""Serial traces: record every byte both ways on a real pty, save, load, and replay identically."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
import serial

from harness.bench.devices.hub import DeviceHub
from harness.wire.messages import BowlOff, BowlOn, Frame, Source
from harness.wire.text import FrameDecoder
from harness.wire.trace import TraceRecorder, TracingTransport, read_trace, replay
from harness.wire.transports.pty import PtyPort


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def drain(port: serial.Serial, until: bytes, limit: int = 100) -> bytes:
    data = b""
    for _ in range(limit):
        data += port.read(512)
        if data.endswith(until):
            break
    return data


def test_a_recorded_session_replays_byte_for_byte(tmp_path: Path) -> None:
    clock = FakeClock()
    recorder = TraceRecorder(clock)
    with PtyPort("bowl", tmp_path) as pty, serial.Serial(pty.address, timeout=0.05) as server:
        hub = DeviceHub({Source.BOWL: TracingTransport(pty, recorder, "BOWL")})
        hub.start(0.0)
        assert drain(server, b"\r\n").startswith(b"$1 1 BOWL HELLO")
        server.write(b"$1 0 SRV ACK of=1*C448\r\n")
        clock.now += 0.05
        for _ in range(50):
            hub.service(0.05)
            if hub.pending() == 0:
                break
        hub.send(Source.BOWL, BowlOn(), 0.1)
        hub.send(Source.BOWL, BowlOff(True, 1), 0.1)  # waits behind ON (stop and wait)
        clock.now += 0.05
        sent_by_device = drain(server, b"\r\n")
        assert sent_by_device.startswith(b"$1 2 BOWL ON*")

    directions = [r.dir for r in recorder.records]
    assert directions[:3] == ["tx", "rx", "tx"]
    assert recorder.records[1].data == b"$1 0 SRV ACK of=1*C448\r\n"
    assert recorder.records[0].t == 0.0 and recorder.records[1].t == pytest.approx(0.05)

    saved = io.StringIO()
    recorder.write_jsonl(saved)
    loaded = read_trace(saved.getvalue().splitlines())
    assert loaded == recorder.records
    text = io.StringIO()
    recorder.write_text(text)
    assert "BOWL     tx  $1 1 BOWL HELLO id=BOWL-0001" in text.getvalue()
    assert "\\r\\n" in text.getvalue()

    recorded_tx = b"".join(r.data for r in loaded if r.dir == "tx")
    with PtyPort("replay", tmp_path) as target, serial.Serial(target.address, timeout=0.05) as reader:
        got: list[bytes] = []
        thread = threading.Thread(target=lambda: got.append(drain(reader, b"ON*F06B\r\n")))
        thread.start()
        sleeps: list[float] = []
        n = replay(loaded, target, "BOWL", "tx", speed=1.0, clock=lambda: 0.0, sleep=sleeps.append)
        thread.join(timeout=10)
    assert n == len(recorded_tx)
    assert got == [recorded_tx]
    assert sleeps == [pytest.approx(0.05)]  # ON was written 0.05 s after HELLO in the recording


def test_a_bad_trace_line_is_named() -> None:
    good = '{"t":0.0,"port":"BOWL","dir":"tx","hex":"2431"}'
    with pytest.raises(ValueError, match="trace line 2: dir must be tx or rx, got 'up'"):
        read_trace([good, '{"t":1,"port":"BOWL","dir":"up","hex":""}'])
    with pytest.raises(ValueError, match="trace line 1: 'hex'"):
        read_trace(['{"t":1,"port":"BOWL","dir":"tx"}'])


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol"


def test_the_recorded_sample_trace_replays_into_a_pty_as_the_frames_it_holds(tmp_path: Path) -> None:
    """fixtures/protocol/trace_sample.jsonl was recorded by `xocdia-hil devices --trace`; CI replays it."""
    records = read_trace((FIXTURES / "trace_sample.jsonl").read_text().splitlines())
    recorded = b"".join(r.data for r in records if r.port == "READER" and r.dir == "tx")
    assert recorded.count(b"\r\n") >= 3
    expected = [f for f in FrameDecoder().feed(recorded)]
    assert expected and all(isinstance(f, Frame) for f in expected)
    with PtyPort("reader", tmp_path) as target, serial.Serial(target.address, timeout=0.05) as reader:
        replay(records, target, "READER", "tx", speed=0)
        got = FrameDecoder().feed(drain(reader, recorded[-20:]))
    assert got == expected
