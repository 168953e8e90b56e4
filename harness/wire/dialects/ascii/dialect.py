"""The ASCII protocol of docs/protocol.md as a dialect (``xocdia-ascii``): ``$``-delimited text frames with
``key=value`` fields, CRC-16/CCITT-FALSE in hex, one device per serial line, devices push and the server
acknowledges. Its codec is the protocol's own (:mod:`harness.wire.text`), written as one fast pass rather
than composed from parts."""

from __future__ import annotations

import json

from harness.wire.dialects.base import FrameCodec, MessageMap, ProtocolCapabilities, StreamDecoder
from harness.wire.dialects.capabilities import NoiseKind
from harness.wire.dialects.push import PushDialect
from harness.wire.frame_errors import BadFrame, EncodeError, ErrorReason
from harness.wire.messages import DEVICES, Frame, Source
from harness.wire.text import FrameDecoder, encode, encode_body, parse_frame
from harness.wire.text.envelope import MAX_FRAME, crc16

#: Noise in the ASCII protocol's bodies (docs/protocol.md §2, §6), after ``1 SEQ SRC ``: a report of the sender's
#: with a field out of range, and one with a field missing (the lamp sends no report: a HELLO).
_BAD_FIELD: dict[Source, str] = {
    Source.READER: "RESULT faces=RRRQ overlap=0",
    Source.BOWL: "OFF touch=2 token=-",
    Source.SHAKER: "DROP item=cup token=-",
    Source.CONSOLE: "PROBLEM reason=bored",
    Source.LAMP: "HELLO id=LAMP-0001 proto=one fw=x",
}
_MISSING_FIELD: dict[Source, str] = {
    Source.READER: "RESULT faces=RRRR",
    Source.BOWL: "OFF touch=1",
    Source.SHAKER: "DROP item=token",
    Source.CONSOLE: "PROBLEM",
    Source.LAMP: "HELLO id=LAMP-0001",
}


def noise_body(kind: NoiseKind, src: Source, seq: int) -> bytes:
    """The ASCII protocol's frame body (no ``$``, no CRC) of a noise frame of ``kind`` from ``src`` numbered ``seq``:
    the protocol's decoder refuses it (``type`` for :attr:`NoiseKind.UNKNOWN_TYPE`, ``field`` for the others).

    Raises:
        EncodeError: ``src`` is not a device.
    """
    if src not in DEVICES:
        raise EncodeError(f"src: noise comes from a device, not {src.value}")
    rest = {NoiseKind.UNKNOWN_TYPE: "JUNK", NoiseKind.BAD_FIELD: _BAD_FIELD[src]}.get(kind, _MISSING_FIELD[src])
    return f"1 {seq} {src.value} {rest}".encode("ascii")


class AsciiBodyMap(MessageMap):
    """The ASCII protocol's frame body (``1 7 BOWL OFF touch=0 token=- round=12 at=5000``, docs/protocol.md §2, §6) as
    a message map, for a dialect that keeps these bodies inside its own framing and integrity check. Makes noise
    bodies (:class:`~harness.wire.dialects.capabilities.NoiseBodies`)."""

    def noise_body(self, kind: NoiseKind, src: Source, seq: int) -> bytes:
        return noise_body(kind, src, seq)

    def encode(self, frame: Frame) -> bytes:
        return encode_body(frame)

    def decode(self, body: bytes) -> Frame | BadFrame:
        if not body or len(body) > MAX_FRAME - 9 or b"*" in body or b"\n" in body or b"$" in body:
            return BadFrame(ErrorReason.SYNTAX, body, "not an ASCII frame body")
        item = parse_frame(b"$%s*%04X\r\n" % (body, crc16(body)))
        return item if isinstance(item, Frame) else BadFrame(item.reason, body, item.detail, item.seq, item.src)


class AsciiCodec(FrameCodec):
    """The ASCII protocol's encoder and stream decoder. Makes noise frames
    (:class:`~harness.wire.dialects.capabilities.NoiseFrames`)."""

    def noise_frame(self, kind: NoiseKind, src: Source, seq: int) -> bytes:
        body = noise_body(kind, src, seq)
        return b"$" + body + b"*%04X\r\n" % crc16(body)

    def encode(self, frame: Frame) -> bytes:
        return encode(frame)

    def decoder(self) -> StreamDecoder:
        return FrameDecoder()


_CODEC = AsciiCodec()


class AsciiDialect(PushDialect):
    """docs/protocol.md: the default dialect of every shipped bench."""

    name = "xocdia-ascii"
    summary = "ASCII key=value frames, CRC-16/CCITT-FALSE, one device per serial line, devices push, ACK/NAK"

    golden_file = "protocol/golden.jsonl"
    #: docs/protocol.md §6: round tags, event times, HELLO identities, the token sensor, token positions, problem
    #: reasons and the betting time, round ids as text; no per-token confidence.
    capabilities = ProtocolCapabilities()

    def codec(self) -> FrameCodec:
        return _CODEC

    def parse_golden(self, text: str) -> list[tuple[Frame, bytes]]:
        """docs/protocol.md §10's vectors: ``frame`` is the exact bytes (a JSON string, latin-1)."""
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            raw = json.loads(line)["frame"].encode("latin-1")
            frame = parse_frame(raw)
            if isinstance(frame, BadFrame):
                raise ValueError(f"golden vector line {n}: {frame.reason.value}: {frame.detail}")
            out.append((frame, raw))
        return out
