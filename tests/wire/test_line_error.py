"""The line-error fault: a byte received with a framing or parity error is read as NUL or dropped, as a UART does;
usable from fault schedules as ``serial_line_error`` with a rate."""

from __future__ import annotations

import random

import pytest

from harness.bench.config import load_bench
from harness.faults.injector import run_schedule
from harness.faults.schedule import parse_schedule
from harness.faults.schedule_model import SERIAL_KINDS, SERIAL_RATE_KINDS, FaultKind
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import BowlOn, Frame, Source
from harness.wire.text import FrameDecoder, encode
from harness.wire.transports.faults import Fault, FaultRates, FaultyTransport, line_error
from harness.wire.transports.memory import memory_pipe

FRAME = encode(Frame(7, Source.BOWL, BowlOn(), round="17", at=5689))


def test_one_byte_is_garbled_to_nul_or_dropped() -> None:
    seen = set()
    for seed in range(40):
        out = line_error(FRAME, random.Random(seed))
        if len(out) == len(FRAME):
            diff = [i for i, (a, b) in enumerate(zip(out, FRAME, strict=True)) if a != b]
            assert len(diff) == 1 and out[diff[0]] == 0
            seen.add("nul")
        else:
            assert len(out) == len(FRAME) - 1
            assert any(out == FRAME[:i] + FRAME[i + 1 :] for i in range(len(FRAME)))
            seen.add("dropped")
    assert seen == {"nul", "dropped"}
    assert line_error(b"", random.Random(1)) == b""


def test_a_scheduled_line_error_hits_the_next_frame_only_and_is_counted() -> None:
    device, server = memory_pipe("bowl")
    faulty = FaultyTransport(device, random.Random(3), clock=lambda: 0.0)
    faulty.inject("tx", Fault.LINE_ERROR)
    faulty.write(FRAME + FRAME)
    got = server.read()
    assert got.endswith(FRAME) and got[: -len(FRAME)] != FRAME
    assert faulty.counts("tx")[Fault.LINE_ERROR] == 1
    decoded = FrameDecoder().feed(got)
    assert isinstance(decoded[0], BadFrame)  # the checksum catches the garbled frame: never a false message
    assert not isinstance(decoded[-1], BadFrame)


def test_the_rate_is_a_probability_and_draws_nothing_when_zero() -> None:
    with pytest.raises(ValueError, match="line_error"):
        FaultRates(line_error=1.5)
    rng, same = random.Random(9), random.Random(9)
    device, _server = memory_pipe("bowl")
    FaultyTransport(device, rng, clock=lambda: 0.0, tx=FaultRates(line_error=0.0)).write(FRAME * 3)
    assert rng.random() == same.random()  # a zero rate leaves the seeded stream (and golden histories) alone
    device2, server2 = memory_pipe("bowl")
    always = FaultyTransport(device2, random.Random(1), clock=lambda: 0.0, tx=FaultRates(line_error=1.0))
    always.write(FRAME * 3)
    assert server2.read() != FRAME * 3
    assert always.counts("tx")[Fault.LINE_ERROR] == 3


def test_schedules_name_it_serial_line_error_with_a_rate() -> None:
    assert FaultKind.SERIAL_LINE_ERROR in SERIAL_KINDS and FaultKind.SERIAL_LINE_ERROR in SERIAL_RATE_KINDS
    fault_data = {"kind": "serial_line_error", "target": "reader", "at": {"round": 1}, "duration": 2, "rate": 0.4}
    data = {"seed": 5, "rounds": 2, "players": 2, "faults": [fault_data]}
    schedule = parse_schedule(data, "test.yaml")
    (fault,) = schedule.faults
    assert (fault.kind, fault.target, fault.rate) == (FaultKind.SERIAL_LINE_ERROR, "reader", 0.4)
    bad = {**data, "faults": [{**fault_data, "rate": 2}]}
    with pytest.raises(Exception, match=r"test.yaml: faults\[0\]\.rate"):
        parse_schedule(bad, "test.yaml")


def test_line_errors_on_the_reader_line_never_misread_a_result() -> None:
    data = {
        "seed": 5,
        "rounds": 2,
        "players": 2,
        "bets_per_round": 2,
        "stakes": [100, 200],
        "faults": [
            {
                "kind": "serial_line_error",
                "target": "reader",
                "at": {"round": 1, "phase": "betting_open"},
                "duration": 3.0,
                "rate": 1.0,
            }
        ],
    }
    result = run_schedule(load_bench("in-process"), parse_schedule(data, "test.yaml"))
    assert result.passed, result.report.lines()
    assert result.serial_counts["reader"]["line_error"] > 0
