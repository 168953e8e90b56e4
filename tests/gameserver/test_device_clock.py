"""Protocol revision 1.2's device time: the codec accepts ``at=<ms>`` (after the optional round tag), the
per-line :class:`DeviceClock` maps it to engine time, and the gateway's ``timed_report`` fills
``TableReport.happened_at``. Expected times are worked by hand in the comments."""

from __future__ import annotations

import pytest

from gameserver.device_clock import DeviceClock
from gameserver.events import ReportKind, TableReport
from gameserver.gateway import timed_report, to_report
from gameserver.protocol import BadFrame, Frame, crc16, encode, parse

OFF = (("touch", "0"), ("token", "-"))


def frame(src: str, type_: str, fields: tuple[tuple[str, str], ...], seq: int = 3) -> Frame:
    parsed = parse(encode(seq, src, type_, fields))
    assert isinstance(parsed, Frame)
    return parsed


# ------------------------------------------------------------------ the codec
@pytest.mark.parametrize(
    ("fields", "round_tag", "at"),
    [
        ((*OFF, ("at", "0")), None, 0),
        ((*OFF, ("at", "123456789")), None, 123456789),
        ((*OFF, ("round", "7"), ("at", "5000")), "7", 5000),
        ((*OFF, ("round", "7")), "7", None),
        (OFF, None, None),
    ],
)
def test_the_device_time_is_optional_and_follows_the_round_tag(
    fields: tuple[tuple[str, str], ...], round_tag: str | None, at: int | None
) -> None:
    f = frame("BOWL", "OFF", fields)
    assert (f.round_tag, f.device_time_ms) == (round_tag, at)


def test_a_message_without_catalogue_fields_takes_the_device_time() -> None:
    assert frame("SHAKER", "START", (("at", "42"),)).device_time_ms == 42


@pytest.mark.parametrize(
    "tail",
    [
        b" at=007",  # leading zeros
        b" at=-5",  # a sign
        b" at=+5",
        b" at=1.5",
        b" at=abc",
        b" at=5 round=7",  # wrong order: round before at
        b" at=5 at=6",  # twice
        b" round=7 at=5 x=1",  # anything after at
    ],
)
def test_a_malformed_device_time_is_nak_field(tail: bytes) -> None:
    body = b"1 9 BOWL OFF touch=0 token=-" + tail
    raw = b"$" + body + b"*" + f"{crc16(body):04X}".encode() + b"\r\n"
    result = parse(raw)
    assert isinstance(result, BadFrame) and (result.kind, result.nak, result.seq) == ("field", "field", 9)


def test_only_device_data_messages_carry_a_device_time() -> None:
    with pytest.raises(ValueError, match="do not match"):
        encode(1, "BOWL", "HELLO", (("id", "B1"), ("proto", "1"), ("fw", "1.0"), ("at", "5")))
    with pytest.raises(ValueError, match="do not match"):
        encode(1, "SRV", "CLOSE", (("round", "3"), ("at", "5")))
    assert frame("BOWL", "HELLO", (("id", "B1"), ("proto", "1"), ("fw", "1.0"))).device_time_ms is None
    with pytest.raises(ValueError, match="do not match"):  # a value is at most 32 characters (§2)
        encode(1, "BOWL", "ON", (("at", "1" * 33),))
    assert frame("BOWL", "ON", (("at", "9" * 32),)).device_time_ms == int("9" * 32)


# ------------------------------------------------------------------ the clock
def test_a_delayed_frame_after_a_prompt_one_is_dated_by_the_prompt_ones_offset() -> None:
    clock = DeviceClock()
    # prompt: at 1.000 s device, arrives 50.010 -> offset 49.010, happened 50.010 (= its arrival)
    assert clock.observe(1000, 50.010) == pytest.approx(50.010)
    # delayed: at 2.000 s, arrives 51.400 (candidate 49.400 > 49.010) -> happened 2.000 + 49.010 = 51.010
    assert clock.observe(2000, 51.400) == pytest.approx(51.010)
    assert clock.offset_s == pytest.approx(49.010)
    # a faster frame improves the estimate: at 3.000, arrives 52.005 -> offset 49.005, happened 52.005
    assert clock.observe(3000, 52.005) == pytest.approx(52.005)
    assert clock.offset_s == pytest.approx(49.005)


def test_the_estimate_is_never_later_than_the_arrival() -> None:
    clock = DeviceClock()
    # the first frame is delayed (nothing to compare with): it is taken as prompt, happened = arrival
    assert clock.observe(10_000, 100.0) == pytest.approx(100.0)
    # a prompt one then shows the first was 0.3 s late: offset 90.0 -> 89.7; happened 10.5 + 89.7 = 100.2
    assert clock.observe(10_500, 100.2) == pytest.approx(100.2)
    for at_ms, arrival in [(11_000, 100.9), (11_100, 100.75), (12_000, 101.7001)]:
        happened = clock.observe(at_ms, arrival)
        assert happened is not None and happened <= arrival
    # after those, offset = min(90.0, 89.7, 89.9, 89.65, 89.7001) = 89.65
    assert clock.offset_s == pytest.approx(89.65)


def test_reset_on_hello_forgets_the_offset() -> None:
    clock = DeviceClock()
    assert clock.observe(5000, 20.0) == pytest.approx(20.0)  # offset 15.0
    clock.reset()  # the device restarted: its clock is back near 0
    assert clock.offset_s is None
    # at 0.000 arrives 60.0 -> offset 60.0; without the reset it would have been min(15.0, 60.0) = 15.0
    assert clock.observe(0, 60.0) == pytest.approx(60.0)
    assert clock.observe(500, 60.7) == pytest.approx(60.5)  # 0.5 + 60.0


def test_a_frame_without_device_time_gives_none_and_teaches_nothing() -> None:
    clock = DeviceClock()
    assert clock.observe(None, 10.0) is None
    assert clock.offset_s is None
    with pytest.raises(ValueError, match="must be >= 0 ms"):
        clock.observe(-1, 10.0)


# ------------------------------------------------------------------ frames -> reports
def test_timed_report_dates_the_report_and_resets_on_hello() -> None:
    clock = DeviceClock()
    on = timed_report("bowl", frame("BOWL", "ON", (("round", "4"), ("at", "5000"))), clock, 30.0)
    assert on == TableReport(ReportKind.BOWL_ON, "bowl", round_tag="4", happened_at=30.0)  # offset 25.0
    off = timed_report("bowl", frame("BOWL", "OFF", (*OFF, ("at", "6000"))), clock, 31.5)
    assert off == TableReport(ReportKind.BOWL_OFF, "bowl", detail="token -", happened_at=31.0)  # 6.0 + 25.0
    hello = frame("BOWL", "HELLO", (("id", "B1"), ("proto", "1"), ("fw", "1.0")))
    assert timed_report("bowl", hello, clock, 40.0) is None and clock.offset_s is None
    untimed = timed_report("bowl", frame("BOWL", "OFF", OFF), clock, 41.0)
    assert untimed == to_report("bowl", frame("BOWL", "OFF", OFF)) and untimed is not None
    assert untimed.happened_at is None
