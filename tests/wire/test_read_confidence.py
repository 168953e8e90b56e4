"""A read's per-token confidence: made valid or refused by name, carried exactly by xocdia-jsonl (the only shipped
dialect that declares it), dropped by xocdia-ascii and xocdia-bus, and read by the golden vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.wire.dialects.jsonl import golden_frame, jsonl_codec
from harness.wire.dialects.registry import load_dialect
from harness.wire.frame_errors import EncodeError
from harness.wire.messages import Frame, ReaderRearranged, Result, Source, default_confidence

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("confidence", "named"),
    [
        ((1.0, 1.0, 1.0), "confidence:"),
        ("0.5,0.5,0.5,0.5", "confidence:"),
        ((1.0, 1.5, 1.0, 1.0), "confidence[1]:"),
        ((1.0, 1.0, -0.1, 1.0), "confidence[2]:"),
        ((1.0, 1.0, 1.0, True), "confidence[3]:"),
        ((float("nan"), 1.0, 1.0, 1.0), "confidence[0]:"),
        ((1.0, "1", 1.0, 1.0), "confidence[1]:"),
    ],
)
def test_a_bad_confidence_is_refused_naming_the_field(confidence: object, named: str) -> None:
    for make in (lambda: Result("RRWW", False, confidence), lambda: ReaderRearranged("RRWW", confidence)):  # type: ignore[arg-type]
        with pytest.raises(ValueError) as caught:
            make()
        assert str(caught.value).startswith(named) and "0 to 1" in str(caught.value)


def test_a_confidence_is_kept_as_four_floats_and_none_means_the_default() -> None:
    read = Result("RUWS", False, [1, 0, 0.25, 1])  # type: ignore[arg-type]
    assert read.confidence == (1.0, 0.0, 0.25, 1.0) and all(type(c) is float for c in read.confidence)
    assert Result("RWRW", False).confidence is None
    assert default_confidence("RUWS") == (1.0, 0.0, 1.0, 1.0)
    with pytest.raises(AttributeError):
        read.confidence = None  # type: ignore[misc]  # frozen


def test_jsonl_carries_each_value_exactly_and_reads_below_the_threshold_as_u() -> None:
    codec = jsonl_codec(0.5)
    sent = Frame(7, Source.READER, Result("RWRW", False, (0.5, 0.499, 0.1234567890123, 1.0)), round="3", at=9)
    raw = codec.encode(sent)
    assert b'"confidence":[0.5,0.499,0.1234567890123,1.0]' in raw
    (got,) = codec.decoder().feed(raw)
    assert isinstance(got, Frame)
    assert got.message == Result("RUUW", False, (0.5, 0.499, 0.1234567890123, 1.0))  # at the threshold: kept
    default = codec.encode(Frame(8, Source.READER, Result("RUWW", True)))
    assert b'"confidence":[1.0,0.0,1.0,1.0]' in default
    (back,) = codec.decoder().feed(default)
    assert isinstance(back, Frame) and back.message == Result("RUWW", True)  # the default decodes to none


def test_jsonl_refuses_a_confidence_that_slipped_past_the_message() -> None:
    read = Result("RWRW", False)
    object.__setattr__(read, "confidence", (1.0, 2.0, 1.0, 1.0))  # built around the check
    with pytest.raises(EncodeError) as caught:
        jsonl_codec().encode(Frame(1, Source.READER, read))
    assert str(caught.value).startswith("result: confidence[1]:")


def test_jsonl_refuses_an_unsure_re_read() -> None:
    codec = jsonl_codec(0.5)
    raw = codec.encode(Frame(2, Source.READER, ReaderRearranged("RWWR", (1.0, 0.4, 1.0, 1.0))))
    (refused,) = codec.decoder().feed(raw)
    assert not isinstance(refused, Frame) and "token 1" in refused.detail


@pytest.mark.parametrize("name", ["xocdia-ascii", "xocdia-bus"])
def test_dialects_that_declare_no_confidence_drop_it(name: str) -> None:
    dialect = load_dialect(name)
    assert dialect.capabilities.confidence is False
    codec = dialect.codec()
    sure = codec.encode(Frame(3, Source.READER, Result("RWRW", False), round="1", at=5))
    unsure = codec.encode(Frame(3, Source.READER, Result("RWRW", False, (0.1, 0.2, 0.3, 0.4)), round="1", at=5))
    assert unsure == sure  # nothing of it on the wire
    (got,) = codec.decoder().feed(unsure)
    assert isinstance(got, Frame) and got.message == Result("RWRW", False)


def test_golden_vectors_give_the_confidence_the_ascii_words_cannot_say() -> None:
    lines = (REPO / "fixtures/protocol/xocdia-jsonl/golden.jsonl").read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    given = [c for c in cases if "confidence" in c]
    assert len(given) >= 4
    codec = jsonl_codec()
    for case in given:
        frame = golden_frame(case)
        assert isinstance(frame.message, Result | ReaderRearranged)
        assert frame.message.confidence == tuple(float(c) for c in case["confidence"])
        assert codec.decoder().feed(case["bytes"].encode("utf-8")) == [frame]
    with pytest.raises(ValueError, match="line 4: confidence"):
        golden_frame({"seq": 1, "message": "READER RESULT faces=RRRR overlap=0", "confidence": [2, 1, 1, 1]}, 4)
    with pytest.raises(ValueError, match="only a result or rearranged"):
        golden_frame({"seq": 0, "message": "SRV ACK of=3", "confidence": [1, 1, 1, 1]}, 5)
