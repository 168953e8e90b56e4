"""Dialects declare what their protocol carries, and the conformance kit checks exactly that: a polled binary vendor
dialect with no round tags, event times, identities or token sensor passes on its declaration and fails when it
declares more; a framer that loses a byte at a split, a device end that speaks unpolled, a line end that raises and
a check that runs nothing each fail their check."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import ClassVar

import pytest

from harness.wire.dialects import Dialect, DialectError, LineSpec, load_dialect
from harness.wire.dialects.base import EndSettings, FrameCodec, ProtocolCapabilities, ServerEnd, check_parts
from harness.wire.dialects.conformance import (
    CheckResult,
    carried,
    check_dialogue,
    check_fuzz,
    check_round_trip,
    guarded,
    random_frames,
    semantic,
)
from harness.wire.dialects.parts import StxEtxFramer
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import Frame, Heartbeat, Hello, LampOpen, Source, TokensPlaced
from tests.wire.dialects.vendor_poll import (
    VendorDeviceEnd,
    VendorPollDialect,
    VendorServerEnd,
    vendor_codec,
)


def _kit(dialect: Dialect) -> list[CheckResult]:
    return [check_round_trip(dialect, count=400), check_fuzz(dialect, streams=30), check_dialogue(dialect)]


def test_the_shipped_dialects_declare_what_they_carry() -> None:
    ascii_caps = load_dialect("xocdia-ascii").describe()["capabilities"]
    assert ascii_caps == {
        "round_tags": True,
        "event_times": True,
        "identities": True,
        "token_sensor": True,
        "positions": True,
        "problem_reasons": True,
        "confidence": False,
        "betting_time_on_open": True,
        "resend_after_reconnect": False,
        "round_ids": "text",
    }
    assert load_dialect("xocdia-bus").capabilities == ProtocolCapabilities()
    jsonl = load_dialect("xocdia-jsonl").capabilities
    assert jsonl.confidence and jsonl.round_tags and jsonl.event_times and not jsonl.token_sensor
    assert jsonl.resend_after_reconnect  # the reader numbers its reads per run, not per connection


def test_a_bad_declaration_names_the_field_and_the_allowed_values() -> None:
    with pytest.raises(DialectError, match=r"capabilities.round_ids: must be one of text, numeric; got 'u32'"):
        ProtocolCapabilities(round_ids="u32")
    with pytest.raises(DialectError, match=r"capabilities.round_tags: must be true or false; got 'no'"):
        ProtocolCapabilities(round_tags="no")  # type: ignore[arg-type]

    class NotDeclared(VendorPollDialect):
        capabilities: ClassVar[ProtocolCapabilities] = {"round_tags": False}  # type: ignore[assignment]

    with pytest.raises(DialectError, match=r"NotDeclared.capabilities must be a harness.lab.ProtocolCapabilities"):
        check_parts(NotDeclared)


def test_the_random_frames_stay_within_the_declaration() -> None:
    vendor = VendorPollDialect()
    kinds = {cls for _src, cls in carried(vendor)}
    assert Hello not in kinds and TokensPlaced not in kinds and LampOpen in kinds
    frames = random_frames(vendor, random.Random(1), 600)
    assert all(f.round is None and f.at is None for f in frames)
    ids = [str(getattr(f.message, "round", "")) for f in frames if f.src is Source.SERVER]
    assert ids and all(i.isdigit() and int(i) < 2**32 and str(int(i)) == i for i in ids)
    ascii_frames = random_frames(load_dialect("xocdia-ascii"), random.Random(1), 600)
    assert any(f.round for f in ascii_frames) and any(f.at is not None for f in ascii_frames)
    # an undeclared betting time is not compared; a declared one is
    sent, got = Frame(1, Source.SERVER, LampOpen("7", 15000)), Frame(1, Source.SERVER, LampOpen("7", 0))
    assert semantic(sent, vendor.capabilities) == semantic(got, vendor.capabilities)
    assert semantic(sent) != semantic(got)


def test_the_vendor_dialect_passes_the_kit_on_its_declaration() -> None:
    for result in _kit(VendorPollDialect()):
        assert result.passed and result.status == "PASS", (result.name, result.failures)
        assert result.cases > 0


@pytest.mark.parametrize(
    ("declared", "failing"),
    [
        ({"round_tags": True}, {"round trip", "framer fuzz", "dialogue loopback"}),
        ({"event_times": True}, {"round trip", "framer fuzz", "dialogue loopback"}),
        ({"betting_time_on_open": True}, {"round trip", "framer fuzz", "dialogue loopback"}),
        ({"round_ids": "text"}, {"round trip", "framer fuzz", "dialogue loopback"}),
    ],
)
def test_the_same_dialect_declaring_more_than_it_carries_fails(declared: dict[str, object], failing: set[str]) -> None:
    class Boastful(VendorPollDialect):
        capabilities = replace(VendorPollDialect.capabilities, **declared)  # type: ignore[arg-type]

    results = {r.name: r for r in _kit(Boastful())}
    assert {name for name, r in results.items() if not r.passed} == failing, {
        n: r.failures[:1] for n, r in results.items()
    }


class _ByteLostAtSplit(StxEtxFramer):
    """A broken framer: when a frame is cut between two reads, the first byte of the second read is lost."""

    def feed(self, data: bytes) -> list[bytes | BadFrame]:
        return super().feed(data[1:] if self._in and data else data)


class _LosesSplitBytes(VendorPollDialect):
    def codec(self) -> FrameCodec:
        return vendor_codec(_ByteLostAtSplit)


def test_a_framer_that_drops_a_byte_at_a_split_fails_the_fuzz() -> None:
    results = {r.name: r for r in _kit(_LosesSplitBytes())}
    assert results["round trip"].passed  # whole frames in one read survive: only the split cases can tell
    fuzz = results["framer fuzz"]
    assert not fuzz.passed and fuzz.status == "FAIL"
    assert any("split at" in why for why in fuzz.failures), fuzz.failures


class _AnnouncingEnd(VendorDeviceEnd):
    """A device end that announces itself when its port opens (a push habit), before any poll."""

    def open(self, now: float) -> None:
        super().open(now)
        self._out += vendor_codec().encode(Frame(0, self.role, Heartbeat()))


class _Unpolled(VendorPollDialect):
    def device_end(self, line: LineSpec, settings: EndSettings) -> VendorDeviceEnd:
        return _AnnouncingEnd(self.codec(), line, settings)


def test_a_device_end_that_speaks_unpolled_fails_the_poll_dialogue() -> None:
    result = check_dialogue(_Unpolled())
    assert not result.passed
    assert "line bowl: poll dialogue, yet the device end spoke unpolled: 9 byte(s) after it was opened" in (
        result.failures
    )
    assert check_dialogue(VendorPollDialect()).passed  # the same ends, answering only polls


class _RaisingServerEnd(VendorServerEnd):
    def tick(self, now: float) -> list[Source]:
        if self.role is Source.READER:
            raise RuntimeError("reader poll timer exploded")
        return super().tick(now)


class _Raises(VendorPollDialect):
    def server_end(self, line: LineSpec, settings: EndSettings, now: float) -> ServerEnd:
        return _RaisingServerEnd(self, self.codec(), line, settings, now)


def test_a_line_end_that_raises_fails_its_line_and_the_other_lines_still_run() -> None:
    result = check_dialogue(_Raises())
    assert not result.passed
    assert "line reader: raised RuntimeError: reader poll timer exploded" in result.failures
    assert result.cases >= 12  # the bowl, shaker, lamp and console lines still ran and counted


def test_a_check_that_ran_nothing_fails_and_never_passes_on_zero() -> None:
    empty = guarded(CheckResult("empty"), lambda result: None)
    assert not empty.passed and empty.failures == ["ran 0 cases: nothing was checked"]
    assert not CheckResult("never run").passed
    assert not check_round_trip(VendorPollDialect(), count=0).passed

    def explode(result: CheckResult) -> None:
        result.cases += 3
        raise KeyError("lamp")

    boom = guarded(CheckResult("boom"), explode)
    assert boom.cases == 3 and boom.failures == ["raised KeyError: 'lamp'"]
