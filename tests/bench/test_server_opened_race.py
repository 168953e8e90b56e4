"""Server-opened rounds without races: the lamp's OPEN and the adapter's report that the round opened travel apart
(a vendor's events come on another connection than its lamp line), so either may come first. The rig takes the
first and reconciles the other: an OPEN whose report has not come yet is held, then shown as of its arrival; a
report whose OPEN has not come yet is matched to it when it comes. The two must come within half the betting
period of each other, or the round is passed over, and an OPEN the server never reports (sent again from before
the table was there) is never shown.

The adapters here are the reference ones with their round-open reports held back (and whatever follows them in
the log, so the log keeps its order) until ``hold_back_s`` after they first read them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import simpy
import yaml

from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.clock import BenchTimeout
from harness.bench.config import Bench, load_bench
from harness.bench.devices.lamp import HeldOpen, OpenVerdict, OrdinalLampDriver
from harness.bench.rig import Rig
from harness.files import FIXTURES
from harness.records import RoundEvent, RoundEventKind
from harness.wire.messages import LampClose, LampOpen
from simulator.events import RoundOpened
from simulator.lamp import Lamp, LampState

HERE = "tests.bench.test_server_opened_race"
BETTING_S = 1.0  # both shipped benches' betting period: a report may come up to 0.5 s after its OPEN


class HeldBack:
    """A log's round-open reports held back: each OPENED event (and every event after it) is released
    ``hold_s`` after it was first read, for the first ``rounds`` openings (all when None)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        self.hold_s = float(options.get("hold_back_s", 0.0))
        limit = options.get("hold_back_rounds")
        self.rounds = None if limit is None else int(limit)
        self.released: dict[str, float] = {}  # when each opening was first let through, by round id
        self._seen: list[float] = []  # when each event of the log was first read

    def visible(self, events: list[RoundEvent], now: float) -> list[RoundEvent]:
        """The prefix of ``events`` (the whole log so far) the harness may see at ``now``."""
        self._seen += [now] * (len(events) - len(self._seen))
        openings = 0
        for place, event in enumerate(events):
            if event.kind != RoundEventKind.OPENED:
                continue
            openings += 1
            held = self.rounds is None or openings <= self.rounds
            if held and now - self._seen[place] < self.hold_s:
                return events[:place]
            self.released.setdefault(event.round_id, now)
        return events


class LateInProcess(InProcessAdapter):
    """The in-process reference engine whose round-open reports come late (:class:`HeldBack`); option
    ``stale_open``: a round id whose OPEN the server's lamp line sends at start, as a server sends again the OPEN
    of a round that opened before the table was there (the engine never reports that round)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self.held_back = HeldBack(self.options)
        self._clock: Callable[[], float] = lambda: 0.0

    def start(self, setup: ServerSetup) -> None:
        super().start(setup)
        self._clock = lambda: float(setup.env.now)
        stale = self.options.get("stale_open")
        if stale is not None:
            for port in self._ports:
                if port.name == "lamp":
                    port.line.send("OPEN", (("round", str(stale)), ("ms", "1000")), self._clock())
            self._arm()

    def round_events(self) -> list[RoundEvent]:
        return self.held_back.visible(super().round_events(), self._clock())

    def round_events_since(self, n: int) -> list[RoundEvent]:
        return self.round_events()[n:]


class LateHttp(HttpAdapter):
    """The reference server as a process whose round-open reports come late (:class:`HeldBack`)."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        super().__init__(options)
        self.held_back = HeldBack(self.options)
        self._clock: Callable[[], float] = lambda: 0.0

    def start(self, setup: ServerSetup) -> None:
        super().start(setup)
        self._clock = lambda: float(setup.env.now)

    def round_events(self) -> list[RoundEvent]:
        return self.held_back.visible(super().round_events(), self._clock())

    def round_events_since(self, n: int) -> list[RoundEvent]:
        return self.round_events()[n:]


def _bench(tmp_path: Path, name: str, adapter: str, line: dict[str, Any] | None = None, **options: Any) -> Bench:
    """The shipped bench ``name`` with a server that opens rounds itself, through ``adapter`` (a class of this
    module) with these options; ``line``: its ``devices.line``."""
    raw = yaml.safe_load((FIXTURES / "benches" / f"{name}.yaml").read_text(encoding="utf-8"))
    assert raw["timing"]["betting_s"] == BETTING_S
    raw["server"].update({"opens_rounds": "server", "adapter": f"{HERE}:{adapter}", "options": options})
    if line is not None:
        raw["devices"]["line"] = line
    raw["timing"]["step_timeout_s"] = 10.0
    path = tmp_path / f"{name}-late.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return load_bench(str(path))


def _open_arrival(rig: Rig, rid: str) -> float:
    """When the first OPEN of round ``rid`` reached the table's lamp (trace time: the bench's clock from 0)."""
    wanted = f"round={rid}".encode()
    # a line's bytes may come in several reads: each line's received bytes joined, the frame's time its last chunk's
    received: dict[str, bytes] = {}
    for r in rig.recorder.records:
        if r.dir != "rx":
            continue
        received[r.port] = received.get(r.port, b"") + r.data
        *frames, received[r.port] = received[r.port].split(b"\n")
        if any(b"OPEN" in f and wanted in f for f in frames):
            return r.t
    raise AssertionError(f"no OPEN of round {rid} on the lamp line")


def _shown(rig: Rig, number: int) -> RoundOpened:
    return next(e for e in rig.truth if isinstance(e, RoundOpened) and e.round == number)


def _play_two_rounds(rig: Rig) -> list[tuple[str, float]]:
    """Open, bet on and settle two rounds; returns each round's id and when open_round returned."""
    played = []
    rig.adapter.connect("alice")
    for _ in range(2):
        rid = rig.open_round()
        played.append((rid, rig.now))
        assert rig.bet("alice", "big", 100).accepted
        assert rig.play_to_end(rid).kind == RoundEventKind.SETTLED
    return played


def test_an_open_that_comes_before_its_report_is_shown_from_its_arrival(tmp_path: Path) -> None:
    bench = _bench(tmp_path, "in-process", "LateInProcess", hold_back_s=0.3)
    with Rig.build(bench, {"alice": 10_000}) as rig:
        played = _play_two_rounds(rig)
        adapter = rig.adapter
        assert isinstance(adapter, LateInProcess)
        for number, (rid, returned) in enumerate(played, start=1):
            arrived, reported = _open_arrival(rig, rid), adapter.held_back.released[rid]
            assert reported - arrived >= 0.25  # the OPEN came first, by about the hold
            assert returned - reported <= 0.05  # the round opened at once when the report came
            shown = _shown(rig, number)
            assert shown.t == pytest.approx(reported, abs=0.05)
            assert shown.deadline == pytest.approx(arrived + BETTING_S, abs=0.02)  # betting counted from the OPEN
        assert rig.driver.rounds == {played[0][0]: 1, played[1][0]: 2} and not rig.driver.held
        assert not rig.verdict().differences


def test_a_report_that_comes_before_its_open_is_matched_to_it(tmp_path: Path) -> None:
    # a slow line (9600 baud) brings each OPEN to the lamp a while after the engine reported the opening
    bench = _bench(tmp_path, "in-process", "LateInProcess", line={"baud": 9600})
    with Rig.build(bench, {"alice": 10_000}) as rig:
        played = _play_two_rounds(rig)
        for number, (rid, returned) in enumerate(played, start=1):
            arrived, read = _open_arrival(rig, rid), rig._server_rounds.opened_at[rid]
            assert arrived - read >= 0.03  # the report was read first
            assert returned - arrived <= 0.05
            assert _shown(rig, number).t == pytest.approx(arrived, abs=0.02)
        assert rig.driver.rounds == {played[0][0]: 1, played[1][0]: 2} and not rig.driver.held
        assert not rig.verdict().differences


def test_a_report_later_than_half_the_betting_period_passes_its_round_over(tmp_path: Path) -> None:
    bench = _bench(tmp_path, "in-process", "LateInProcess", hold_back_s=0.7, hold_back_rounds=1)
    with Rig.build(bench, {"alice": 10_000}) as rig:
        rig.adapter.connect("alice")
        rid = rig.open_round()
        adapter = rig.adapter
        assert isinstance(adapter, LateInProcess)
        first = next(iter(adapter.held_back.released))
        assert rid != first and rig.driver.rounds == {rid: 1}  # the next round is round 1
        assert [a.detail for a in rig.actions if a.what == "skip"] == [
            f"round {first}: its OPEN and the server's report of it came too far apart to play"
        ]
        assert rig.bet("alice", "big", 100).accepted
        assert rig.play_to_end(rid).kind == RoundEventKind.SETTLED
        assert not rig.driver.held


def test_an_open_the_server_never_reports_is_never_shown(tmp_path: Path) -> None:
    bench = _bench(tmp_path, "in-process", "LateInProcess", stale_open="99")
    with Rig.build(bench, {"alice": 10_000}) as rig:
        rid = rig.open_round()
        assert _open_arrival(rig, "99") < _open_arrival(rig, rid)  # the stale OPEN reached the lamp first
        assert rid != "99" and rig.driver.rounds == {rid: 1}
        rig.play_to_end(rid)
        assert "99" not in rig.driver.rounds and not rig.driver.held  # let go at the end of its hold
        with pytest.raises(BenchTimeout):  # and never played: there is no round 99 to wait for
            rig.run_until(lambda: "99" in rig.driver.rounds, "round 99", timeout_s=2.0)


def test_a_server_process_whose_reports_come_after_its_opens(tmp_path: Path) -> None:
    bench = _bench(tmp_path, "local-hil", "LateHttp", hold_back_s=0.3)
    with Rig.build(bench, {"alice": 10_000}) as rig:
        played = _play_two_rounds(rig)
        adapter = rig.adapter
        assert isinstance(adapter, LateHttp)
        for number, (rid, returned) in enumerate(played, start=1):
            arrived, reported = _open_arrival(rig, rid), adapter.held_back.released[rid]
            # the order, not wall-clock spans (a loaded machine stretches those): the OPEN came first, the round
            # opened on the report, and its betting counts from the OPEN's arrival
            assert arrived < reported <= returned
            assert _shown(rig, number).deadline == pytest.approx(arrived + BETTING_S, abs=0.1)
        assert not rig.verdict().differences


def test_a_held_open_changes_nothing_until_shown_and_then_counts_from_its_arrival() -> None:
    driver = OrdinalLampDriver(Lamp(simpy.Environment()))
    verdicts = {"7": OpenVerdict.HOLD, "8": OpenVerdict.HOLD}
    driver.server_opened = verdicts.__getitem__
    driver.apply(LampOpen("7", 1000), 2.0)
    driver.apply(LampOpen("7", 1000), 2.1)  # sent again: the first arrival is kept
    assert driver.held == {"7": HeldOpen(LampOpen("7", 1000), 2.0)}
    assert (driver.lamp.state, driver.rounds) == (LampState.OFF, {})
    driver.show_held("7")
    signal = driver.lamp.signal
    assert (signal.state, signal.round, signal.deadline, driver.held) == (LampState.BETTING_OPEN, 1, 3.0, {})
    driver.apply(LampOpen("8", 1000), 5.0)
    driver.apply(LampClose("8"), 6.0)  # the round went on without the table: its hold is overtaken
    assert driver.held == {"8": HeldOpen(LampOpen("8", 1000), 5.0, overtaken=True)}
    assert driver.lamp.signal == signal and driver.drop_held("8") is not None and driver.drop_held("8") is None
    with pytest.raises(KeyError):
        driver.show_held("8")


def test_a_round_the_server_opened_on_its_own_is_in_play_at_a_kill(tmp_path: Path) -> None:
    bench = _bench(tmp_path, "in-process", "LateInProcess", hold_back_s=0.0)
    with Rig.build(bench, {"alice": 10_000}) as rig:
        rig.adapter.connect("alice")
        first = rig.open_round()
        assert rig.play_to_end(first).kind == RoundEventKind.SETTLED

        def opened_twice() -> bool:
            return sum(e.kind == RoundEventKind.OPENED for e in rig.adapter.round_events()) >= 2

        rig.run_until(opened_twice, "the server to open its next round on its own timer")
        second = [e.round_id for e in rig.adapter.round_events() if e.kind == RoundEventKind.OPENED][1]
        assert second not in rig.opened  # no step asked for it
        rig.kill_server(lambda: None)
        assert rig.kills[-1].in_play == (second,)  # its cancel at the restart is then expected, not a GP-3 defect
