"""Line settings: the byte-time formula and the validation of each field."""

from __future__ import annotations

import pytest

from harness.wire.transports.line import DEFAULT_LINE, LineSettings, LineSettingsError


@pytest.mark.parametrize(
    ("line", "bits"),
    [
        (LineSettings(9600, 8, "N", 1), 10),
        (LineSettings(115200, 7, "E", 1), 10),
        (LineSettings(9600, 8, "E", 2), 12),
        (LineSettings(9600, 8, "O", 1), 11),
        (LineSettings(9600, 8, "M", 1), 11),
        (LineSettings(9600, 8, "S", 1), 11),
        (LineSettings(300, 5, "N", 1.5), 7.5),
        (LineSettings(1200, 6, "N", 2), 9),
    ],
)
def test_byte_time_is_start_data_parity_and_stop_bits_over_baud(line: LineSettings, bits: float) -> None:
    assert line.bits_per_byte == bits
    assert line.byte_time_s == pytest.approx(bits / line.baud)


def test_the_default_is_115200_8n1_without_gap() -> None:
    assert LineSettings(115200, 8, "N", 1, 0.0) == DEFAULT_LINE
    assert DEFAULT_LINE.byte_time_s == pytest.approx(86.806e-6, rel=1e-4)
    assert DEFAULT_LINE.describe() == "115200 8N1"


def test_a_frame_takes_n_byte_times_plus_the_gaps_between_its_bytes() -> None:
    line = LineSettings(9600)
    assert line.frame_time_s(40) == pytest.approx(0.041667, abs=1e-6)  # the 40-byte frame at 9600 baud
    assert line.frame_time_s(0) == 0.0
    gapped = LineSettings(9600, inter_byte_gap_s=0.001)
    assert gapped.step_s == pytest.approx(10 / 9600 + 0.001)
    assert gapped.frame_time_s(40) == pytest.approx(40 * 10 / 9600 + 39 * 0.001)
    assert gapped.describe() == "9600 8N1 gap 1 ms"


@pytest.mark.parametrize(
    ("kwargs", "field", "allowed"),
    [
        ({"baud": 0}, "baud", "[50, 12000000]"),
        ({"baud": 9600.5}, "baud", "whole number"),
        ({"baud": True}, "baud", "whole number"),
        ({"bytesize": 9}, "bytesize", "5, 6, 7, 8"),
        ({"bytesize": 4}, "bytesize", "5, 6, 7, 8"),
        ({"parity": "X"}, "parity", "N (none), E (even), O (odd), M (mark), S (space)"),
        ({"parity": "none"}, "parity", "N (none)"),
        ({"stopbits": 3}, "stopbits", "1, 1.5, 2"),
        ({"stopbits": 0}, "stopbits", "1, 1.5, 2"),
        ({"inter_byte_gap_s": -0.001}, "inter_byte_gap_s", "[0, 1]"),
        ({"inter_byte_gap_s": "1ms"}, "inter_byte_gap_s", "seconds"),
    ],
)
def test_a_bad_setting_names_its_field_and_the_allowed_values(
    kwargs: dict[str, object], field: str, allowed: str
) -> None:
    with pytest.raises(LineSettingsError) as info:
        LineSettings(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
    assert str(info.value).startswith(f"line settings: {field}: ")
    assert allowed in str(info.value)
    assert isinstance(info.value, ValueError)


def test_pyserial_settings_round_trip() -> None:
    line = LineSettings(19200, 7, "E", 1.5)
    kwargs = line.pyserial()
    assert kwargs == {"baudrate": 19200, "bytesize": 7, "parity": "E", "stopbits": 1.5}
    assert LineSettings.from_pyserial(**kwargs) == line
    assert LineSettings.from_pyserial(9600.0, 8, "N", 2).baud == 9600
