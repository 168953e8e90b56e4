"""The emulated camera says how sure it is of each token when told: every read of a told round carries a confidence
for all four tokens (the told ones, the default for the rest), reads of other rounds carry none, and a bad token or
confidence is refused naming the field."""

from __future__ import annotations

import random

import pytest

from harness.bench.devices.translate import CameraConfidence, EventTranslator
from harness.wire.messages import ReaderRearranged, Result, Source
from simulator import events as ev


def _revealed(number: int, faces: str, overlap: bool = False) -> ev.Revealed:
    return ev.Revealed(1.0, number, faces, overlap)


def test_a_told_round_reads_with_its_confidence_and_the_default_for_the_rest() -> None:
    translator = EventTranslator(random.Random(1))
    translator.camera.tell(2, 1, 0.499)
    translator.camera.tell(2, 3, 1)
    ((src, read),) = translator(_revealed(2, "RWRW"))
    assert src is Source.READER and read == Result("RWRW", False, (1.0, 0.499, 1.0, 1.0))
    ((_, other),) = translator(_revealed(3, "RWRW"))
    assert other == Result("RWRW", False)  # a round it was not told about: no confidence, the dialect's default
    assert translator.camera.told(2) == {1: 0.499, 3: 1.0} and translator.camera.told(3) == {}


def test_a_token_hidden_by_an_overlap_keeps_its_zero_unless_told() -> None:
    translator = EventTranslator(random.Random(1))
    translator.camera.tell(1, 0, 0.7)
    ((_, read),) = translator(_revealed(1, "RRWW", overlap=True))
    assert isinstance(read, Result) and read.overlap and "U" in read.faces
    hidden = read.faces.index("U")
    assert read.confidence is not None and read.confidence[hidden] == (0.7 if hidden == 0 else 0.0)


def test_a_re_read_after_the_spread_keeps_the_default() -> None:
    translator = EventTranslator(random.Random(1))
    translator.camera.tell(1, 0, 0.2)
    reports = translator(ev.Rearranged(2.0, 1, "RRWW"))
    assert (Source.READER, ReaderRearranged("RRWW")) in reports


@pytest.mark.parametrize(
    ("token", "confidence", "named"),
    [
        (4, 0.5, "token:"),
        (-1, 0.5, "token:"),
        (0, 1.5, "confidence:"),
        (0, True, "confidence:"),
        (0, "1", "confidence:"),
    ],
)
def test_a_bad_token_or_confidence_is_refused_naming_it(token: int, confidence: float, named: str) -> None:
    with pytest.raises(ValueError) as caught:
        CameraConfidence().tell(1, token, confidence)
    assert str(caught.value).startswith(named)
