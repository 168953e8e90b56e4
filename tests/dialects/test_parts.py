"""The dialect parts library: framers split and resynchronise, integrity checks catch what they promise."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.wire.dialects.base import Framer
from harness.wire.dialects.parts import (
    Crc16CcittFalse,
    Crc16Modbus,
    DelimitedFramer,
    LengthPrefixedFramer,
    Lrc,
    NoIntegrity,
    StxEtxFramer,
    crc16_modbus,
)
from harness.wire.frame_errors import BadFrame, ErrorReason


def test_check_values_from_the_crc_catalogue() -> None:
    # the "check" column of the CRC catalogue: the CRC of the ASCII bytes "123456789"
    assert crc16_modbus(b"123456789") == 0x4B37
    assert Crc16Modbus().seal(b"123456789")[-2:] == bytes((0x37, 0x4B))  # low byte first, as Modbus RTU sends it
    assert Crc16CcittFalse().seal(b"123456789")[-2:] == bytes((0x29, 0xB1))
    assert Lrc().seal(b"\x01\x02\x03")[-1] == 0xFA  # -(1+2+3) mod 256


@pytest.mark.parametrize("check", [Crc16Modbus(), Crc16CcittFalse(), Lrc()])
@given(body=st.binary(min_size=1, max_size=64), bit=st.integers(min_value=0))
def test_every_single_bit_flip_is_caught(check: Crc16Modbus | Crc16CcittFalse | Lrc, body: bytes, bit: int) -> None:
    sealed = bytearray(check.seal(body))
    assert check.open(bytes(sealed)) == body
    bit %= len(sealed) * 8
    sealed[bit // 8] ^= 1 << (bit % 8)
    assert check.open(bytes(sealed)) is None


def test_no_integrity_passes_bytes_through() -> None:
    assert NoIntegrity().open(NoIntegrity().seal(b"x")) == b"x"


def _framers() -> list[tuple[str, type[Framer] | object]]:
    return [
        ("delimited", lambda: DelimitedFramer(b"\r\n", b"$")),
        ("length", LengthPrefixedFramer),
        ("stx", StxEtxFramer),
    ]


@pytest.mark.parametrize(("name", "make"), _framers())
@given(
    bodies=st.lists(
        st.binary(min_size=1, max_size=40).filter(lambda b: b"\r\n" not in b and b"$" not in b), min_size=1, max_size=3
    ),
    cut=st.integers(min_value=0),
)
def test_frames_survive_any_split(name: str, make: object, bodies: list[bytes], cut: int) -> None:
    wrapper = make()  # type: ignore[operator]
    stream = b"".join(wrapper.wrap(b) for b in bodies)
    cut %= len(stream) + 1
    reader = make()  # type: ignore[operator]
    got = reader.feed(stream[:cut]) + reader.feed(stream[cut:])
    assert got == bodies, name


@pytest.mark.parametrize(("name", "make"), _framers())
@given(junk=st.binary(max_size=300))
def test_garbage_never_raises_and_every_byte_is_accounted_for(name: str, make: object, junk: bytes) -> None:
    reader = make()  # type: ignore[operator]
    out = reader.feed(junk)
    assert all(isinstance(item, bytes | BadFrame) for item in out), name


def test_stx_etx_escapes_its_own_control_bytes() -> None:
    framer = StxEtxFramer()
    wire = framer.wrap(b"\x02\x03\x10A")
    assert wire == b"\x02\x10\x42\x10\x43\x10\x50A\x03"
    assert StxEtxFramer().feed(wire) == [b"\x02\x03\x10A"]


def test_a_frame_cut_short_by_a_new_start_is_reported_truncated() -> None:
    out = DelimitedFramer(b"\r\n", b"$").feed(b"$abc$def\r\n")
    assert isinstance(out[0], BadFrame) and out[0].reason is ErrorReason.TRUNCATED
    assert out[1] == b"def"


def test_a_bad_length_resynchronises_on_the_next_start_byte() -> None:
    framer = LengthPrefixedFramer(max_frame=8)
    good = framer.wrap(b"ok")
    out = framer.feed(b"\xa5\xff" + good)
    assert isinstance(out[0], BadFrame) and out[0].reason is ErrorReason.SYNTAX
    assert out[-1] == b"ok"


def test_an_over_long_line_without_a_start_byte_is_one_error_and_its_tail_is_not_a_frame() -> None:
    framer = DelimitedFramer(b"\n", max_frame=8)
    out = framer.feed(b"0123456789abcdef")
    out += framer.feed(b"ghij\nok\n")
    assert [type(item) for item in out] == [BadFrame, bytes]
    assert isinstance(out[0], BadFrame) and out[0].reason is ErrorReason.TOO_LONG
    assert out[1] == b"ok"
