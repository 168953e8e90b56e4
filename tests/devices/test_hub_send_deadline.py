"""A report the hub sends on an idle, untimed, watched line needs no service to follow it: ``DeviceHub.send`` says so
and keeps the port's new deadline itself, the very one a service would have returned. Any other line (input waiting
from before, bytes a faulty or paced transport may hold back, no wake-up on input) asks for the service."""

from __future__ import annotations

import binascii
import random

from harness.bench.devices.hub import DeviceHub
from harness.wire.messages import BowlOn, Source
from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.base import Transport
from harness.wire.transports.faults import FaultyTransport
from harness.wire.transports.line import LineSettings
from harness.wire.transports.memory import MemoryEnd, memory_pipe
from harness.wire.transports.paced import PacedTransport


def _hub(transport: Transport, watched: bool = True) -> DeviceHub:
    hub = DeviceHub({Source.BOWL: transport}, heartbeat_s=5.0)
    if watched:
        hub.watch_input(lambda: None)
    hub.start(0.0)
    hub.service(0.0)  # HELLO out
    return hub


def _ack(server: MemoryEnd, seq: int) -> None:
    body = b"1 0 SRV ACK of=%d" % seq
    server.write(b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF)))


def test_a_send_on_an_idle_memory_line_keeps_the_deadline_a_service_would_return() -> None:
    for traced in (False, True):  # a relay that passes time through is as untimed as its inner transport
        twins = []
        for _ in range(2):
            device, server = memory_pipe("bowl")
            line = TracingTransport(device, TraceRecorder(), "bowl") if traced else device
            hub = _hub(line)
            _ack(server, 1)  # the HELLO acknowledged: the line is idle, its deadline a heartbeat away
            hub.service(0.1)
            twins.append((hub, server))
        (lean, lean_server), (full, full_server) = twins
        assert lean.send(Source.BOWL, BowlOn(), 0.2) is False
        assert full.send(Source.BOWL, BowlOn(), 0.2) is False
        full.ports["bowl"].dirty = True  # the service the lean hub skips, run in full on its twin
        due = full.service(0.2)
        retry = full.ports["bowl"].end.link.retry_after_s  # type: ignore[attr-defined]
        assert due == 0.2 + retry == lean.next_due()  # the retransmission deadline, not the silence 3 s away
        assert lean_server.read() == full_server.read() != b""  # the report is out at once on both
        assert lean.service(0.2) == due  # and a service after it changes nothing


def test_input_waiting_from_before_asks_for_the_service_that_reads_it() -> None:
    device, server = memory_pipe("bowl")
    hub = _hub(device)
    _ack(server, 1)  # arrives, marks the port; not serviced yet
    assert hub.send(Source.BOWL, BowlOn(), 0.1) is True
    hub.service(0.1)
    assert hub.ports["bowl"].end.pending() == 1  # HELLO's ACK read; the report waits for its own


def test_timed_or_unwatched_transports_ask_for_the_service() -> None:
    clock = [0.0]
    faulty = FaultyTransport(memory_pipe("bowl")[0], random.Random(1), lambda: clock[0])
    paced = PacedTransport(memory_pipe("bowl")[0], LineSettings(9600), lambda: clock[0])
    assert memory_pipe("x")[0].untimed and not faulty.untimed and not paced.untimed
    for transport in (faulty, paced):
        hub = _hub(transport)
        hub.ports["bowl"].dirty = False
        assert hub.send(Source.BOWL, BowlOn(), 0.1) is True
    device, _server = memory_pipe("bowl")
    hub = _hub(device, watched=False)
    assert hub.send(Source.BOWL, BowlOn(), 0.1) is True
