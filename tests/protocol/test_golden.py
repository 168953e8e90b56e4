"""The golden vectors of fixtures/protocol/ against the codec, and the CRC against a bit-by-bit reference."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.wire.frame_errors import BadFrame, EncodeError, ErrorReason
from harness.wire.messages import CATALOGUE, MESSAGE_TYPES, BowlOn, Frame, Hello, LampClose, Source
from harness.wire.text import FrameDecoder, encode, parse_frame
from harness.wire.text.envelope import crc16

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "protocol"


def _load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]


GOLDEN = _load("golden.jsonl")
INVALID = _load("invalid.jsonl")


def reference_crc(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit, as written in docs/protocol.md §3 (independent of binascii)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def test_crc_check_value_from_the_crc_catalogue() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert reference_crc(b"123456789") == 0x29B1


@pytest.mark.parametrize("vector", GOLDEN, ids=[v["name"] for v in GOLDEN])
def test_golden_frame_is_built_from_its_parts(vector: dict[str, Any]) -> None:
    """The vector is self-consistent by the rules of §2/§3 alone (no codec involved)."""
    fields = "".join(f" {k}={v}" for k, v in vector["fields"].items())
    body = f"{vector['ver']} {vector['seq']} {vector['src']} {vector['type']}{fields}".encode()
    assert vector["frame"].encode() == b"$" + body + b"*" + vector["crc"].encode() + b"\r\n"
    assert int(vector["crc"], 16) == reference_crc(body)


@pytest.mark.parametrize("vector", GOLDEN, ids=[v["name"] for v in GOLDEN])
def test_golden_frame_decodes_and_reencodes_byte_for_byte(vector: dict[str, Any]) -> None:
    raw = vector["frame"].encode("ascii")
    out = FrameDecoder().feed(raw)
    assert len(out) == 1
    frame = out[0]
    assert isinstance(frame, Frame), frame
    assert (frame.version, frame.seq, frame.src.value, frame.message.TYPE) == (
        vector["ver"],
        vector["seq"],
        vector["src"],
        vector["type"],
    )
    assert encode(frame) == raw


def test_every_message_of_the_catalogue_has_a_golden_vector() -> None:
    covered = {(v["src"], v["type"]) for v in GOLDEN}
    device_pairs = {(src.value, t) for (src, t), cls in CATALOGUE.items() if len(cls.SOURCES) == 1}
    assert device_pairs <= covered
    decoded = {type(f.message) for v in GOLDEN if isinstance(f := parse_frame(v["frame"].encode()), Frame)}
    assert decoded == set(MESSAGE_TYPES)


@pytest.mark.parametrize("vector", INVALID, ids=[v["name"] for v in INVALID])
def test_invalid_frame_is_refused_with_the_documented_reason(vector: dict[str, Any]) -> None:
    out = FrameDecoder().feed(vector["frame"].encode("ascii"))
    assert len(out) == 1
    error = out[0]
    assert isinstance(error, BadFrame)
    assert error.reason == ErrorReason(vector["error"])
    assert error.nak == vector["nak"]


def _merge_garbage(items: list[dict[str, str]]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for item in items:
        if item.get("error") == "garbage" and out and out[-1].get("error") == "garbage":
            continue
        out.append(item)
    return out


def _as_records(results: list[Frame | BadFrame]) -> list[dict[str, str]]:
    return [{"frame": encode(r).decode()} if isinstance(r, Frame) else {"error": r.reason.value} for r in results]


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 10_000])
def test_stream_vector_gives_the_documented_frames_and_errors_in_any_slicing(chunk: int) -> None:
    data = (FIXTURES / "stream.bin").read_bytes()
    expected = _load("stream.jsonl")
    decoder = FrameDecoder()
    got: list[Frame | BadFrame] = []
    for i in range(0, len(data), chunk):
        got += decoder.feed(data[i : i + chunk])
    assert _merge_garbage(_as_records(got)) == expected


def test_every_frame_quoted_in_the_protocol_document_is_valid() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text()
    quoted = re.findall(r"(\$1 [^*\n`]*\*[0-9A-F]{4})\\r\\n", text)
    assert len(quoted) >= 20
    for frame in quoted:
        result = parse_frame(frame.encode() + b"\r\n")
        assert isinstance(result, Frame), (frame, result)


def test_a_round_tag_round_trips_on_device_messages_only() -> None:  # protocol §6 "Round tag"
    raw = encode(Frame(4, Source.BOWL, BowlOn(), round="R000017"))
    assert raw.startswith(b"$1 4 BOWL ON round=R000017*")
    decoded = parse_frame(raw)
    assert isinstance(decoded, Frame) and decoded.round == "R000017" and decoded.message == BowlOn()
    untagged = parse_frame(encode(Frame(4, Source.BOWL, BowlOn())))
    assert isinstance(untagged, Frame) and untagged.round is None
    for bad in (
        Frame(1, Source.BOWL, Hello("BOWL-1", 1, "x"), round="17"),
        Frame(2, Source.SERVER, LampClose("17"), round="17"),
        Frame(4, Source.BOWL, BowlOn(), round="has space"),
    ):
        with pytest.raises(EncodeError, match="round"):
            encode(bad)
