"""The decoder remembers the message part of every valid frame (``harness.wire.text._KNOWN``) to decode repeats
quickly; that memory must never change a verdict. With the message part already seen, every variant of the frame's
header (version, seq) and of its trailing round tag and event time decodes exactly as with nothing remembered."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.wire import text as codec
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame
from harness.wire.text import FrameDecoder, encode, parse_frame
from harness.wire.text.envelope import crc16
from tests.protocol.proto_strategies import frames

VERSIONS = [b"1", b"01", b"2", b"", b"+1"]
SEQS = [b"0", b"00", b"01", b"1", b"7", b"65535", b"65536", b"99999", b"123456", b"+1", b"-1", b"1_0", b""]
TAILS = [
    b"",
    b" at=5",
    b" at=0",
    b" at=00",
    b" at=01",
    b" at=",
    b" at=-1",
    b" at=" + b"9" * 32,
    b" at=" + b"9" * 33,
    b" at=5 at=6",
    b" round=R1",
    b" round=R1 at=5",
    b" at=5 round=R1",
    b" at=5 ",
    b" x=1 at=5",
]


def framed(body: bytes) -> bytes:
    return b"$%s*%04X\r\n" % (body, crc16(body))


def decoded(raw: bytes, *, remembered: bytes | None) -> tuple[Frame | BadFrame, list[Frame | BadFrame]]:
    """``raw`` through parse_frame and through a decoder (twice in one feed), after forgetting every message
    part and then remembering that of the frame ``remembered`` (if any)."""
    codec._KNOWN.clear()
    if remembered is not None:
        assert isinstance(parse_frame(remembered), Frame)
    return parse_frame(raw), FrameDecoder().feed(raw + raw)


@settings(max_examples=300, deadline=None)
@given(frames(), st.sampled_from(VERSIONS), st.sampled_from(SEQS), st.sampled_from(TAILS), st.booleans())
def test_a_remembered_message_part_changes_no_verdict(
    frame: Frame, version: bytes, seq: bytes, tail: bytes, strip_at: bool
) -> None:
    raw = encode(frame)
    _version, _seq, rest = raw[1:-7].split(b" ", 2)
    if strip_at and frame.at is not None:
        rest = rest.rpartition(b" at=")[0]
    variant = framed(version + b" " + seq + b" " + rest + tail)
    assert decoded(variant, remembered=raw) == decoded(variant, remembered=None)
