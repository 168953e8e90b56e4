"""The server's codec against the golden vectors of fixtures/protocol (written by the protocol engineer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gameserver.protocol import BadFrame, Decoder, Frame, crc16, encode, parse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol"


def _load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]


GOLDEN = _load("golden.jsonl")
INVALID = _load("invalid.jsonl")


def test_crc_check_value() -> None:
    assert crc16(b"123456789") == 0x29B1


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_frames_decode(case: dict[str, Any]) -> None:
    raw = case["frame"].encode("ascii")
    frame = parse(raw)
    assert frame == Frame(case["seq"], case["src"], case["type"], tuple(case["fields"].items()))


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_frames_encode_byte_for_byte(case: dict[str, Any]) -> None:
    raw = encode(case["seq"], case["src"], case["type"], tuple(case["fields"].items()))
    assert raw == case["frame"].encode("ascii")


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_invalid_frames_are_refused_with_the_owed_nak(case: dict[str, Any]) -> None:
    result = parse(case["frame"].encode("ascii"))
    assert isinstance(result, BadFrame)
    assert (result.kind, result.nak) == (case["error"], case["nak"])


def _stream_reports(chunks: list[bytes]) -> list[dict[str, str]]:
    decoder = Decoder()
    out: list[dict[str, str]] = []
    for chunk in chunks:
        for item in decoder.feed(chunk):
            out.append({"frame": item_to_text(item)} if isinstance(item, Frame) else {"error": item.kind})
    merged: list[dict[str, str]] = []
    for report in out:  # a run of garbage split over reads may be reported several times
        if report == {"error": "garbage"} and merged and merged[-1] == report:
            continue
        merged.append(report)
    return merged


def item_to_text(frame: Frame) -> str:
    return encode(frame.seq, frame.src, frame.type, frame.fields).decode("ascii")


@pytest.mark.parametrize("size", [1, 3, 7, 64, 10_000])
def test_stream_resynchronises_in_any_slicing(size: int) -> None:
    data = (FIXTURES / "stream.bin").read_bytes()
    expected = _load("stream.jsonl")
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    assert _stream_reports(chunks) == expected


@pytest.mark.parametrize(
    "args",
    [
        (1, "BOWL", "WOBBLE", ()),
        (0, "BOWL", "ON", ()),
        (3, "BOWL", "HB", ()),
        (1, "BOWL", "OFF", (("touch", "2"), ("token", "-"))),
    ],
)
def test_encode_refuses_what_the_catalogue_refuses(args: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError):
        encode(*args)
