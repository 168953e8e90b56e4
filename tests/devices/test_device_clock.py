"""Devices stamp every report with ``at``, their clock in ms when the fact happened (docs/protocol.md §6,
"Event time", revision 1.2): measured from the table's power-up, fixed at the event, unchanged by a lossy line
that delivers the frame late; and it can be turned off for a 1.1 server."""

from __future__ import annotations

import random

import pytest
import simpy

from harness.bench.devices.emulated import EmulatedTable
from harness.files import load_profile
from harness.wire.messages import DEVICES, BowlOff, BowlOn, Drop, ShakeEnd, ShakeStart, Source
from harness.wire.realtime import SelectEnvironment
from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.base import Transport
from harness.wire.transports.faults import FaultRates, FaultyTransport
from harness.wire.transports.memory import memory_pipe
from simulator import events as ev
from simulator.eventlog import EventLog
from simulator.script import Script
from tests.devices.dev_server import DevServer

SCRIPT = Script.from_data(
    [
        {"round": 1, "faces": "r r w w"},
        {"round": 2, "faces": "r w w w", "early_lift": True},  # SH-4b: the lift happens before the close
        {"round": 3, "drop": "token"},
        {"round": 3, "shake": 2, "faces": "r r r r"},
    ]
)
POWER_UP = 2.5  # the table (and so every device clock) starts this many sim seconds into the run


def _ms(t: float) -> int:
    """Device clock at sim time ``t``, by the definition in docs/protocol.md §6: whole ms since power-up."""
    return round((t - POWER_UP) * 1000)


def run(bowl_faults: FaultRates | None = None, *, event_times: bool = True) -> tuple[EmulatedTable, DevServer, bytes]:
    """Three scripted rounds against the scripted server; returns the table, the server and every byte the
    devices wrote (a serial trace of their ends)."""
    env = simpy.Environment()
    env.run(until=POWER_UP)
    pipes = {d: memory_pipe(d.value) for d in DEVICES}
    ends: dict[Source, Transport] = {d: p[0] for d, p in pipes.items()}
    if bowl_faults is not None:
        ends[Source.BOWL] = FaultyTransport(ends[Source.BOWL], random.Random(5), lambda: env.now, tx=bowl_faults)
    trace = TraceRecorder(clock=lambda: float(env.now))
    traced: dict[Source, Transport] = {d: TracingTransport(t, trace, d.value) for d, t in ends.items()}
    table = EmulatedTable(
        load_profile("compressed"), 11, traced, env=env, players=0, script=SCRIPT, event_times=event_times
    )
    server = DevServer(env, {d: p[1] for d, p in pipes.items()}, rounds=3)
    env.run(until=server.done)
    for _ in range(100):  # let queued frames and retransmissions finish (bounded: 10 s of sim time)
        if table.hub.pending() == 0:
            break
        env.run(until=env.now + 0.1)
    return table, server, b"".join(r.data for r in trace.records if r.dir == "tx")


def _facts(log: EventLog) -> dict[Source, list[tuple[object, int]]]:
    """What each device must say and the clock reading for it, from the ground truth and the table in
    docs/devices.md ("What each device reports")."""
    out: dict[Source, list[tuple[object, int]]] = {Source.BOWL: [], Source.SHAKER: []}
    for e in log:
        if isinstance(e, ev.BowlPlaced):
            out[Source.BOWL].append((BowlOn(), _ms(e.t)))
        elif isinstance(e, ev.BowlLifted):
            out[Source.BOWL].append((BowlOff(e.touched, e.token if e.touched else None), _ms(e.t)))
        elif isinstance(e, ev.ShakeStarted):
            out[Source.SHAKER].append((ShakeStart(), _ms(e.t)))
        elif isinstance(e, ev.ShakeEnded):
            out[Source.SHAKER].append((ShakeEnd(), _ms(e.t)))
        elif isinstance(e, ev.Dropped):
            out[Source.SHAKER].append(("DROP", _ms(e.t)))
    return out


def _heard(srv: DevServer, src: Source) -> list[tuple[object, int | None]]:
    return [
        ("DROP" if isinstance(m, Drop) else m, at)
        for (_t, s, m), at in zip(srv.heard, srv.ats, strict=True)
        if s is src
    ]


def test_every_report_carries_the_device_clock_at_the_moment_of_the_fact() -> None:
    table, srv, wire = run()
    assert len(srv.ats) == len(srv.heard) and None not in srv.ats
    lift = table.model.log.of(ev.BowlLifted)[0]
    assert f"BOWL OFF touch=0 token=- round=1 at={_ms(lift.t)}*".encode() in wire  # round= then at=
    facts = _facts(table.model.log)
    assert len(facts[Source.BOWL]) == 7 and any(m == "DROP" for m, _ in facts[Source.SHAKER])
    for src, expected in facts.items():
        assert _heard(srv, src) == expected, src
    # the reader and the console too: each frame's time is that of a ground-truth event of the run
    times = {_ms(e.t) for e in table.model.log}
    assert all(at in times for at in srv.ats)
    assert min(at for at in srv.ats if at is not None) >= 0


def test_a_frame_delayed_by_a_lossy_line_keeps_the_time_of_the_lift_not_of_its_arrival() -> None:
    table, srv, _wire = run(FaultRates(drop=0.4))
    facts = _facts(table.model.log)
    assert _heard(srv, Source.BOWL) == facts[Source.BOWL]  # nothing lost, every time that of the fact
    bowl = [(t, at) for (t, s, _m), at in zip(srv.heard, srv.ats, strict=True) if s is Source.BOWL]
    late = [(t, at) for t, at in bowl if at is not None and t - (POWER_UP + at / 1000) >= 0.2]
    assert late, "no frame was retransmitted: pick another fault seed"
    # the server's estimate (docs/protocol.md §7): offset = the smallest (arrival - at); it is never early
    offset = min(t - at / 1000 for t, at in bowl if at is not None)
    lift = next(e for e in table.model.log.of(ev.BowlLifted) if e.round == 2)  # type: ignore[attr-defined]
    off_at = _ms(lift.t)
    assert off_at in [at for _t, at in bowl]
    assert lift.t - 1e-9 <= off_at / 1000 + offset <= lift.t + 0.01  # the line's smallest delay: one server tick


def test_event_times_can_be_turned_off_for_a_server_that_does_not_take_them() -> None:
    _table, srv, wire = run(event_times=False)
    assert srv.heard and set(srv.ats) == {None}
    assert wire.count(b" BOWL OFF ") >= 3 and b" at=" not in wire


def test_the_early_lift_is_stamped_before_the_close_even_when_it_arrives_after() -> None:
    table, srv, _wire = run(FaultRates(latency=0.15))  # every bowl frame 150 ms late
    close = next(e for e in table.model.log.of(ev.BettingClosed) if e.round == 2)  # type: ignore[attr-defined]
    lift = next(e for e in table.model.log.of(ev.BowlLifted) if e.round == 2)  # type: ignore[attr-defined]
    assert lift.t < close.t  # SH-4b at the table
    [(arrived, at)] = [
        (t, at)
        for (t, s, m), at in zip(srv.heard, srv.ats, strict=True)
        if s is Source.BOWL and m == BowlOff(False, None) and at == _ms(lift.t)
    ]
    assert at is not None and arrived > close.t and POWER_UP + at / 1000 < close.t


def test_a_real_time_clock_not_at_factor_one_is_refused_while_event_times_are_on() -> None:
    with pytest.raises(ValueError, match="event_times"):
        EmulatedTable(load_profile("compressed"), 1, {}, env=SelectEnvironment(factor=2.0), players=0)
    table = EmulatedTable(
        load_profile("compressed"), 1, {}, env=SelectEnvironment(factor=2.0), players=0, event_times=False
    )
    assert not table.event_times
    at_one = EmulatedTable(load_profile("compressed"), 1, {}, env=SelectEnvironment(), players=0)
    assert at_one.device_time(at_one.env.now + 1.2344) == 1234
