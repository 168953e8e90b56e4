"""xocdia-bus dialogue in virtual time: the harness's device end against a bus master, either the harness's own
server end or the reference server's BusLine, over an in-memory exchange that can lose or repeat frames: reports
delivered exactly once through lost replies, lost acknowledgements and duplicates, lamp writes acknowledged and
never acted on twice, a silent device reported down once, a reconnecting device announcing itself with HELLO, and
no busy loop."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from gameserver.dialects.bus import BusLine
from gameserver.protocol import BadFrame as ServerBadFrame
from gameserver.protocol import Frame as ServerFrame
from harness.wire.dialects import EndSettings, load_dialect, plan_lines
from harness.wire.dialects.bus.catalogue import Poll
from harness.wire.dialects.bus.codec import CODEC
from harness.wire.frame_errors import BadFrame
from harness.wire.line_events import Delivered, LinkChanged, Received
from harness.wire.messages import DEVICES, BowlOff, BowlOn, Frame, LampOpen, Result, ShakeEnd, ShakeStart, Source

Item = tuple[str, str, int, str | None, str | None]  # src, type, seq, round, at
Drop = Callable[[Frame], bool]


class HarnessMaster:
    """The harness's BusServerEnd, normalised."""

    def __init__(self, roles: tuple[Source, ...], now: float, silence_s: float = 3.0) -> None:
        dialect = load_dialect("xocdia-bus")
        line = next(iter(dialect.lines(roles)))
        self.end = dialect.server_end(line, EndSettings(silence_s=silence_s), now)

    def feed(self, data: bytes, now: float) -> tuple[list[Item], list[Any]]:
        items, bad = [], []
        for f in self.end.receive(data, now):
            if isinstance(f, BadFrame):
                bad.append(f)
            else:
                items.append((f.src.value, f.message.TYPE, f.seq, f.round, None if f.at is None else str(f.at)))
        return items, bad

    def lamp(self, now: float, round: str = "17") -> None:
        self.end.send(LampOpen(round, 1000), now)

    def tick(self, now: float) -> list[str]:
        return [r.value for r in self.end.tick(now)]

    def deadline(self) -> float:
        due = self.end.next_deadline()
        return math.inf if due is None else due

    def output(self) -> bytes:
        return self.end.take_output()

    def writes_left(self) -> int:
        return len(self.end.writes)  # type: ignore[attr-defined]


class ServerMaster:
    """The reference server's BusLine, normalised."""

    def __init__(self, roles: tuple[Source, ...], now: float, silence_s: float = 3.0) -> None:
        self.line = BusLine("bus", tuple(r.value for r in roles), now, silence_s)

    def feed(self, data: bytes, now: float) -> tuple[list[Item], list[Any]]:
        items, bad = [], []
        for f in self.line.feed(data, now):
            if isinstance(f, ServerBadFrame):
                bad.append(f)
            else:
                assert isinstance(f, ServerFrame)
                fields = dict(f.fields)
                items.append((f.src, f.type, f.seq, f.round_tag, fields.get("at") if f.type != "HELLO" else None))
        return items, bad

    def lamp(self, now: float, round: str = "17") -> None:
        self.line.send("OPEN", (("round", round), ("ms", "1000")), now)

    def tick(self, now: float) -> list[str]:
        return self.line.tick(now)

    def deadline(self) -> float:
        return self.line.next_deadline()

    def output(self) -> bytes:
        return self.line.take_output()

    def writes_left(self) -> int:
        return len(self.line.writes)


MASTERS: dict[str, type[HarnessMaster | ServerMaster]] = {"harness": HarnessMaster, "gameserver": ServerMaster}


class Exchange:
    """A device end and a master on an instant in-memory line, in virtual time."""

    def __init__(
        self, master: str, roles: tuple[Source, ...] = DEVICES, device_roles: tuple[Source, ...] | None = None
    ):
        dialect = load_dialect("xocdia-bus")
        carried = device_roles if device_roles is not None else roles
        self.device = dialect.device_end(plan_lines(dialect, carried)[0], EndSettings(unit="T"))
        self.now = 0.0
        self.master = MASTERS[master](roles, 0.0)
        self.device.open(0.0)
        self.delivered: list[tuple[float, Item]] = []
        self.bad: list[Any] = []
        self.events: list[tuple[float, Source, Any]] = []
        self.silent: list[tuple[float, str]] = []
        self.drop_down: list[Drop] = []  # each drops the first request it matches (then is removed)
        self.drop_up: list[Drop] = []
        self.mute: set[Source] = set()  # replies from these devices are lost
        self.repeat_up: list[Drop] = []  # each delivers the first reply it matches twice
        self.wakeups = 0
        self.connected = True  # False: the cable is cut, bytes are lost both ways

    def _filter(self, data: bytes, rules: list[Drop], up: bool) -> bytes:
        out = b""
        for frame in CODEC.decoder().feed(data):
            assert isinstance(frame, Frame), frame
            raw = CODEC.encode(frame)
            if up and frame.src in self.mute:
                continue
            hit = next((r for r in rules if r(frame)), None)
            if hit is not None:
                rules.remove(hit)
                continue
            again = next((r for r in self.repeat_up if r(frame)), None) if up else None
            if again is not None:
                self.repeat_up.remove(again)
                out += raw
            out += raw
        return out

    def settle(self) -> None:
        for _ in range(50):
            down = self.master.output()
            if down and self.connected:
                data = self._filter(down, self.drop_down, up=False)
                self._events(self.device.receive(data, self.now))
            up = self.device.take_output()
            if up and self.connected:
                items, bad = self.master.feed(self._filter(up, self.drop_up, up=True), self.now)
                self.delivered += [(self.now, i) for i in items]
                self.bad += bad
            if not down and not up:
                return
        raise AssertionError("the line never went quiet")

    def _events(self, events: list[tuple[Source, Any]]) -> None:
        self.events += [(self.now, src, e) for src, e in events]

    def run(self, seconds: float) -> None:
        until = self.now + seconds
        self.settle()
        while True:
            dev = self.device.next_deadline()
            due = min(self.master.deadline(), math.inf if dev is None else dev)
            assert due > self.now - 1e-9 or due == math.inf
            if due > until:
                break
            self.now = max(self.now, due)
            self.wakeups += 1
            self.silent += [(self.now, r) for r in self.master.tick(self.now)]
            self._events(self.device.poll(self.now))
            self.settle()
        self.now = until

    def items(self, type_: str) -> list[Item]:
        return [i for _t, i in self.delivered if i[1] == type_]

    def role_events(self, kind: type) -> list[tuple[Source, Any]]:
        return [(src, e) for _t, src, e in self.events if isinstance(e, kind)]


def _reports(src: Source, type_: type) -> Drop:
    return lambda f: f.src is src and isinstance(f.message, type_)


def _poll(device: Source, ack: int) -> Drop:
    return lambda f: isinstance(f.message, Poll) and f.message.device is device and f.message.ack == ack


@pytest.fixture(params=sorted(MASTERS))
def master(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_hello_first_then_reports_delivered_once_in_order(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    hellos = ex.items("HELLO")
    assert sorted(h[0] for h in hellos) == sorted(r.value for r in DEVICES)
    ex.device.send(Source.BOWL, BowlOn(), ex.now, round="17", at=4120)
    ex.device.send(Source.BOWL, BowlOff(False, None), ex.now, round="17", at=4130)
    ex.device.send(Source.READER, Result("RWRR", False), ex.now, round="17", at=4200)
    sent = ex.now
    ex.run(0.2)
    assert [i for i in ex.items("ON")] == [("BOWL", "ON", 2, "17", "4120")]
    assert [i[:2] for _t, i in ex.delivered if i[0] == "BOWL"][-2:] == [("BOWL", "ON"), ("BOWL", "OFF")]
    assert ex.items("RESULT") == [("READER", "RESULT", 2, "17", "4200")]
    first = min(t for t, i in ex.delivered if i[1] == "ON")
    assert first - sent <= 0.05 + 1e-9  # within one poll cycle
    assert ex.device.pending() == 0
    delivered = [e.message for _s, e in ex.role_events(Delivered)]
    assert BowlOn() in delivered and BowlOff(False, None) in delivered
    assert {s for s, e in ex.role_events(LinkChanged) if e.up} == set(DEVICES)
    assert not ex.bad and not ex.silent
    # polls are the heartbeats: about 20 cycles a second, no busy loop
    ex.wakeups = 0
    ex.run(10.0)
    assert ex.wakeups < 10 * 20 * (len(DEVICES) + 2)
    assert not ex.silent and ex.device.pending() == 0


def test_lost_reply_is_polled_again_same_seq(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    ex.drop_up.append(_reports(Source.BOWL, BowlOff))
    ex.device.send(Source.BOWL, BowlOff(True, 2), ex.now, round="17", at=5)
    ex.run(0.3)
    assert ex.items("OFF") == [("BOWL", "OFF", 2, "17", "5")]
    assert ex.device.pending() == 0


def test_lost_ack_and_duplicate_reply_are_suppressed(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    # the poll acknowledging the shaker's START is lost, and the reply carrying START arrives twice
    ex.drop_down.append(
        lambda f: isinstance(f.message, Poll) and f.message.device is Source.SHAKER and f.message.ack == 2
    )
    ex.repeat_up.append(_reports(Source.SHAKER, ShakeStart))
    ex.device.send(Source.SHAKER, ShakeStart(), ex.now, at=7)
    ex.run(0.3)
    assert ex.items("START") == [("SHAKER", "START", 2, None, "7")]
    assert [e for s, e in ex.role_events(Delivered) if isinstance(e.message, ShakeStart)] == [
        Delivered(2, ShakeStart())
    ]
    assert ex.device.pending() == 0


def test_lamp_write_acknowledged_and_retried_never_twice(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    ex.drop_up.append(lambda f: f.src is Source.LAMP and f.message.TYPE == "ACK")
    ex.master.lamp(ex.now)
    ex.run(0.2)
    received = ex.role_events(Received)
    assert [(s, e.frame.message) for s, e in received] == [(Source.LAMP, LampOpen("17", 1000))]
    assert ex.master.writes_left() == 0


def test_the_first_write_of_a_restarted_master_is_acted_on_under_the_same_seq(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    ex.master.lamp(ex.now)  # OPEN round=17, write seq 1
    ex.run(0.2)
    ex.master = MASTERS[master](DEVICES, ex.now)  # killed and restarted: it numbers its writes from 1 again
    ex.master.lamp(ex.now, round="18")  # write seq 1 again, another command
    ex.run(0.2)
    received = [(s, e.frame.message) for s, e in ex.role_events(Received)]
    assert received == [(Source.LAMP, LampOpen("17", 1000)), (Source.LAMP, LampOpen("18", 1000))]
    assert ex.master.writes_left() == 0


def test_lamp_write_waits_for_an_unplugged_lamp(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    ex.mute.add(Source.LAMP)
    ex.master.lamp(ex.now)
    ex.run(5.0)
    assert ex.master.writes_left() == 1  # never dropped
    assert [r for _t, r in ex.silent] == ["LAMP"]
    assert ex.items("RESULT") == []
    ex.device.send(Source.READER, Result("WWWW", False), ex.now, round="17")
    ex.run(0.2)
    assert len(ex.items("RESULT")) == 1  # the other devices are still served
    ex.mute.clear()
    ex.run(0.3)
    assert ex.master.writes_left() == 0
    assert len(ex.role_events(Received)) == 1


def test_silent_device_reported_down_once_and_back(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    ex.mute.add(Source.SHAKER)
    muted = ex.now
    ex.run(6.0)
    assert [r for _t, r in ex.silent] == ["SHAKER"]
    assert 3.0 - 0.06 <= ex.silent[0][0] - muted <= 3.0 + 0.06
    ex.mute.clear()
    ex.run(0.3)
    ex.mute.add(Source.SHAKER)
    ex.run(3.5)
    assert [r for _t, r in ex.silent] == ["SHAKER", "SHAKER"]


def test_absent_device_reported_down(master: str) -> None:
    ex = Exchange(master, roles=DEVICES, device_roles=(Source.BOWL, Source.SHAKER, Source.LAMP, Source.CONSOLE))
    ex.run(4.0)
    assert [r for _t, r in ex.silent] == ["READER"]


def test_device_stops_hearing_polls_goes_down(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    ex.connected = False
    ex.run(4.0)
    downs = [(s, e) for s, e in ex.role_events(LinkChanged) if not e.up]
    assert {s for s, _e in downs} == set(DEVICES)


def test_reconnect_says_hello_then_resends_once(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    # the bowl's OFF reaches the server but the line drops before the acknowledging poll
    ex.device.send(Source.BOWL, BowlOff(False, None), ex.now, round="17", at=9)
    ex.drop_down.append(
        lambda f: isinstance(f.message, Poll) and f.message.device is Source.BOWL and f.message.ack == 2
    )

    def unplug() -> None:
        ex.connected = False
        ex.device.close()

    # run until the OFF is delivered, then unplug the device
    for _ in range(100):
        ex.run(0.005)
        if ex.items("OFF"):
            break
    unplug()
    ex.device.send(Source.BOWL, BowlOn(), ex.now, round="17", at=10)
    ex.run(0.5)
    ex.connected = True
    ex.device.open(ex.now)
    ex.run(0.5)
    bowl = [i for _t, i in ex.delivered if i[0] == "BOWL"]
    assert [i[1] for i in bowl] == ["HELLO", "OFF", "HELLO", "ON"]
    assert bowl[2][2] != bowl[0][2]  # the reconnect's HELLO has a new seq
    assert ex.device.pending() == 0


def test_reconnect_resends_an_unseen_report_after_hello(master: str) -> None:
    ex = Exchange(master)
    ex.run(0.2)
    ex.mute.add(Source.READER)
    ex.device.send(Source.READER, Result("RWRR", False), ex.now, round="17", at=11)
    ex.run(0.1)
    ex.device.close()
    ex.device.open(ex.now)
    ex.mute.clear()
    ex.run(0.3)
    reader = [i[1] for _t, i in ex.delivered if i[0] == "READER"]
    assert reader == ["HELLO", "HELLO", "RESULT"]
    assert ex.device.pending() == 0


def test_reference_server_scans_a_line_without_roles() -> None:
    """A line that is not named ``bus`` and has no roles configured: all five addresses are polled, a device is
    expected once it answered, and absent ones are never reported (nor retried)."""
    ex = Exchange("gameserver", device_roles=(Source.BOWL, Source.LAMP))
    ex.master = ServerMaster.__new__(ServerMaster)
    ex.master.line = BusLine("table", (), 0.0, 3.0)
    assert ex.master.line.roles == () and not ex.master.line.carries_lamp
    ex.run(4.0)
    assert sorted(i[0] for i in ex.items("HELLO")) == ["BOWL", "LAMP"]
    assert ex.silent == [] and ex.master.line.carries_lamp and ex.master.line.up
    rejected = [e for _t, _s, e in ex.events if type(e).__name__ == "Rejected"]
    assert rejected  # polls to the absent addresses reached this line: traced, not answered
    ex.mute.add(Source.BOWL)
    ex.run(4.0)
    assert [r for _t, r in ex.silent] == ["BOWL"]


def test_reference_server_bus_line_without_roles_expects_all_five() -> None:
    line = BusLine("bus", (), 0.0, 3.0)
    assert line.roles == ("BOWL", "SHAKER", "READER", "LAMP", "CONSOLE") and line.carries_lamp
    assert sorted(line.tick(3.0)) == sorted(line.roles)


def test_reports_of_one_cycle_are_handed_on_in_the_order_they_happened(master: str) -> None:
    """The shake ends, the bowl comes off 10 ms later, and the next cycle polls the bowl before the shaker: the master
    hands the END on first (by the devices' event times, each moved into server time by its device's offset), at
    every phase of the poll cycle."""
    ex = Exchange(master)
    ex.run(0.2)
    ex.run(0.0499)  # just before a poll cycle: the offsets are learnt from reports that wait 0.1 ms
    for src, msg in ((Source.BOWL, BowlOn()), (Source.SHAKER, ShakeStart())):
        ex.device.send(src, msg, ex.now, at=round(ex.now * 1000))
    ex.run(0.2)
    for phase in range(10):
        ex.run(0.004 * phase)
        ex.device.send(Source.SHAKER, ShakeEnd(), ex.now, at=round(ex.now * 1000))
        ex.run(0.01)
        ex.device.send(Source.BOWL, BowlOff(False, None), ex.now, at=round(ex.now * 1000))
        ex.run(0.2)
        kinds = [i[1] for _t, i in ex.delivered if i[1] in ("END", "OFF")]
        assert kinds[-2:] == ["END", "OFF"], (phase, kinds)
