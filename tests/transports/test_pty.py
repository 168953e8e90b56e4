"""Real ptys read by pyserial in another thread: frames, unplug and replug, and the pyserial URL transport."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import serial

from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame
from harness.wire.text import FrameDecoder
from harness.wire.transports.pty import PtyPort
from harness.wire.transports.url import SerialUrl

HELLO = b"$1 1 BOWL HELLO id=BOWL-0001 proto=1 fw=hil-0.1*19BB\r\n"
ON = b"$1 2 BOWL ON*F06B\r\n"


def read_frames(port: serial.Serial, count: int, limit: int = 200) -> list[Frame]:
    """Read until ``count`` frames decoded or ``limit`` timed-out reads (each bounded by port.timeout)."""
    decoder, frames = FrameDecoder(), []
    for _ in range(limit):
        frames += [f for f in decoder.feed(port.read(256)) if not isinstance(f, BadFrame)]
        if len(frames) >= count:
            break
    return frames


def test_device_frames_reach_a_pyserial_reader_in_another_thread(tmp_path: Path) -> None:
    with PtyPort("bowl", tmp_path) as dev:
        assert Path(dev.address).resolve() == Path(dev.slave_path)
        got: list[Frame] = []
        with serial.Serial(dev.address, 115200, timeout=0.05) as port:
            reader = threading.Thread(target=lambda: got.extend(read_frames(port, 2)))
            reader.start()
            dev.write(HELLO)
            dev.write(ON[:7])  # a frame split across writes
            dev.write(ON[7:])
            reader.join(timeout=10)
            assert [f.message.TYPE for f in got] == ["HELLO", "ON"]
            port.write(b"$1 0 SRV ACK of=1*C448\r\n")
            assert dev.read(timeout_s=2.0) == b"$1 0 SRV ACK of=1*C448\r\n"


def test_raw_mode_no_echo_and_no_newline_translation(tmp_path: Path) -> None:
    with PtyPort("bowl", tmp_path) as dev, serial.Serial(dev.address, timeout=0.05) as port:
        port.write(b"a\nb\r\n")
        data = b""
        for _ in range(40):
            data += dev.read(timeout_s=0.05)
            if len(data) >= 5:
                break
        assert data == b"a\nb\r\n"
        assert port.read(16) == b""  # nothing echoed back to the reader


def test_unplug_is_seen_by_the_reader_and_replug_gives_the_same_path_back(tmp_path: Path) -> None:
    dev = PtyPort("bowl", tmp_path)
    try:
        path = dev.address
        port = serial.Serial(path, timeout=0.05)
        dev.write(HELLO)
        assert [f.message.TYPE for f in read_frames(port, 1)] == ["HELLO"]
        dev.unplug()
        assert not dev.connected and not Path(path).exists()
        with pytest.raises(serial.SerialException):
            for _ in range(50):
                port.read(16)
        port.close()
        dev.replug()
        assert dev.connected and Path(path).exists()
        with serial.Serial(path, timeout=0.05) as again:
            dev.write(HELLO)
            assert [f.message.TYPE for f in read_frames(again, 1)] == ["HELLO"]
        assert Path(path).resolve() == Path(dev.slave_path)  # the kernel may reuse the pts number
    finally:
        dev.close()


def test_serial_url_transport_opens_a_pty_path_like_a_uart(tmp_path: Path) -> None:
    with PtyPort("bowl", tmp_path) as dev:
        url = SerialUrl("gateway", dev.address)
        try:
            dev.write(ON)
            data = b""
            for _ in range(40):
                data += url.read(timeout_s=0.05)
                if data.endswith(b"\n"):
                    break
            assert data == ON
            url.write(b"$1 0 SRV ACK of=2*" + b"0000\r\n")
            assert dev.read(timeout_s=2.0).startswith(b"$1 0 SRV ACK of=2*")
            assert url.fds()  # a real fd: usable in a selector
        finally:
            url.close()


def test_serial_url_that_cannot_open_names_the_url() -> None:
    from harness.wire.transports.base import TransportClosed

    with pytest.raises(TransportClosed, match="cannot open /dev/does-not-exist"):
        SerialUrl("bowl", "/dev/does-not-exist")
