"""The in-memory pipe and the fault-injecting wrapper, frame by frame."""

from __future__ import annotations

import random
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.wire.frame_errors import BadFrame, ErrorReason
from harness.wire.text import FrameDecoder, encode
from harness.wire.transports.base import TransportClosed
from harness.wire.transports.faults import Fault, FaultRates, FaultyTransport
from harness.wire.transports.memory import MemoryEnd, memory_pipe

A = b"$1 2 BOWL ON*F06B\r\n"
B = b"$1 3 BOWL OFF touch=0 token=-*6FA3\r\n"
C = b"$1 0 BOWL HB*6E17\r\n"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_memory_pipe_carries_bytes_both_ways_and_across_threads() -> None:
    dev, srv = memory_pipe("bowl")
    dev.write(A)
    assert srv.read() == A
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(dev.read(timeout_s=2.0)))
    reader.start()
    srv.write(B)
    reader.join(timeout=5)
    assert got == [B]


def test_memory_pipe_wakes_a_reader_already_waiting() -> None:
    dev, srv = memory_pipe("bowl")
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(dev.read(timeout_s=60.0)))
    reader.start()
    while not dev._readers:  # the reader waits on the line before anything is written
        time.sleep(0.001)
    srv.write(B)
    reader.join(timeout=20)  # far below the read's own timeout: only a wake-up by the write ends it in time
    assert got == [B]


def test_memory_pipe_unplug_is_seen_by_both_ends_and_replug_restores() -> None:
    dev, srv = memory_pipe("bowl")
    woken: list[int] = []
    srv.notify(lambda: woken.append(1))
    dev.write(A)
    assert woken == [1]
    dev.unplug()
    assert not srv.connected
    with pytest.raises(TransportClosed):
        srv.read()
    with pytest.raises(TransportClosed):
        dev.write(A)
    dev.replug()
    assert srv.read() == b""  # bytes in flight when the cable was pulled are gone
    dev.write(B)
    assert srv.read() == B


def faulty(**tx: float) -> tuple[FaultyTransport, Clock, MemoryEnd]:
    dev, srv = memory_pipe("bowl")
    clock = Clock()
    return FaultyTransport(dev, random.Random(1), clock, tx=FaultRates(**tx)), clock, srv


def test_scheduled_drop_duplicate_and_reorder_apply_to_the_next_frames() -> None:
    t, _clock, srv = faulty()
    t.inject("tx", Fault.DROP)
    t.write(A + B)
    assert srv.read() == B
    t.inject("tx", Fault.DUPLICATE)
    t.write(A)
    assert srv.read() == A + A
    t.inject("tx", Fault.REORDER)
    t.write(A)
    assert srv.read() == b""
    t.write(B)
    assert srv.read() == B + A
    assert t.counts("tx")[Fault.DROP] == 1


def test_bit_flip_is_caught_by_the_crc() -> None:
    t, _clock, srv = faulty()
    t.inject("tx", Fault.FLIP)
    t.write(A)
    data = srv.read()
    assert len(data) == len(A) and data != A
    assert sum(bin(x ^ y).count("1") for x, y in zip(data, A, strict=True)) == 1
    out = FrameDecoder().feed(data + C)
    assert [type(o) for o in out][-1] is not BadFrame  # the next good frame still decodes
    assert all(isinstance(o, BadFrame) for o in out[:-1])
    assert any(o.reason in (ErrorReason.CRC, ErrorReason.SYNTAX, ErrorReason.GARBAGE) for o in out[:-1])


def test_latency_holds_bytes_until_their_due_time() -> None:
    t, clock, srv = faulty(latency=0.5)
    t.write(A)
    assert srv.read() == b""
    assert t.tick(0.2) == 0.5
    assert srv.read() == b""
    clock.now = 0.5
    assert t.tick(0.5) is None
    assert srv.read() == A


def test_a_wrapper_over_a_wrapper_asks_for_a_tick_when_the_inner_one_holds_bytes() -> None:
    clock = Clock()
    dev, srv = memory_pipe("reader")
    inner = FaultyTransport(dev, random.Random(1), clock, tx=FaultRates(latency=0.5))  # e.g. a camera's latency
    outer = FaultyTransport(inner, random.Random(2), clock)  # a quiet serial-fault wrapper around it
    outer.write(A)  # passes the outer wrapper at once, then waits in the inner one
    assert srv.read() == b""
    assert outer.tick(0.1) == 0.5  # the inner wrapper's due time, not "never"
    clock.now = 0.5
    assert outer.tick(0.5) is None
    assert srv.read() == A


def test_sliced_frame_arrives_in_pieces_that_still_decode() -> None:
    t, clock, srv = faulty(slice=1.0, slice_gap=0.01)
    t.write(A)
    pieces = [srv.read()]
    while (due := t.tick(clock.now)) is not None:
        clock.now = due
        t.tick(clock.now)
        pieces.append(srv.read())
    pieces = [p for p in pieces if p]
    assert len(pieces) == 4 and b"".join(pieces) == A
    decoder = FrameDecoder()
    frames = [f for p in pieces for f in decoder.feed(p)]
    assert len(frames) == 1 and not isinstance(frames[0], BadFrame)


def test_random_faults_are_reproducible_from_the_seed() -> None:
    def run(seed: int) -> bytes:
        dev, srv = memory_pipe("x")
        t = FaultyTransport(dev, random.Random(seed), lambda: 0.0, tx=FaultRates(flip=0.3, drop=0.3, duplicate=0.3))
        for _ in range(30):
            t.write(A)
        return srv.read()

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_fault_rates_name_a_bad_field() -> None:
    with pytest.raises(ValueError, match=r"fault rate drop: must be a probability in \[0, 1\], got 1.5"):
        FaultRates(drop=1.5)


def test_unplug_through_the_fault_wrapper_pulls_the_inner_cable() -> None:
    t, _clock, srv = faulty(latency=1.0)
    t.write(A)  # still in flight (latency) when the cable is pulled: lost
    t.unplug()
    assert not t.connected and not srv.connected
    with pytest.raises(TransportClosed):
        t.write(B)
    t.replug()
    assert t.connected and srv.connected
    assert t.tick(5.0) is None
    assert srv.read() == b""


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(0, 1),
)
def test_faults_never_invent_a_frame_and_only_flips_corrupt_one(
    seed: int, flip: float, drop: float, dup: float, reorder: float, slice_: float
) -> None:
    t, clock, srv = faulty()
    t.lanes["tx"].rates = FaultRates(flip=flip, drop=drop, duplicate=dup, reorder=reorder, slice=slice_)
    t.lanes["tx"].rng = random.Random(seed)
    sent = [A, B, C] * 5
    for frame in sent:
        t.write(frame)
    while (due := t.tick(clock.now)) is not None:
        clock.now = due
    decoder = FrameDecoder()
    out = decoder.feed(srv.read())
    good = [encode(f) for f in out if not isinstance(f, BadFrame)]
    assert all(g in (A, B, C) for g in good)
    errors = [e for e in out if isinstance(e, BadFrame)]
    if flip == 0.0:
        assert errors == []
    assert len(good) <= 2 * len(sent)
