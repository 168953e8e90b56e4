"""The conformance kit and a read's confidence: the random frames carry one only where the dialect declares
``confidence``, the round trip demands it back exactly, and a codec that loses it, changes it, reads a sure token
``U`` or follows no one threshold fails the round trip, named."""

from __future__ import annotations

import random
from dataclasses import replace

from harness.wire.dialects import load_dialect
from harness.wire.dialects.base import ComposedCodec, FrameCodec
from harness.wire.dialects.conformance import check_dialogue, check_fuzz, check_round_trip, random_frames, semantic
from harness.wire.dialects.jsonl import JsonlMap, JsonlReaderDialect, LineFramer
from harness.wire.dialects.parts import NoIntegrity
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame, ReaderRearranged, Result, Source


class _Forgetful(JsonlMap):
    """Writes every read as if it were sure (the default confidence): the confidence is lost on the wire."""

    def encode(self, frame: Frame) -> bytes:
        msg = frame.message
        if isinstance(msg, Result | ReaderRearranged) and msg.confidence is not None:
            frame = replace(frame, message=replace(msg, confidence=None))
        return super().encode(frame)


class _Rounding(JsonlMap):
    """Reads every confidence back to two decimals: the values change on the way."""

    def decode(self, body: bytes) -> Frame | BadFrame:
        got = super().decode(body)
        msg = got.message if isinstance(got, Frame) else None
        if isinstance(got, Frame) and isinstance(msg, Result | ReaderRearranged) and msg.confidence is not None:
            a, b, c, d = (round(v, 2) for v in msg.confidence)
            rounded = (a, b, c, d)
            return replace(got, message=replace(msg, confidence=rounded))
        return got


class _Fickle(JsonlMap):
    """A threshold drawn anew for every object: no one threshold explains its reads."""

    def __init__(self) -> None:
        super().__init__()
        self._rng = random.Random(7)

    def decode(self, body: bytes) -> Frame | BadFrame:
        self.min_confidence = self._rng.random()
        return super().decode(body)


class _Blind(JsonlMap):
    """Reads token 0 of every result ``U``, however sure the camera was of it."""

    def decode(self, body: bytes) -> Frame | BadFrame:
        got = super().decode(body)
        if isinstance(got, Frame) and isinstance(got.message, Result):
            return replace(got, message=replace(got.message, faces="U" + got.message.faces[1:]))
        return got


def _with(mapping: JsonlMap) -> JsonlReaderDialect:
    dialect = JsonlReaderDialect()
    codec: FrameCodec = ComposedCodec(LineFramer, NoIntegrity(), mapping)
    dialect._codec = codec  # the dialect's own ends and the kit use it
    return dialect


def test_random_frames_carry_a_confidence_only_where_it_is_declared() -> None:
    reads = (Result, ReaderRearranged)
    for name, declared in (("xocdia-jsonl", True), ("xocdia-ascii", False), ("xocdia-bus", False)):
        frames = [f for f in random_frames(load_dialect(name), random.Random(3), 300) if isinstance(f.message, reads)]
        assert frames
        assert all((f.message.confidence is not None) is declared for f in frames)  # type: ignore[attr-defined]
    unsure = [f.message for f in random_frames(load_dialect("xocdia-jsonl"), random.Random(3), 300, unsure=True)]
    assert any(isinstance(m, Result) and m.confidence and min(m.confidence) not in (0.0, 1.0) for m in unsure)


def test_semantic_compares_the_confidence_only_where_declared() -> None:
    jsonl = load_dialect("xocdia-jsonl").capabilities
    ascii_ = load_dialect("xocdia-ascii").capabilities
    sure, unsure = Frame(1, *_read((1.0, 1.0, 1.0, 1.0))), Frame(1, *_read((0.7, 1.0, 1.0, 1.0)))
    assert semantic(sure, ascii_) == semantic(unsure, ascii_)
    assert semantic(sure, jsonl) != semantic(unsure, jsonl)
    assert semantic(Frame(1, *_read(None)), jsonl) == semantic(sure, jsonl)  # none means the default


def _read(confidence: tuple[float, float, float, float] | None) -> tuple[Source, Result]:
    return Source.READER, Result("RWRW", False, confidence)


def test_the_shipped_jsonl_codec_passes_at_any_threshold() -> None:
    for level in (0.0, 0.5, 0.9, 1.0):
        dialect = load_dialect("xocdia-jsonl", {"min_confidence": level})
        for result in (check_round_trip(dialect, count=600), check_fuzz(dialect, streams=20), check_dialogue(dialect)):
            assert result.status == "PASS", (level, result.name, result.failures)


def test_a_codec_that_loses_the_confidence_fails_the_round_trip() -> None:
    result = check_round_trip(_with(_Forgetful()), count=300)
    assert result.status == "FAIL" and result.failed > 20
    assert any("the confidence must come back as sent" in f for f in result.failures), result.failures


def test_a_codec_that_changes_the_confidence_fails_the_round_trip() -> None:
    result = check_round_trip(_with(_Rounding()), count=300)
    assert result.status == "FAIL"
    assert any("the confidence must come back as sent" in f for f in result.failures), result.failures


def test_a_codec_that_follows_no_one_threshold_fails_the_round_trip() -> None:
    result = check_round_trip(_with(_Fickle()), count=600)
    assert result.status == "FAIL"
    assert any("no one threshold explains the reads" in f for f in result.failures), result.failures


def test_a_codec_that_reads_a_sure_token_u_fails_the_round_trip() -> None:
    result = check_round_trip(_with(_Blind()), count=300)
    assert result.status == "FAIL"
    assert any("came back U" in f for f in result.failures), result.failures
