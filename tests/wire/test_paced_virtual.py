"""Pacing in virtual time: the release schedule of a write, computed against a fake clock or a SimPy clock."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
import simpy

from harness.wire.transports.base import Transport, TransportClosed
from harness.wire.transports.line import LineSettings
from harness.wire.transports.memory import MemoryEnd, memory_pipe
from harness.wire.transports.paced import LineSpan, PacedTransport, pace_lines

LINE = LineSettings(9600)  # 10 bits a byte: 1/960 s
BT = 10 / 9600
FRAME = b"$1 7 BOWL ON round=17 at=5689*5019\r\n"  # 36 bytes


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_write_is_released_byte_by_byte_at_the_line_speed() -> None:
    device, server = memory_pipe("bowl")
    clock = Clock(10.0)
    paced = PacedTransport(device, LINE, clock)
    span = paced.write_spanned(FRAME)
    assert span == LineSpan(10.0, pytest.approx(10.0 + len(FRAME) * BT))
    assert server.read() == b""  # nothing has arrived yet: the first byte takes one byte time
    got = bytearray()
    for k in range(1, len(FRAME) + 1):
        clock.now = 10.0 + k * BT - 1e-6  # just before byte k-1 has fully arrived
        paced.tick(clock.now)
        assert server.read() == b"" if k == 1 else len(got) == k - 1
        clock.now = 10.0 + k * BT  # byte k-1's stop bit ends
        paced.tick(clock.now)
        got += server.read()
        assert len(got) == k
    assert bytes(got) == FRAME
    assert paced.tick(clock.now) is None  # nothing held any more


def test_tick_asks_for_the_next_byte_but_not_sooner_than_the_quantum() -> None:
    device, _server = memory_pipe("bowl")
    clock = Clock(0.0)
    slow = PacedTransport(device, LINE, clock, quantum_s=0.0)
    slow.write(b"ab")
    assert slow.tick(0.0) == pytest.approx(BT)  # byte 0 arrives after one byte time
    fast = PacedTransport(memory_pipe("x")[0], LineSettings(115200), clock)  # 86.8 µs a byte, quantum 1 ms
    fast.write(b"abcdef")
    assert fast.tick(0.0) == pytest.approx(0.001)


def test_writes_queue_behind_each_other_and_the_gap_spaces_every_byte() -> None:
    clock = Clock(0.0)
    gap = 0.0005
    paced = PacedTransport(memory_pipe("bowl")[0], LineSettings(9600, inter_byte_gap_s=gap), clock)
    first = paced.write_spanned(b"x" * 10)
    second = paced.write_spanned(b"y" * 5)  # at the same instant: waits for the line
    assert first is not None and second is not None
    assert first.last - first.first == pytest.approx(10 * BT + 9 * gap)
    assert second.first == pytest.approx(first.last + gap)
    assert second.last - second.first == pytest.approx(5 * BT + 4 * gap)
    clock.now = 1.0  # the line was idle for long: the next write starts at once
    third = paced.write_spanned(b"z")
    assert third == LineSpan(1.0, pytest.approx(1.0 + BT))


def test_the_settings_a_peer_negotiates_apply_to_the_following_bursts() -> None:
    class Negotiating(MemoryEnd):
        offered: LineSettings | None = None

        def negotiated_line(self, base: LineSettings) -> LineSettings:
            return self.offered or base

    inner = Negotiating("bowl", memory_pipe("x")[0]._cond)
    clock = Clock(0.0)
    paced = PacedTransport(inner, LINE, clock)
    before = paced.write_spanned(b"x" * 12)
    inner.offered = LineSettings(1200)
    after = paced.write_spanned(b"x" * 12)
    assert before is not None and after is not None
    assert before.last - before.first == pytest.approx(12 * BT)
    assert after.last - after.first == pytest.approx(12 * 10 / 1200)


def test_held_bytes_are_lost_when_the_port_goes_away() -> None:
    device, _server = memory_pipe("bowl")
    clock = Clock(0.0)
    paced = PacedTransport(device, LINE, clock)
    paced.write(FRAME)
    clock.now = 5 * BT
    paced.tick(clock.now)
    device.unplug()
    clock.now = 1.0
    assert paced.tick(clock.now) is None  # never raises: the bytes are dropped as on a cut cable
    assert paced.dropped == len(FRAME) - 5
    assert not paced.connected
    with pytest.raises(TransportClosed):
        paced.write(b"more")  # a port that is gone says so, as it always did


def _paced_pair(env: simpy.Environment, line: LineSettings) -> tuple[Transport, Transport]:
    device_end, server_end = memory_pipe("bowl")
    devices: dict[str, Transport] = {"bowl": device_end}
    servers: dict[str, Any] = {"bowl": server_end}
    pace_lines(devices, servers, line, lambda: float(env.now))
    return devices["bowl"], servers["bowl"]


def test_in_memory_lines_cost_one_wake_up_per_write_not_one_per_byte() -> None:
    env = simpy.Environment()
    device, server = _paced_pair(env, LINE)
    assert isinstance(server, PacedTransport) and isinstance(device, PacedTransport)
    assert not device.hold_tx and not server.hold_tx  # each end paces what it reads
    received: list[tuple[float, bytes]] = []
    wakes = [0]
    wake: list[simpy.Event] = [env.event()]

    def on_data() -> None:
        if not wake[0].triggered:
            wake[0].succeed()

    server.notify(on_data)

    def reader() -> Generator[simpy.Event, Any, None]:
        while True:
            data = server.read()
            if data:
                received.append((float(env.now), data))
            due = server.next_release()
            event = wake[0] if due is None else env.timeout(due - env.now) | wake[0]
            yield event
            wakes[0] += 1
            if wake[0].triggered:
                wake[0] = env.event()

    def writer() -> Generator[simpy.Event, Any, None]:
        yield env.timeout(0.5)
        device.write(FRAME)

    env.process(reader())
    env.process(writer())
    env.run(until=2.0)
    assert received == [(pytest.approx(0.5 + len(FRAME) * BT), FRAME)]
    assert wakes[0] <= 2  # the write's notification, then the frame's last byte


def test_a_read_in_the_middle_of_a_burst_gets_the_bytes_already_due() -> None:
    env = simpy.Environment()
    device, server = _paced_pair(env, LINE)
    spans: list[LineSpan | None] = []
    chunks: list[bytes] = []
    assert isinstance(server, PacedTransport)

    def run() -> Generator[simpy.Event, Any, None]:
        device.write(FRAME)
        yield env.timeout(10.5 * BT)
        data, span = server.read_spanned()
        chunks.append(data)
        spans.append(span)
        yield env.timeout(1.0)
        data, span = server.read_spanned()
        chunks.append(data)
        spans.append(span)

    env.process(run())
    env.run()
    assert chunks == [FRAME[:10], FRAME[10:]]
    assert spans[0] == LineSpan(0.0, pytest.approx(10 * BT))
    assert spans[1] == LineSpan(pytest.approx(10 * BT), pytest.approx(len(FRAME) * BT))


def test_both_directions_are_paced_and_the_server_reply_takes_its_time() -> None:
    env = simpy.Environment()
    device, server = _paced_pair(env, LINE)
    ack = b"$1 0 SRV ACK of=1*C448\r\n"
    seen: list[tuple[float, bytes]] = []
    device.notify(lambda: None)

    def run() -> Generator[simpy.Event, Any, None]:
        server.write(ack)
        assert device.read() == b""
        yield env.timeout(len(ack) * BT)
        seen.append((float(env.now), device.read()))

    env.process(run())
    env.run()
    assert seen == [(pytest.approx(len(ack) * BT), ack)]


def test_pace_lines_wraps_what_each_kind_of_line_needs() -> None:
    clock = Clock()
    device_end, server_end = memory_pipe("bowl")
    devices: dict[str, Transport] = {"bowl": device_end, "lamp": memory_pipe("lamp")[0]}
    servers: dict[str, Any] = {"bowl": server_end, "lamp": "/dev/pts/9"}
    pace_lines(devices, servers, None, clock)
    assert devices["bowl"] is device_end  # no line settings: nothing paced
    pace_lines(devices, servers, LINE, clock)
    bowl, lamp = devices["bowl"], devices["lamp"]
    assert isinstance(bowl, PacedTransport) and not bowl.hold_tx and isinstance(servers["bowl"], PacedTransport)
    assert isinstance(lamp, PacedTransport) and lamp.hold_tx and servers["lamp"] == "/dev/pts/9"
