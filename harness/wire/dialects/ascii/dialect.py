"""The ASCII protocol of docs/protocol.md as a dialect (``xocdia-ascii``): ``$``-delimited text frames with
``key=value`` fields, CRC-16/CCITT-FALSE in hex, one device per serial line, devices push and the server
acknowledges. Its codec is the protocol's own (:mod:`harness.wire.text`), written as one fast pass rather
than composed from parts."""

from __future__ import annotations

import json

from harness.wire.dialects.base import FrameCodec, MessageMap, StreamDecoder
from harness.wire.dialects.push import PushDialect
from harness.wire.frame_errors import BadFrame, ErrorReason
from harness.wire.messages import Frame
from harness.wire.text import FrameDecoder, encode, encode_body, parse_frame
from harness.wire.text.envelope import MAX_FRAME, crc16


class AsciiBodyMap(MessageMap):
    """The ASCII protocol's frame body (``1 7 BOWL OFF touch=0 token=- round=12 at=5000``, docs/protocol.md §2, §6) as
    a message map, for a dialect that keeps these bodies inside its own framing and integrity check."""

    def encode(self, frame: Frame) -> bytes:
        return encode_body(frame)

    def decode(self, body: bytes) -> Frame | BadFrame:
        if not body or len(body) > MAX_FRAME - 9 or b"*" in body or b"\n" in body or b"$" in body:
            return BadFrame(ErrorReason.SYNTAX, body, "not an ASCII frame body")
        item = parse_frame(b"$%s*%04X\r\n" % (body, crc16(body)))
        return item if isinstance(item, Frame) else BadFrame(item.reason, body, item.detail, item.seq, item.src)


class AsciiCodec(FrameCodec):
    """The ASCII protocol's encoder and stream decoder."""

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
