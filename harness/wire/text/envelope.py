"""The text frame's envelope (docs/protocol.md §2): its size limit and its CRC.

Guarantees: :func:`crc16` is CRC-16/CCITT-FALSE.
"""

from __future__ import annotations

import binascii

MAX_FRAME = 128


def crc16(body: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of ``body``; ``crc16(b"123456789") == 0x29B1``."""
    return binascii.crc_hqx(body, 0xFFFF)
