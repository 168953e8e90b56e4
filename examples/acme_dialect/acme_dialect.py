"""ACME's table devices, as a lab would add them to xocdia-hil (docs/dialects/README.md, "A worked example").

ACME's devices wrap each frame in STX ... ETX (DLE-escaped), check it with a one-byte LRC, and carry the same text
bodies as the ASCII protocol. They push, one device per line, and expect an acknowledgement per frame: the
harness's push dialogue, so only the codec is new.
"""

from __future__ import annotations

from harness.lab import AsciiBodyMap, ComposedCodec, FrameCodec, Lrc, PushDialect, StxEtxFramer


class AcmeDialect(PushDialect):
    """STX/ETX framing, LRC, ASCII bodies, push with ACK/NAK."""

    name = "acme"
    summary = "ACME: STX/ETX with DLE escaping, LRC, ASCII bodies, push with ACK/NAK"

    def __init__(self, options: dict[str, object] | None = None) -> None:
        super().__init__(options)
        self._codec = ComposedCodec(StxEtxFramer, Lrc(), AsciiBodyMap())

    def codec(self) -> FrameCodec:
        return self._codec
