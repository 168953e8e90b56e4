"""Serial traces of paced lines record each chunk's first- and last-byte times; old traces read as before."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.wire.trace import TraceRecord, TraceRecorder, TracingTransport, read_trace
from harness.wire.transports.line import LineSettings
from harness.wire.transports.memory import memory_pipe
from harness.wire.transports.paced import PacedTransport

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "protocol" / "trace_sample.jsonl"
BT = 10 / 9600


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_paced_line_records_first_and_last_byte_times_from_the_recorder_start() -> None:
    clock = Clock()
    recorder = TraceRecorder(clock)  # t0 = 100.0
    device, server = memory_pipe("bowl")
    traced = TracingTransport(PacedTransport(device, LineSettings(9600), clock), recorder, "BOWL")
    clock.now = 100.5
    traced.write(b"x" * 40)
    traced.write(b"y" * 4)  # queued behind the first on the line
    (a, b) = recorder.records
    assert (a.t, a.first, a.last) == (pytest.approx(0.5), pytest.approx(0.5), pytest.approx(0.5 + 40 * BT))
    assert (b.t, b.first, b.last) == (pytest.approx(0.5), pytest.approx(0.5 + 40 * BT), pytest.approx(0.5 + 44 * BT))
    obj = json.loads(a.to_json())
    assert set(obj) == {"t", "port", "dir", "hex", "first", "last"}
    assert a.readable().endswith(f"  [line {a.first:.6f}..{a.last:.6f}]")
    server.write(b"ack\n")  # the reply through the device's paced read
    clock.now = 100.5 + 4 * BT + 1.0
    assert traced.read() == b"ack\n"
    rx = recorder.records[-1]
    assert rx.dir == "rx" and rx.last is not None and rx.first is not None
    assert rx.last - rx.first == pytest.approx(4 * BT)


def test_unpaced_lines_and_old_traces_are_unchanged() -> None:
    recorder = TraceRecorder(Clock())
    traced = TracingTransport(memory_pipe("bowl")[0], recorder, "BOWL")
    traced.write(b"$1 1 BOWL ON*0000\r\n")
    (rec,) = recorder.records
    assert rec.first is None and rec.last is None
    assert set(json.loads(rec.to_json())) == {"t", "port", "dir", "hex"}
    assert "[line" not in rec.readable()
    old = read_trace(SAMPLE.read_text().splitlines())
    assert old and all(r.first is None and r.last is None for r in old)
    out = io.StringIO()
    for r in old:
        out.write(r.to_json() + "\n")
    assert read_trace(out.getvalue().splitlines()) == old


def test_line_times_survive_a_round_trip_and_bad_ones_name_the_line() -> None:
    rec = TraceRecord(0.25, "BOWL", "tx", b"abc", 0.25, 0.2531)
    assert read_trace([rec.to_json()]) == [rec]
    with pytest.raises(ValueError, match="trace line 2: first and last must be both present"):
        read_trace(["", '{"t":0,"port":"BOWL","dir":"tx","hex":"61","first":0.1}'])
    with pytest.raises(ValueError, match="trace line 1: last must be a number"):
        read_trace(['{"t":0,"port":"BOWL","dir":"tx","hex":"61","first":0.1,"last":"x"}'])
