"""Hypothesis properties of the codec: round trip, resynchronisation, slicing, corruption."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.messages import BowlOff, Drop, DropItem, Frame, Result, Source
from harness.wire.text import FrameDecoder, encode
from tests.protocol.proto_strategies import frames

FAST = settings(max_examples=150, deadline=None)


def frames_in(results: list[Frame | BadFrame]) -> list[Frame]:
    return [r for r in results if isinstance(r, Frame)]


@FAST
@given(frames())
def test_encode_then_decode_gives_the_same_frame(frame: Frame) -> None:
    raw = encode(frame)
    assert len(raw) <= 128
    assert FrameDecoder().feed(raw) == [frame]


@FAST
@given(frames())
def test_a_frame_survives_being_split_at_every_byte_boundary(frame: Frame) -> None:
    raw = encode(frame)
    for cut in range(len(raw) + 1):
        decoder = FrameDecoder()
        assert decoder.feed(raw[:cut]) + decoder.feed(raw[cut:]) == [frame]
        assert decoder.pending == 0


@FAST
@given(st.lists(frames(), max_size=8), st.data())
def test_a_stream_in_any_slicing_gives_its_frames_in_order(sent: list[Frame], data: st.DataObject) -> None:
    stream = b"".join(encode(f) for f in sent)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    decoder = FrameDecoder()
    got: list[Frame | BadFrame] = []
    for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        got += decoder.feed(stream[a:b])
    assert got == sent


@FAST
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_crash_and_never_make_a_frame(noise: bytes) -> None:
    decoder = FrameDecoder()
    out = decoder.feed(noise) + decoder.feed(b"\r\n")
    assert frames_in(out) == []
    assert all(isinstance(r, BadFrame) for r in out)


garbage_without_start = st.binary(max_size=40).map(lambda b: b.replace(b"$", b""))


@FAST
@given(st.lists(st.tuples(garbage_without_start, frames()), max_size=6))
def test_frames_are_recovered_after_garbage(pieces: list[tuple[bytes, Frame]]) -> None:
    stream = b"".join(g + encode(f) for g, f in pieces)
    assert frames_in(FrameDecoder().feed(stream)) == [f for _g, f in pieces]


@FAST
@given(st.lists(st.tuples(st.binary(max_size=40), frames()), max_size=6))
def test_garbage_with_start_chars_never_invents_a_frame(pieces: list[tuple[bytes, Frame]]) -> None:
    """A ``$`` in the garbage may cut the next frame, but every frame that comes out was sent, in order."""
    stream = b"".join(g + encode(f) for g, f in pieces)
    got = iter(frames_in(FrameDecoder().feed(stream)))
    sent = [f for _g, f in pieces]
    remaining = iter(sent)
    for frame in got:
        assert any(frame == s for s in remaining)  # a subsequence of what was sent


@FAST
@given(frames(), st.data())
def test_a_single_bit_flip_is_never_accepted_as_data(frame: Frame, data: st.DataObject) -> None:
    raw = bytearray(encode(frame))
    bit = data.draw(st.integers(0, len(raw) * 8 - 1))
    raw[bit // 8] ^= 1 << (bit % 8)
    decoder = FrameDecoder()
    out = decoder.feed(bytes(raw)) + decoder.feed(b"\r\n")
    assert frames_in(out) == []


@FAST
@given(frames(), st.integers(1, 200))
def test_truncated_frame_followed_by_a_good_one_reports_the_cut(frame: Frame, keep: int) -> None:
    raw = encode(frame)
    cut = raw[: min(keep, len(raw) - 1)]
    out = FrameDecoder().feed(cut + raw)
    assert frames_in(out) == [frame]
    assert isinstance(out[0], BadFrame)
    assert out[0].reason == "truncated"


@pytest.mark.parametrize(
    ("frame", "names"),
    [
        (Frame(1, Source.BOWL, BowlOff(True, None)), "token"),
        (Frame(1, Source.SHAKER, Drop(DropItem.TOKEN, 7)), "token"),
        (Frame(1, Source.READER, Result("RWX", False)), "faces"),
        (Frame(0, Source.BOWL, BowlOff(False, None)), "seq must be 1..65535"),
        (Frame(1, Source.BOWL, Result("RWRW", False)), "src must be one of READER"),
    ],
)
def test_encoder_refuses_a_bad_frame_naming_what_is_wrong(frame: Frame, names: str) -> None:
    with pytest.raises(EncodeError, match=names):
        encode(frame)
