"""The decoder reads a one-field message whose value changes from frame to frame (``ACK of=<seq>``, the lamp's
``CLOSE round=<id>``) from its type's template (``known_frames.TEMPLATES``); that shortcut must never change a
verdict. Every variant of such a frame (its header, its value, what follows the value) decodes exactly as the full
checks decode it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.wire.messages import Ack, Frame, LampClose, Source
from harness.wire.text import FrameDecoder, parse_frame
from harness.wire.text.decoder import _parse_checked
from harness.wire.text.envelope import crc16
from harness.wire.text.known_frames import KNOWN, TEMPLATES

HEADS = [*sorted(TEMPLATES), b"SRV ACK off", b"SRV  ACK of", b"SRV HB of", b"SRV OPEN round", b"BOWL OFF touch"]
HEADERS = [b"1 0", b"1 1", b"1 7", b"1 65535", b"1 65536", b"1 01", b"2 1", b"01 1", b"1 -1", b"1  1"]
VALUES = [b"1", b"0", b"65535", b"65536", b"01", b"-1", b"R1", b"r-2.x:y_z", b"x" * 32, b"x" * 33, b"", b"a b"]
TAILS = [b"", b" at=5", b" round=R1", b"=1", b" ", b"\n", b"\xff"]


def framed(body: bytes) -> bytes:
    return b"$%s*%04X\r\n" % (body, crc16(body))


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(HEADS),
    st.sampled_from(HEADERS),
    st.one_of(st.sampled_from(VALUES), st.binary(max_size=40)),
    st.sampled_from(TAILS),
)
def test_a_templated_frame_decodes_as_the_full_checks_decode_it(
    head: bytes, header: bytes, value: bytes, tail: bytes
) -> None:
    raw = framed(header + b" " + head + b"=" + value + tail)
    KNOWN.clear()  # nothing remembered: only the template may shortcut the full checks
    assert parse_frame(raw) == _parse_checked(raw)
    if b"$" not in raw[1:] and b"\n" not in raw[:-1]:  # one frame to the stream decoder too
        KNOWN.clear()
        assert FrameDecoder().feed(raw) == [_parse_checked(raw)]


def test_acks_and_lamp_closes_with_new_values_decode_and_are_remembered() -> None:
    KNOWN.clear()
    for n in (1, 2, 65535):
        assert parse_frame(framed(b"1 0 SRV ACK of=%d" % n)) == Frame(0, Source.SERVER, Ack(n))
    assert parse_frame(framed(b"1 9 SRV CLOSE round=R7")) == Frame(9, Source.SERVER, LampClose("R7"))
    assert set(KNOWN) == {b"SRV ACK of=1", b"SRV ACK of=2", b"SRV ACK of=65535", b"SRV CLOSE round=R7"}
