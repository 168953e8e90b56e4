"""The server's decoder remembers the message part of every valid frame (``protocol._SEEN``) to decode repeats
quickly; that memory must never change a verdict. With the message part of a golden frame already seen, every
variant of its header (version, seq) and of its trailing round tag and device time decodes exactly as with
nothing remembered."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from gameserver import protocol
from gameserver.protocol import BadFrame, Decoder, Frame, crc16, parse

GOLDEN = [
    json.loads(line)["frame"].encode("ascii")
    for line in (Path(__file__).resolve().parents[2] / "fixtures/protocol/golden.jsonl").read_text().splitlines()
    if line.strip()
]
VERSIONS = [b"1", b"01", b"2"]
SEQS = [b"0", b"00", b"01", b"1", b"65535", b"65536", b"99999999999", b"+1"]
TAILS = [b"", b" at=5", b" at=0", b" at=01", b" at=", b" at=" + b"9" * 32, b" at=" + b"9" * 33, b" at=5 at=6",
         b" round=R1", b" round=R1 at=5", b" at=5 round=R1", b" at=5 "]  # fmt: skip


def framed(body: bytes) -> bytes:
    return b"$%s*%04X\r\n" % (body, crc16(body))


def decoded(raw: bytes, *, remembered: bytes | None) -> tuple[Frame | BadFrame, list[Frame | BadFrame]]:
    protocol._SEEN.clear()
    if remembered is not None:
        assert isinstance(parse(remembered), Frame)
    return parse(raw), Decoder().feed(raw + raw)


@pytest.mark.parametrize("golden", GOLDEN)
def test_a_remembered_message_part_changes_no_verdict(golden: bytes) -> None:
    _version, _seq, rest = golden[1:-7].split(b" ", 2)
    for version, seq, tail in itertools.product(VERSIONS, SEQS, TAILS):
        variant = framed(version + b" " + seq + b" " + rest + tail)
        assert decoded(variant, remembered=golden) == decoded(variant, remembered=None), variant
