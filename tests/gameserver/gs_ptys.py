"""The device end of a real pty for the end-to-end game server tests, driven with the server's own codec."""

from __future__ import annotations

import os
import select
import threading
import time
import tty

from gameserver.protocol import Decoder, Frame, encode

Fields = tuple[tuple[str, str], ...]


class PtyDevice:
    """The device end of one pty: answers the server's data frames with ACK, sends HB, sends data frames
    stop-and-wait, and keeps every frame it received."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.received: list[Frame] = []
        self._acks: set[int] = set()
        self._seq = 0
        self._lock = threading.Lock()
        self._running = True
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _write(self, raw: bytes) -> None:
        with self._lock:
            os.write(self.master, raw)

    def _read(self) -> None:
        decoder = Decoder()
        last_hb = 0.0
        while self._running:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    return
                for item in decoder.feed(data):
                    if not isinstance(item, Frame):
                        continue
                    self.received.append(item)
                    if item.type == "ACK":
                        self._acks.add(int(item.get("of")))
                    elif not item.control:
                        self._write(encode(0, self.src, "ACK", (("of", str(item.seq)),)))
            if time.monotonic() - last_hb > 0.5:
                last_hb = time.monotonic()
                self._write(encode(0, self.src, "HB"))

    def send(self, type_: str, fields: Fields = (), src: str | None = None) -> None:
        """Send one data frame (as ``src``, default this device's) and wait (bounded) for its ACK."""
        self._seq += 1
        seq = self._seq
        self._write(encode(seq, src or self.src, type_, fields))
        deadline = time.monotonic() + 5
        while seq not in self._acks:
            assert time.monotonic() < deadline, f"no ACK for {self.src} {type_}"
            time.sleep(0.005)

    def wait_lamp(self, type_: str, after: int = 0, round_id: int | None = None, timeout: float = 10.0) -> Frame:
        """The first frame of ``type_`` (for ``round_id`` when given) received at index >= ``after``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for frame in self.received[after:]:
                if frame.type == type_ and (round_id is None or frame.get("round") == str(round_id)):
                    return frame
            time.sleep(0.01)
        raise AssertionError(f"no {type_} on {self.src}; got {[f.type for f in self.received]}")

    def close(self) -> None:
        self._running = False
        self._thread.join(timeout=2)
        os.close(self.master)
        os.close(self.slave)
