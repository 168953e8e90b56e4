"""xocdia-jsonl's codec on both sides: the harness's (harness.wire.dialects.jsonl) and the reference server's
(gameserver.dialects.jsonl), each against the golden and invalid vectors of fixtures/protocol/xocdia-jsonl, a
hypothesis round trip, and a decoder fuzz (garbage, every split point, two objects in one read, bit flips, invalid
UTF-8, deep nesting, huge numbers): never raises, never yields an object that was not sent."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gameserver.dialects.jsonl.line as gs
from gameserver.dialects import DIALECTS
from gameserver.protocol import BadFrame as ServerBadFrame
from gameserver.protocol import Frame as ServerFrame
from harness.wire.dialects import DialectError, load_dialect, plan_lines
from harness.wire.dialects.jsonl import MAX_SEQ, MAX_TS, JsonlReaderDialect, golden_frame, jsonl_codec
from harness.wire.dialects.registry import names
from harness.wire.frame_errors import BadFrame, EncodeError
from harness.wire.messages import (
    Ack,
    BowlOn,
    Frame,
    Heartbeat,
    Hello,
    LampOpen,
    Nak,
    NakReason,
    ReaderRearranged,
    Result,
    Source,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol" / "xocdia-jsonl"


def _load(name: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


GOLDEN = _load("golden.jsonl")
INVALID = _load("invalid.jsonl")


def _raw(case: dict[str, Any]) -> bytes:
    return bytes.fromhex(case["hex"]) if "hex" in case else case["bytes"].encode("utf-8")


def _server_frame(case: dict[str, Any]) -> ServerFrame:
    """The server's frame a golden vector names: its ``message`` text read as docs/protocol.md words."""
    src, type_, *pairs = case["message"].split(" ")
    fields = tuple((k, v) for k, _, v in (p.partition("=") for p in pairs))
    return ServerFrame(case["seq"], src, type_, fields)


def _server_decode(data: bytes) -> list[ServerFrame | ServerBadFrame]:
    lines = gs._Lines().feed(data)
    return [gs.parse(item) if isinstance(item, bytes) else item for item in lines]


# --- golden and invalid vectors ----------------------------------------------------------------------------------


def test_vectors_cover_every_object_and_reason() -> None:
    kinds = {c["message"].split(" ")[1] for c in GOLDEN}
    assert kinds == {"HELLO", "RESULT", "REARRANGED", "HB", "ACK", "NAK"}
    assert {c["error"] for c in INVALID} == {"syntax", "too_long", "version", "type", "field"}
    assert any(c["canonical"] is False for c in GOLDEN)


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_harness(case: dict[str, Any]) -> None:
    codec = jsonl_codec()
    frame = golden_frame(case)
    assert codec.decoder().feed(_raw(case)) == [frame]
    if case["canonical"]:
        assert codec.encode(frame) == _raw(case)


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_gameserver(case: dict[str, Any]) -> None:
    assert _server_decode(_raw(case)) == [_server_frame(case)]
    if case["canonical"] and case["dir"] == "server->reader":
        expected = _server_frame(case)
        assert gs.encode(expected.type, expected.fields) == _raw(case)


def test_golden_through_the_dialects_parser() -> None:
    dialect = load_dialect("xocdia-jsonl")
    vectors = dialect.parse_golden((FIXTURES / "golden.jsonl").read_text(encoding="utf-8"))
    assert len(vectors) == sum(1 for c in GOLDEN if c["canonical"])
    assert all(dialect.codec().encode(f) == raw for f, raw in vectors)


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_invalid_harness(case: dict[str, Any]) -> None:
    (item,) = jsonl_codec().decoder().feed(_raw(case))
    assert isinstance(item, BadFrame), item
    assert item.reason.value == case["error"], item.detail
    assert (item.nak.value if item.nak else None) == case["nak"]


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_invalid_gameserver(case: dict[str, Any]) -> None:
    (item,) = _server_decode(_raw(case))
    assert isinstance(item, ServerBadFrame), item
    assert (item.kind, item.nak) == (case["error"], case["nak"])


# --- the dialect and its options ---------------------------------------------------------------------------------


def test_registered_on_both_sides() -> None:
    assert "xocdia-jsonl" in names()
    assert DIALECTS["xocdia-jsonl"] is gs.JsonlLine
    assert isinstance(load_dialect("xocdia-jsonl"), JsonlReaderDialect)


def test_lines_reader_on_tcp_others_on_the_companion() -> None:
    lines = plan_lines(load_dialect("xocdia-jsonl"))
    assert [(line.name, line.medium, line.dialect.name) for line in lines] == [
        ("reader", "tcp", "xocdia-jsonl"),
        ("bowl", "serial", "xocdia-ascii"),
        ("shaker", "serial", "xocdia-ascii"),
        ("lamp", "serial", "xocdia-ascii"),
        ("console", "serial", "xocdia-ascii"),
    ]
    described = load_dialect("xocdia-jsonl").describe()
    assert described["carries"] == ["READER"] and described["companion"] == "xocdia-ascii"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"companion": "no-such-dialect"}, "devices.options.companion: unknown dialect 'no-such-dialect'; allowed:"),
        ({"companion": "xocdia-jsonl"}, "devices.options.companion: must name another dialect"),
        ({"companion": 3}, "devices.options.companion: must name another dialect"),
        ({"companion_options": {"baud": 1}}, "devices.options.companion_options: unknown option 'baud'"),
        ({"companion_options": [1]}, "devices.options.companion_options: must be a mapping"),
        ({"min_confidence": 1.5}, "devices.options.min_confidence: must be a number 0..1"),
        ({"min_confidence": True}, "devices.options.min_confidence: must be a number 0..1"),
        ({"lens": "wide"}, "devices.options: unknown option 'lens' for dialect 'xocdia-jsonl'"),
    ],
)
def test_bad_options_name_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(DialectError) as caught:
        load_dialect("xocdia-jsonl", options)
    assert str(caught.value).startswith(field), str(caught.value)
    if "companion:" in field:
        assert "xocdia-ascii" in str(caught.value)  # the allowed values are listed


def test_min_confidence_option() -> None:
    strict = load_dialect("xocdia-jsonl", {"min_confidence": 0.95}).codec()
    line = (
        b'{"v":1,"src":"READER","type":"result","seq":2,"faces":"RWRW","overlap":false,"confidence":[0.99,0.9,1,1]}\n'
    )
    (frame,) = strict.decoder().feed(line)
    assert isinstance(frame, Frame) and frame.message == Result("RURW", False, (0.99, 0.9, 1.0, 1.0))
    (lenient,) = jsonl_codec(0.0).decoder().feed(line)
    assert isinstance(lenient, Frame) and lenient.message == Result("RWRW", False, (0.99, 0.9, 1.0, 1.0))


@pytest.mark.parametrize(
    "frame",
    [
        Frame(1, Source.BOWL, BowlOn()),
        Frame(1, Source.SERVER, LampOpen("12", 1000)),
        Frame(1, Source.SERVER, Hello("SRV-1", 1, "x")),
        Frame(0, Source.READER, Ack(3)),
        Frame(0, Source.READER, Result("RWRW", False)),
        Frame(1, Source.READER, Result("RWRX", False)),
        Frame(1, Source.READER, ReaderRearranged("RWUW")),
        Frame(MAX_SEQ + 1, Source.READER, Result("RWRW", False)),
        Frame(1, Source.READER, Result("RWRW", False), at=MAX_TS + 1),
        Frame(1, Source.READER, Result("RWRW", False), round="a b"),
        Frame(1, Source.READER, Hello("READER-1", 1, "x"), round="1"),
        Frame(1, Source.READER, Result("RWRW", False), version=2),
    ],
)
def test_encoder_refuses_what_the_dialect_cannot_carry(frame: Frame) -> None:
    with pytest.raises(EncodeError):
        jsonl_codec().encode(frame)


# --- round trip ---------------------------------------------------------------------------------------------------

_VALUE = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-", min_size=1, max_size=32)
_SEQ = st.integers(1, MAX_SEQ)
_TAG = st.none() | _VALUE
_AT = st.none() | st.integers(0, MAX_TS)
_READS = st.builds(
    lambda seq, m, r, a: Frame(seq, Source.READER, m, round=r, at=a),
    _SEQ,
    st.builds(Result, st.text("RWSU", min_size=4, max_size=4), st.booleans())
    | st.builds(ReaderRearranged, st.text("RW", min_size=4, max_size=4)),
    _TAG,
    _AT,
)
_HELLO = st.builds(Hello, _VALUE, st.integers(0, 65535), _VALUE)
FRAMES = (
    _READS
    | st.builds(
        lambda seq, m: Frame(seq, Source.READER, m), _SEQ, st.builds(Hello, _VALUE, st.integers(0, 65535), _VALUE)
    )
    | st.builds(lambda s: Frame(0, s, Heartbeat()), st.sampled_from([Source.READER, Source.SERVER]))
    | st.builds(lambda of: Frame(0, Source.SERVER, Ack(of)), _SEQ)
    | st.builds(lambda of, r: Frame(0, Source.SERVER, Nak(of, r)), _SEQ, st.sampled_from(list(NakReason)))
)


@settings(max_examples=400)
@given(FRAMES)
def test_round_trip(frame: Frame) -> None:
    raw = jsonl_codec().encode(frame)
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1 and len(raw) <= 4096
    assert jsonl_codec().decoder().feed(raw) == [frame]


@settings(max_examples=200)
@given(st.lists(FRAMES, min_size=1, max_size=6), st.data())
def test_round_trip_both_sides_any_slicing(frames: list[Frame], data: st.DataObject) -> None:
    stream = b"".join(jsonl_codec().encode(f) for f in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    decoder, lines = jsonl_codec().decoder(), gs._Lines()
    got: list[Any] = []
    served: list[Any] = []
    for piece in pieces:
        got += decoder.feed(piece)
        served += [gs.parse(x) if isinstance(x, bytes) else x for x in lines.feed(piece)]
    assert got == frames
    assert [(f.src, f.type) for f in served] == [(f.src.value, f.message.TYPE) for f in frames]


def test_conformance_kit_passes() -> None:
    conformance = pytest.importorskip("harness.wire.dialects.conformance")
    dialect = load_dialect("xocdia-jsonl")
    results = [
        conformance.check_round_trip(dialect, count=500),
        conformance.check_fuzz(dialect, streams=60, integrity=dialect.integrity_checked),
        conformance.check_dialogue(dialect),
    ]
    for result in results:
        assert result.passed, (result.name, result.failures)


# --- fuzz -----------------------------------------------------------------------------------------------------------


def _frames_of(items: list[Any]) -> list[Any]:
    return [i for i in items if not isinstance(i, BadFrame | ServerBadFrame)]


def _both(chunks: list[bytes]) -> tuple[list[Any], list[Any]]:
    decoder, lines = jsonl_codec().decoder(), gs._Lines()
    got: list[Any] = []
    served: list[Any] = []
    for chunk in chunks:
        got += decoder.feed(chunk)
        served += [gs.parse(x) if isinstance(x, bytes) else x for x in lines.feed(chunk)]
    return _frames_of(got), _frames_of(served)


def _sample(rng: random.Random) -> list[Frame]:
    reads = [
        Frame(rng.randint(1, MAX_SEQ), Source.READER, Result("".join(rng.choice("RWSU") for _ in range(4)), True),
              round=str(rng.randint(1, 10**6)), at=rng.randint(0, MAX_TS)),
        Frame(rng.randint(1, 9999), Source.READER, ReaderRearranged("".join(rng.choice("RW") for _ in range(4))),
              round="R" + str(rng.randint(1, 99)), at=rng.randint(0, 10**9)),
        Frame(rng.randint(1, 9), Source.READER, Hello("READER-0001", 1, "cam-2.4")),
        Frame(0, Source.SERVER, Ack(rng.randint(1, MAX_SEQ))),
        Frame(0, Source.READER, Heartbeat()),
    ]  # fmt: skip
    rng.shuffle(reads)
    return reads[:3]


def test_fuzz_split_points_two_per_read_and_garbage() -> None:
    rng = random.Random("xocdia-jsonl-fuzz")
    codec = jsonl_codec()
    for n in range(60):
        trio = _sample(rng)
        raws = [codec.encode(f) for f in trio]
        stream = b"".join(raws)
        for cut in range(len(stream) + 1) if n < 6 else [rng.randint(0, len(stream)) for _ in range(20)]:
            got, served = _both([stream[:cut], stream[cut:]])
            assert got == trio
            assert [f.type for f in served] == [f.message.TYPE for f in trio]
        got, _ = _both([raws[0] + raws[1]])
        assert got == trio[:2]
        garbage = bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))
        got, served = _both([garbage, b"\n" + stream])  # garbage is cut off by a line end
        assert got == trio and len(served) == 3
        got, served = _both([garbage])
        assert got == [] and served == []


def test_fuzz_bit_flips_never_raise_and_stay_in_the_schema() -> None:
    """No integrity check on the line (TCP checks bytes): a flipped bit may still be a valid object, but whatever
    comes out is one the schema allows, and the two sides agree on whether there is one."""
    rng = random.Random("xocdia-jsonl-flips")
    codec = jsonl_codec()
    for _ in range(300):
        frame = _sample(rng)[0]
        raw = bytearray(codec.encode(frame))
        for _flip in range(rng.randint(1, 3)):
            bit = rng.randrange((len(raw) - 1) * 8)  # not the final '\n'
            raw[bit // 8] ^= 1 << (bit % 8)
        got, served = _both([bytes(raw)])
        assert len(got) == len(served) <= raw.count(b"\n")
        for item in got:  # within the schema: it encodes, and decodes back to itself
            assert codec.decoder().feed(codec.encode(item)) == [item]


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe\xfd\n",
        b'{"v":1,"src":"READER","type":"hb","x":"\xc3\x28"}\n',
        b'{"v":1,"src":"READER","type":"hb","x":"\xed\xa0\x80"}\n',  # an encoded surrogate is not UTF-8
        b"[" * 100_000 + b"\n",
        b"{" * 3000 + b"\n",
        b'{"a":' * 1500 + b"1" + b"}" * 1500 + b"\n",
        b'{"v":1,"src":"READER","type":"result","seq":' + b"9" * 4000 + b"}\n",
        b'{"v":1e999999,"src":"READER","type":"hb"}\n',
        b'{"v":1,"src":"READER","type":"hb","seq":-0}\n',
        b'{"v":1,"src":["READER"],"type":{"hb":1},"seq":[3]}\n',
        b'{"v":1,"src":"READER","type":["result"],"seq":3}\n',
        b'{"v":1.0,"src":"READER","type":"hb"}\n',
        b'{"v":1,"src":"READER","type":"hb"}' * 200 + b"\n",
        b"\x00" * 5000,
        b"\n" * 50,
        b"\r\n\r\n",
    ],
)
def test_fuzz_hostile_lines(data: bytes) -> None:
    got, served = _both([data])
    assert got == [] and served == []
    got, served = _both([data[i : i + 7] for i in range(0, len(data), 7)])
    assert got == [] and served == []


def test_fuzz_random_json_values() -> None:
    """Random JSON objects with the schema's keys and wrong values: each side refuses or accepts the same lines."""
    rng = random.Random("xocdia-jsonl-values")
    values: list[Any] = [None, True, False, 0, 1, -1, 2**31, 2**53, 1.5, 1e308, "", "x", "READER", "SRV", "RWRW",
                         "result", "hb", [], [1.0, 1.0, 1.0, 1.0], {}, {"v": 1}]  # fmt: skip
    keys = ["v", "src", "type", "seq", "faces", "overlap", "confidence", "round", "ts", "id", "proto", "fw", "of"]
    accepted = 0
    for _ in range(3000):
        obj = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(1, len(keys)))}
        obj.update({"v": 1, "src": "READER"} if rng.random() < 0.7 else {})
        line = json.dumps(obj).encode() + b"\n"
        got, served = _both([line])
        assert len(got) == len(served), line
        accepted += len(got)
    assert accepted < 3000


def test_lines_are_plain_ascii_json() -> None:
    raw = jsonl_codec().encode(Frame(7, Source.READER, Result("RWRW", False), round="12", at=123456))
    assert raw.isascii() and json.loads(raw)["ts"] == 123456
