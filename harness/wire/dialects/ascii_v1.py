"""The ASCII protocol of docs/protocol.md as a dialect (``xocdia-ascii``): ``$``-delimited text frames with
``key=value`` fields, CRC-16/CCITT-FALSE in hex, one device per serial line, devices push and the server
acknowledges. Its codec is the protocol's own (:mod:`harness.wire.protocol.codec`), written as one fast pass rather
than composed from parts."""

from __future__ import annotations

from harness.wire.dialects.base import FrameCodec, StreamDecoder
from harness.wire.dialects.push import PushDialect
from harness.wire.protocol.codec import FrameDecoder, encode
from harness.wire.protocol.messages import Frame


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

    def codec(self) -> FrameCodec:
        return _CODEC
