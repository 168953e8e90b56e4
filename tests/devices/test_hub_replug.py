"""Unplug and replug under the device hub on a real pty: the reader sees the port vanish, then HELLO and every
report queued meanwhile, in order (nothing a device saw is lost)."""

from __future__ import annotations

import binascii
from pathlib import Path

import pytest
import serial

from harness.bench.devices.hub import DeviceHub
from harness.wire.frame_errors import BadFrame
from harness.wire.line_events import LinkChanged, LinkEvent
from harness.wire.messages import BowlOff, BowlOn, Frame, Hello, Message, Source
from harness.wire.text import FrameDecoder
from harness.wire.transports.pty import PtyPort


class Gateway:
    """The server side, by hand: pyserial on the stable path, ACKs written as raw golden-style frames."""

    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, timeout=0.02)
        self.decoder = FrameDecoder()

    def frames(self, hub: DeviceHub, now: float, want: int) -> list[Frame]:
        """Service the hub with time advancing 10 ms a step (so retransmissions happen) until ``want``."""
        got: list[Frame] = []
        for step in range(100):
            hub.service(now + step * 0.01)
            for f in self.decoder.feed(self.port.read(512)):
                if isinstance(f, Frame):
                    got.append(f)
                    body = b"1 0 SRV ACK of=%d" % f.seq
                    self.port.write(b"$%s*%04X\r\n" % (body, binascii.crc_hqx(body, 0xFFFF)))
                else:
                    assert isinstance(f, BadFrame)
            if len(got) >= want:
                hub.service(now + step * 0.01)
                break
        return got


def test_reports_made_while_unplugged_follow_a_new_hello_after_replug(tmp_path: Path) -> None:
    pty = PtyPort("bowl", tmp_path)
    events: list[LinkEvent] = []
    hub = DeviceHub({Source.BOWL: pty}, on_event=lambda _s, e, _t: events.append(e))
    try:
        gw = Gateway(pty.address)  # opened first: pyserial's open() flushes what was written before
        hub.start(0.0)
        assert [f.message for f in gw.frames(hub, 0.0, 1)] == [Hello("BOWL-0001", 1, "xocdia-hil-0.1")]
        hub.send(Source.BOWL, BowlOn(), 0.1)
        assert [f.message for f in gw.frames(hub, 0.1, 1)] == [BowlOn()]

        pty.unplug()
        with pytest.raises(serial.SerialException):
            for _ in range(50):
                gw.port.read(64)
        gw.port.close()
        queued: list[Message] = [BowlOff(False, None), BowlOn(), BowlOff(True, 3)]
        for msg in queued:
            hub.send(Source.BOWL, msg, 0.5)
        hub.service(0.6)
        assert LinkChanged(False, "port closed") in events
        assert hub.pending() == 3

        pty.replug()
        gw = Gateway(pty.address)
        got = gw.frames(hub, 1.0, 4)
        assert [f.message for f in got] == [Hello("BOWL-0001", 1, "xocdia-hil-0.1"), *queued]
        assert [f.seq for f in got] == [1, 2, 3, 4]  # HELLO restarts the numbering
        assert hub.pending() == 0
        gw.port.close()
    finally:
        hub.close()
