"""xocdia-bus golden and invalid vectors (fixtures/protocol/xocdia-bus/) against the harness codec and the reference
server's independent implementation, and the CRC against its catalogue check value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gameserver.dialects.bus import wire as bus_wire
from gameserver.protocol import BadFrame as ServerBadFrame
from harness.wire.dialects.bus import BusDialect, golden_frame
from harness.wire.dialects.bus.codec import CODEC
from harness.wire.dialects.parts import crc16_modbus
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol" / "xocdia-bus"


def _load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]


GOLDEN = _load("golden.jsonl")
INVALID = _load("invalid.jsonl")


def harness_frame(v: dict[str, Any]) -> Frame:
    return golden_frame(v)


def test_crc16_modbus_check_values() -> None:
    assert crc16_modbus(b"123456789") == 0x4B37
    assert bus_wire.crc16_modbus(b"123456789") == 0x4B37


def test_vectors_cover_every_message_type_and_option() -> None:
    kinds = {(v["src"], v["type"]) for v in GOLDEN}
    for src in ("BOWL", "SHAKER", "READER", "LAMP", "CONSOLE"):
        assert (src, "HELLO") in kinds and (src, "HB") in kinds
    for t in ("OPEN", "CLOSE", "RESHAKE", "PAUSE", "RESUME", "VOID", "POLL"):
        assert ("SRV", t) in kinds
    reports = {("BOWL", "ON"), ("BOWL", "OFF"), ("SHAKER", "START"), ("SHAKER", "END"), ("SHAKER", "DROP")}
    reports |= {("READER", "RESULT"), ("READER", "REARRANGED"), ("CONSOLE", "TOKENS"), ("CONSOLE", "PROBLEM")}
    reports |= {("CONSOLE", "REASSEMBLED"), ("CONSOLE", "REARRANGED"), ("CONSOLE", "RESOLVED")}
    assert reports <= kinds
    assert {("LAMP", "ACK"), ("LAMP", "NAK")} <= kinds
    tagged = [v for v in GOLDEN if "round" in v["fields"] and v["src"] != "SRV"]
    timed = [v for v in GOLDEN if "at" in v["fields"]]
    assert tagged and timed and any("round" in v["fields"] and "at" in v["fields"] for v in GOLDEN)
    assert {e["error"] for e in INVALID} >= {"crc", "syntax", "type", "field", "truncated", "garbage"}


@pytest.mark.parametrize("v", GOLDEN, ids=[v["name"] for v in GOLDEN])
def test_golden_harness_codec(v: dict[str, Any]) -> None:
    raw = bytes.fromhex(v["hex"])
    frame = harness_frame(v)
    assert CODEC.encode(frame) == raw
    assert CODEC.decoder().feed(raw) == [frame]


@pytest.mark.parametrize("v", GOLDEN, ids=[v["name"] for v in GOLDEN])
def test_golden_gameserver(v: dict[str, Any]) -> None:
    raw = bytes.fromhex(v["hex"])
    fields = tuple(v["fields"].items())
    assert bus_wire.encode(v["addr"], v["src"], v["type"], v["seq"], fields) == raw
    got = bus_wire.Decoder().feed(raw)
    assert got == [bus_wire.BusFrame(v["addr"], v["src"], v["type"], v["seq"], fields)]


@pytest.mark.parametrize("v", INVALID, ids=[v["name"] for v in INVALID])
def test_invalid_harness_codec(v: dict[str, Any]) -> None:
    out = CODEC.decoder().feed(bytes.fromhex(v["hex"]))
    assert isinstance(out[0], BadFrame) and out[0].reason.value == v["error"], out
    assert all(isinstance(x, Frame) for x in out[1:]) and len(out) == 1 + v["then"], out


@pytest.mark.parametrize("v", INVALID, ids=[v["name"] for v in INVALID])
def test_invalid_gameserver(v: dict[str, Any]) -> None:
    out = bus_wire.Decoder().feed(bytes.fromhex(v["hex"]))
    assert isinstance(out[0], ServerBadFrame) and out[0].kind == v["error"], out
    assert all(isinstance(x, bus_wire.BusFrame) for x in out[1:]) and len(out) == 1 + v["then"], out


def test_gameserver_encoder_refuses_what_the_bus_cannot_carry() -> None:
    bad = [
        (1, "BOWL", "OFF", 1, (("touch", "1"), ("token", "-"))),
        (2, "BOWL", "ON", 1, ()),
        (4, "SRV", "OPEN", 0, (("round", "17"), ("ms", "1"))),
        (1, "SRV", "CLOSE", 1, (("round", "17"),)),
        (4, "SRV", "OPEN", 1, (("round", "17"), ("ms", "86400001"))),
        (1, "BOWL", "ON", 1, (("at", "01"),)),
        (1, "BOWL", "ON", 1, (("at", "1"), ("round", "17"))),
        (1, "BOWL", "HELLO", 1, (("id", "B"), ("proto", "1"), ("fw", "f"), ("round", "1"))),
        (7, "BOWL", "ON", 1, ()),
    ]
    for args in bad:
        with pytest.raises(ValueError):
            bus_wire.encode(*args)


def test_dialect_parses_its_golden_file_for_the_conformance_kit() -> None:
    dialect = BusDialect()
    pairs = dialect.parse_golden((FIXTURES / "golden.jsonl").read_text())
    assert len(pairs) == len(GOLDEN)
    assert all(CODEC.encode(frame) == raw for frame, raw in pairs)
    with pytest.raises(ValueError, match="line 1"):
        dialect.parse_golden('{"type": "ON"}')
