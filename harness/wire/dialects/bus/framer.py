"""The framer of ``xocdia-bus`` (docs/dialects/xocdia-bus.md §2): ``0xA5 LEN body CRC`` frames, hunted for.

Guarantees: a candidate whose check fails costs only its start byte, so a cut or corrupted frame never takes the frame
after it down with it; the framer never raises and buffers at most one incomplete candidate.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.wire.dialects.base import Integrity
from harness.wire.dialects.bus.catalogue import MAX_LEN, MIN_LEN, START
from harness.wire.dialects.parts import Crc16Modbus, LengthPrefixedFramer
from harness.wire.frame_errors import BadFrame, ErrorReason


class BusFramer(LengthPrefixedFramer):
    """``0xA5 LEN body CRC`` frames, hunted for: at each start byte a candidate of ``LEN`` bytes is taken only when
    its check holds. A candidate whose check fails (``crc``) or whose length is impossible (``syntax``) is reported up
    to the next start byte inside it, where the hunt resumes; a candidate still incomplete when a later start byte
    already begins a whole checked frame was cut short (``truncated``), and so was a checked candidate when a start
    byte inside it begins a whole, checked and well-formed frame reaching past it (the cut frame's CRC was completed
    by the next frame's first bytes). Bytes before any start byte are ``garbage``.
    Never raises; buffers at most one incomplete candidate (``2 + MAX_LEN`` bytes)."""

    def __init__(self, integrity: Integrity | None = None, accept: Callable[[bytes], bool] | None = None) -> None:
        super().__init__(start=START, length_bytes=1, max_frame=MAX_LEN)
        self.integrity = integrity or Crc16Modbus()
        #: Whether a checked body is a well-formed message: a frame found inside another must be, to cut it short.
        self.accept: Callable[[bytes], bool] = accept or (lambda body: True)

    def _complete_ok(self, buf: bytearray, at: int) -> int:
        """The end of a whole checked frame starting at ``at``, or -1 (bad), or 0 (incomplete)."""
        if len(buf) < at + 2:
            return 0
        size = buf[at + 1]
        if not MIN_LEN <= size <= MAX_LEN:
            return -1
        end = at + 2 + size
        if len(buf) < end:
            return 0
        return end if self.integrity.open(bytes(buf[at + 2 : end])) is not None else -1

    def _overlap(self, buf: bytearray, at: int, end: int) -> int:
        """For a checked candidate ``buf[at:end]``: the position of a start byte inside it that begins a whole, checked
        and well-formed frame reaching past it (the candidate is a cut frame whose CRC the next frame's first bytes
        happened to complete: one chance in 256 when cut one byte short, as the start byte 0xA5 then ends it, one in
        65 536 otherwise); -1 to wait, when its last byte is a start byte followed by a plausible length (such a
        frame may still be arriving; a real frame ending in 0xA5 is followed by a start byte or by nothing); else 0."""
        start = self.start
        inner = buf.find(start, at + 1, end)
        while inner >= 0:
            other = self._complete_ok(buf, inner)
            if other > end and self.accept(bytes(buf[inner + 2 : other - 2])):
                return inner
            inner = buf.find(start, inner + 1, end)
        last = end - 1
        plausible = len(buf) > end and MIN_LEN <= buf[end] <= MAX_LEN
        if buf[last] == start and plausible and not self._complete_ok(buf, last):
            return -1
        return 0

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        buf = self._buf
        buf += data
        out: list[bytes | BadFrame] = []
        pos = 0
        start = self.start
        try:
            while pos < len(buf):
                at = buf.find(start, pos)
                if at < 0:
                    out.append(BadFrame(ErrorReason.GARBAGE, bytes(buf[pos:]), "bytes outside a frame"))
                    pos = len(buf)
                    break
                if at > pos:
                    out.append(BadFrame(ErrorReason.GARBAGE, bytes(buf[pos:at]), "bytes outside a frame"))
                    pos = at
                end = self._complete_ok(buf, at)
                if end > 0:
                    inner = self._overlap(buf, at, end)
                    if inner < 0:
                        break
                    if inner:
                        out.append(BadFrame(ErrorReason.TRUNCATED, bytes(buf[at:inner]), "a new frame began inside it"))
                        pos = inner
                        continue
                    out.append(bytes(buf[at + 2 : end]))
                    pos = end
                    continue
                nxt = buf.find(start, at + 1)
                if end < 0:
                    size = buf[at + 1]
                    cut = len(buf) if nxt < 0 else nxt
                    if MIN_LEN <= size <= MAX_LEN:
                        out.append(BadFrame(ErrorReason.CRC, bytes(buf[at:cut]), "CRC-16/MODBUS check failed"))
                    else:
                        out.append(BadFrame(ErrorReason.SYNTAX, bytes(buf[at:cut]), f"bad length {size}"))
                    pos = cut
                    continue
                # incomplete: cut short if a later start byte already begins a whole checked frame
                later = nxt
                while later >= 0 and self._complete_ok(buf, later) <= 0:
                    later = buf.find(start, later + 1)
                if later < 0:
                    break
                out.append(BadFrame(ErrorReason.TRUNCATED, bytes(buf[at:later]), "a new frame began"))
                pos = later
        finally:
            del buf[:pos]
        return out
