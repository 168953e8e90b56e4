"""The frames of ``xocdia-bus`` (docs/dialects/xocdia-bus.md): a start byte, a length byte, a binary body and a
CRC-16/MODBUS, low byte first. The body is ``ADDR TYPE SEQ`` and the message's fields.

- :class:`BusFramer`: the parts library's length-prefixed framer that *hunts* for frames: a candidate whose check
  fails costs only its start byte (the scan resumes at the next start byte inside it), so a cut or corrupted frame
  never takes the frame after it down with it.
- :class:`BusMessageMap`: bodies ↔ semantic frames (one type byte per message, fields as fixed bytes or
  length-prefixed text, the round tag as text and the event time as a uint32 with a long form).
- :class:`Poll`: the bus master's poll request, the one message this dialect adds to the protocol's catalogue.

The numbers (addresses, type codes, :class:`Poll`) are in :mod:`~harness.wire.dialects.bus.catalogue`, the body's
encoding and decoding in :mod:`~harness.wire.dialects.bus.encode` and :mod:`~harness.wire.dialects.bus.decode`, the
framer in :mod:`~harness.wire.dialects.bus.framer`; this module assembles them into the codec.
"""

from __future__ import annotations

from functools import partial

from harness.wire.dialects.base import ComposedCodec, MessageMap
from harness.wire.dialects.bus.decode import decode_body
from harness.wire.dialects.bus.encode import encode_body
from harness.wire.dialects.bus.framer import BusFramer
from harness.wire.dialects.parts import Crc16Modbus
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame

__all__ = ["CODEC", "BusMessageMap", "bus_codec"]


class BusMessageMap(MessageMap):
    """Bodies ↔ semantic frames (docs/dialects/xocdia-bus.md §3-§4)."""

    def encode(self, frame: Frame) -> bytes:
        return encode_body(frame)

    def decode(self, body: bytes) -> Frame | BadFrame:
        return decode_body(body)


def bus_codec() -> ComposedCodec:
    """The bus codec: :class:`BusFramer` (hunting on CRC-16/MODBUS), CRC-16/MODBUS and :class:`BusMessageMap`."""
    integrity = Crc16Modbus()
    return ComposedCodec(partial(BusFramer, integrity, _well_formed), integrity, BusMessageMap())


def _well_formed(body: bytes) -> bool:
    return isinstance(decode_body(body), Frame)


CODEC = bus_codec()
