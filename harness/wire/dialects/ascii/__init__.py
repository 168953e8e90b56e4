"""``xocdia-ascii``, the ASCII protocol of docs/protocol.md as a dialect: ``$``-delimited text frames with CRC-16 in
hex (the text form of :mod:`harness.wire.text`), one device per line, the push dialogue of
:mod:`harness.wire.dialects.push`. :class:`AsciiBodyMap` is that text body as a message map, for a lab dialect that
keeps these bodies inside its own framing."""

from harness.wire.dialects.ascii.dialect import AsciiBodyMap, AsciiCodec, AsciiDialect

__all__ = ["AsciiBodyMap", "AsciiCodec", "AsciiDialect"]
