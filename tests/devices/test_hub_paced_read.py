"""A paced pty line under the device hub: bytes the server wrote are taken in by a service and held until their last
byte has arrived at the line's speed; that service asks to run again at that time, so the device acts on them as soon
as the line has carried them. (It used to return the deadline it had before the read: nothing woke it for the held
bytes until some other timer, tens of milliseconds later on local HIL, longer than a polled bus's 20 ms response
timeout.)"""

from __future__ import annotations

import binascii
import select
from pathlib import Path

import pytest
import serial

from harness.bench.devices.hub import DeviceHub
from harness.wire.messages import LampOpen, Message, Source
from harness.wire.transports.line import LineSettings
from harness.wire.transports.paced import PacedTransport
from harness.wire.transports.pty import PtyPort

LINE = LineSettings(9600)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_bytes_held_for_the_line_time_set_the_next_deadline_and_are_acted_on_then(tmp_path: Path) -> None:
    clock = Clock()
    pty = PtyPort("lamp", tmp_path)
    paced = PacedTransport(pty, LINE, clock)
    commands: list[Message] = []
    hub = DeviceHub(
        {Source.LAMP: paced},
        on_command=lambda _src, msg, _now: commands.append(msg),
        require_ack=False,
        heartbeat_s=60.0,
    )
    server = serial.Serial(pty.address, timeout=0.5)
    try:
        hub.start(0.0)
        clock.now = 1.0
        hub.service(clock.now)  # the HELLO is out
        assert server.read_until(b"\n").startswith(b"$")
        body = b"1 1 SRV OPEN round=1 ms=1000"
        frame = b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF))
        server.write(frame)
        server.flush()
        assert select.select(pty.fds(), [], [], 2.0)[0]
        clock.now = 5.0
        due = hub.service(clock.now)  # takes the bytes in; they arrive over the next 11 ms
        arrives = 5.0 + LINE.frame_time_s(len(frame))
        assert paced.next_release() == pytest.approx(arrives)
        assert commands == []
        assert due is not None and due == pytest.approx(arrives)  # not the heartbeat a minute away
        clock.now = due
        hub.service(clock.now)
        assert commands == [LampOpen("1", 1000)]
    finally:
        server.close()
        hub.close()
