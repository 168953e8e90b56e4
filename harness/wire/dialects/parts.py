"""Ready-made codec parts a dialect composes (:class:`~harness.wire.dialects.base.ComposedCodec`): framers and
integrity checks. Each framer never raises on input and bounds what it buffers (``max_frame``).

Framers:
    :class:`DelimitedFramer`: a start byte (optional) and an end sequence, e.g. ``$`` … ``\\r\\n`` or text lines.
    :class:`LengthPrefixedFramer`: a start byte and a length byte (or two, big-endian), then that many bytes.
    :class:`StxEtxFramer`: STX … ETX with DLE escaping of STX, ETX and DLE inside the frame.
Integrity checks (appended to the body, big-endian unless said):
    :class:`Crc16CcittFalse` (poly 0x1021, init 0xFFFF), :class:`Crc16Modbus` (reflected poly 0xA001, init 0xFFFF,
    low byte first as Modbus RTU sends it), :class:`Lrc` (two's complement of the byte sum, one byte),
    :class:`NoIntegrity`.
"""

from __future__ import annotations

import binascii

from harness.wire.dialects.base import Framer, Integrity
from harness.wire.frame_errors import BadFrame, ErrorReason

STX, ETX, DLE = 0x02, 0x03, 0x10


# --- integrity ---------------------------------------------------------------------------------------------------


def _modbus_table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_MODBUS = _modbus_table()


def crc16_modbus(data: bytes) -> int:
    """CRC-16/MODBUS (reflected poly 0x8005 = 0xA001, init 0xFFFF, no xorout), table-driven;
    ``crc16_modbus(b"123456789") == 0x4B37``."""
    crc = 0xFFFF
    table = _MODBUS
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc


class Crc16Modbus(Integrity):
    """CRC-16/MODBUS appended low byte first (as Modbus RTU puts it on the wire)."""

    name = "CRC-16/MODBUS"

    def seal(self, body: bytes) -> bytes:
        return body + crc16_modbus(body).to_bytes(2, "little")

    def open(self, sealed: bytes) -> bytes | None:
        if len(sealed) < 2:
            return None
        body = sealed[:-2]
        return body if crc16_modbus(body).to_bytes(2, "little") == sealed[-2:] else None


class Crc16CcittFalse(Integrity):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) appended big-endian as two bytes."""

    name = "CRC-16/CCITT-FALSE"

    def seal(self, body: bytes) -> bytes:
        return body + binascii.crc_hqx(body, 0xFFFF).to_bytes(2, "big")

    def open(self, sealed: bytes) -> bytes | None:
        if len(sealed) < 2:
            return None
        body = sealed[:-2]
        return body if binascii.crc_hqx(body, 0xFFFF).to_bytes(2, "big") == sealed[-2:] else None


class Lrc(Integrity):
    """Longitudinal redundancy check: one byte, the two's complement of the sum of the body's bytes (mod 256)."""

    name = "LRC"

    @staticmethod
    def lrc(body: bytes) -> int:
        return (-sum(body)) & 0xFF

    def seal(self, body: bytes) -> bytes:
        return body + bytes((self.lrc(body),))

    def open(self, sealed: bytes) -> bytes | None:
        if not sealed:
            return None
        body = sealed[:-1]
        return body if self.lrc(body) == sealed[-1] else None


class NoIntegrity(Integrity):
    """No check (a medium that checks itself, e.g. TCP)."""

    name = "none"

    def seal(self, body: bytes) -> bytes:
        return body

    def open(self, sealed: bytes) -> bytes | None:
        return sealed


# --- framers -----------------------------------------------------------------------------------------------------


class DelimitedFramer(Framer):
    """Frames that end with ``end`` and (when ``start`` is given) begin with it; bytes outside a frame are garbage.
    A frame longer than ``max_frame`` is reported once as ``too_long`` and skipped whole: up to the next start when
    there is a start byte, else up to and including the next end (its tail is never read as a frame)."""

    def __init__(self, end: bytes = b"\n", start: bytes = b"", max_frame: int = 4096) -> None:
        if not end:
            raise ValueError("end must not be empty")
        self.start, self.end, self.max_frame = start, end, max_frame
        self._buf = bytearray()
        self._skipping = False  # inside an over-long frame with no start byte: discard through the next end

    def wrap(self, sealed: bytes) -> bytes:
        return self.start + sealed + self.end

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        self._buf += data
        out: list[bytes | BadFrame] = []
        while True:
            if self._skipping:
                end = self._buf.find(self.end)
                if end < 0:
                    keep = len(self.end) - 1  # an end sequence may be split across reads
                    del self._buf[: max(0, len(self._buf) - keep)]
                    return out
                del self._buf[: end + len(self.end)]
                self._skipping = False
            if self.start:
                at = self._buf.find(self.start)
                if at < 0:
                    keep = len(self.start) - 1
                    junk = bytes(self._buf[: len(self._buf) - keep]) if keep else bytes(self._buf)
                    if junk:
                        out.append(BadFrame(ErrorReason.GARBAGE, junk, "bytes outside a frame"))
                    del self._buf[: len(junk)]
                    return out
                if at:
                    out.append(BadFrame(ErrorReason.GARBAGE, bytes(self._buf[:at]), "bytes outside a frame"))
                    del self._buf[:at]
            end = self._buf.find(self.end, len(self.start))
            if end < 0:
                if len(self._buf) > self.max_frame:
                    out.append(BadFrame(ErrorReason.TOO_LONG, bytes(self._buf[: self.max_frame]), "no end in time"))
                    if self.start:
                        del self._buf[: len(self.start)]  # resynchronise on the next start
                    else:
                        self._buf.clear()
                        self._skipping = True
                    continue
                return out
            if self.start:
                nxt = self._buf.find(self.start, len(self.start), end)
                if nxt >= 0:  # a new start before this frame ended: the first one was cut short
                    out.append(BadFrame(ErrorReason.TRUNCATED, bytes(self._buf[:nxt]), "a new frame began"))
                    del self._buf[:nxt]
                    continue
            frame = bytes(self._buf[len(self.start) : end])
            del self._buf[: end + len(self.end)]
            if end > self.max_frame:
                out.append(BadFrame(ErrorReason.TOO_LONG, frame[: self.max_frame], "frame too long"))
            else:
                out.append(frame)


class LengthPrefixedFramer(Framer):
    """``start`` byte, then the length of what follows (``length_bytes`` bytes, big-endian), then that many bytes.
    On a bad length or a start byte missing, the framer resynchronises on the next start byte."""

    def __init__(self, start: int = 0xA5, length_bytes: int = 1, max_frame: int = 255) -> None:
        if length_bytes not in (1, 2):
            raise ValueError("length_bytes must be 1 or 2")
        self.start, self.length_bytes, self.max_frame = start, length_bytes, max_frame
        self._buf = bytearray()

    def wrap(self, sealed: bytes) -> bytes:
        if len(sealed) > self.max_frame:
            raise ValueError(f"frame of {len(sealed)} bytes exceeds max_frame {self.max_frame}")
        return bytes((self.start,)) + len(sealed).to_bytes(self.length_bytes, "big") + sealed

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        self._buf += data
        out: list[bytes | BadFrame] = []
        head = 1 + self.length_bytes
        while self._buf:
            at = self._buf.find(self.start)
            if at < 0:
                out.append(BadFrame(ErrorReason.GARBAGE, bytes(self._buf), "no start byte"))
                self._buf.clear()
                break
            if at:
                out.append(BadFrame(ErrorReason.GARBAGE, bytes(self._buf[:at]), "bytes before the start byte"))
                del self._buf[:at]
            if len(self._buf) < head:
                break
            size = int.from_bytes(self._buf[1:head], "big")
            if size == 0 or size > self.max_frame:
                out.append(BadFrame(ErrorReason.SYNTAX, bytes(self._buf[:head]), f"bad length {size}"))
                del self._buf[:1]
                continue
            if len(self._buf) < head + size:
                break
            out.append(bytes(self._buf[head : head + size]))
            del self._buf[: head + size]
        return out


class StxEtxFramer(Framer):
    """STX, the frame with each STX, ETX or DLE inside it sent as DLE followed by the byte XOR 0x40, then ETX."""

    def __init__(self, max_frame: int = 1024) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()
        self._in = False
        self._esc = False

    def wrap(self, sealed: bytes) -> bytes:
        out = bytearray((STX,))
        for b in sealed:
            if b in (STX, ETX, DLE):
                out += bytes((DLE, b ^ 0x40))
            else:
                out.append(b)
        out.append(ETX)
        return bytes(out)

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        out: list[bytes | BadFrame] = []
        junk = bytearray()
        for b in data:
            if b == STX:
                if junk:
                    out.append(BadFrame(ErrorReason.GARBAGE, bytes(junk), "bytes outside a frame"))
                    junk.clear()
                if self._in:
                    out.append(BadFrame(ErrorReason.TRUNCATED, bytes(self._buf), "a new frame began"))
                self._buf.clear()
                self._in, self._esc = True, False
            elif not self._in:
                junk.append(b)
            elif b == ETX:
                if self._esc:
                    out.append(BadFrame(ErrorReason.SYNTAX, bytes(self._buf), "escape before ETX"))
                else:
                    out.append(bytes(self._buf))
                self._buf.clear()
                self._in = self._esc = False
            elif self._esc:
                self._buf.append(b ^ 0x40)
                self._esc = False
            elif b == DLE:
                self._esc = True
            else:
                self._buf.append(b)
                if len(self._buf) > self.max_frame:
                    out.append(BadFrame(ErrorReason.TOO_LONG, bytes(self._buf), "frame too long"))
                    self._buf.clear()
                    self._in = False
        if junk:
            out.append(BadFrame(ErrorReason.GARBAGE, bytes(junk), "bytes outside a frame"))
        return out
