"""The emulated table in virtual time, devices on in-memory lines, a scripted server on the other end: every rule
case produces the documented frames (docs/protocol.md §7), lamp commands drive the dealer, and a faulty line loses
nothing."""

from __future__ import annotations

import random

import pytest
import simpy

from harness.bench.devices.emulated import EmulatedTable
from harness.files import load_profile
from harness.wire.messages import (
    DEVICES,
    BowlOff,
    BowlOn,
    ConsoleRearranged,
    Drop,
    DropItem,
    ReaderRearranged,
    Reassembled,
    Result,
    ShakeEnd,
    ShakeStart,
    Source,
    TokensPlaced,
)
from harness.wire.transports.base import Transport
from harness.wire.transports.faults import FaultRates, FaultyTransport
from harness.wire.transports.memory import memory_pipe
from simulator import events as ev
from simulator.script import Script
from tests.devices.dev_server import DevServer

SCRIPT = Script.from_data(
    [
        {"round": 1, "faces": "r r w w"},
        {"round": 2, "faces": "r w w w", "touch": True, "touch_token": 2},
        {"round": 3, "faces": "r s w w"},
        {"round": 3, "shake": 2, "faces": "w w w w"},
        {"round": 4, "faces": "r r r w", "overlap": True},
        {"round": 5, "drop": "token"},
        {"round": 5, "shake": 2, "faces": "r r r r"},
        {"round": 6, "faces": "w r w r", "forget_shake": True},
        {"round": 7, "faces": "r w r w", "early_lift": True},
    ]
)
ROUNDS = 7
OFF = BowlOff(False, None)


def run_table(faults: FaultRates | None = None) -> tuple[EmulatedTable, DevServer, list[FaultyTransport]]:
    env = simpy.Environment()
    pipes = {d: memory_pipe(d.value) for d in DEVICES}
    device_ends: dict[Source, Transport] = {d: p[0] for d, p in pipes.items()}
    wrapped: list[FaultyTransport] = []
    if faults is not None:
        rng = random.Random(99)
        for d in DEVICES:
            faulty = FaultyTransport(pipes[d][0], rng, lambda: env.now, tx=faults, rx=faults)
            wrapped.append(faulty)
            device_ends[d] = faulty
    table = EmulatedTable(
        load_profile("compressed"), 11, device_ends, env=env, players=0, script=SCRIPT, keep_reports=True
    )
    server = DevServer(env, {d: p[1] for d, p in pipes.items()}, rounds=ROUNDS)
    env.run(until=server.done)
    for _ in range(100):  # let retransmissions finish (bounded: 10 s of sim time)
        if table.hub.pending() == 0:
            break
        env.run(until=env.now + 0.1)
    return table, server, wrapped


def test_every_rule_case_gives_the_documented_frames() -> None:
    table, srv, _ = run_table()
    log = table.model.log
    assert not log.of(ev.Paused), "a random problem would change the expected frames: pick another seed"
    said = srv.said
    # 1: a normal round (GP-1..3)
    assert said(Source.CONSOLE, 1) == [TokensPlaced()]
    assert said(Source.BOWL, 1) == [BowlOn(), OFF]
    assert said(Source.SHAKER, 1) == [ShakeStart(), ShakeEnd()]
    assert said(Source.READER, 1) == [Result("RRWW", False)]
    # 2: the bowl touched token 2 on the lift (SH-5)
    assert said(Source.BOWL, 2) == [BowlOn(), BowlOff(True, 2)]
    assert said(Source.READER, 2) == [Result("RWWW", False)]
    # 3: token 1 left standing (SH-3): a second shake and a second read
    assert said(Source.BOWL, 3) == [BowlOn(), OFF, BowlOn(), OFF]
    assert said(Source.SHAKER, 3) == [ShakeStart(), ShakeEnd()] * 2
    assert said(Source.READER, 3) == [Result("RSWW", False), Result("WWWW", False)]
    # 4: overlap (SH-1): one token unreadable, then the dealer spreads them and the reader reads all four
    [first, second] = said(Source.READER, 4)
    assert isinstance(first, Result) and first.overlap and first.faces.count("U") == 1
    assert all(c in ("U", t) for c, t in zip(first.faces, "RRRW", strict=True))
    assert second == ReaderRearranged("RRRW")
    assert said(Source.CONSOLE, 4) == [TokensPlaced(), ConsoleRearranged()]
    # 5: a token fell (SH-2): reassembled, bowl on again, a new shake
    shaker5 = said(Source.SHAKER, 5)
    assert shaker5[0] == ShakeStart() and shaker5[2:] == [ShakeStart(), ShakeEnd()]
    assert isinstance(shaker5[1], Drop) and shaker5[1].item is DropItem.TOKEN and shaker5[1].token in range(4)
    assert said(Source.CONSOLE, 5) == [TokensPlaced(), Reassembled()]
    assert said(Source.BOWL, 5) == [BowlOn(), BowlOn(), OFF]
    assert said(Source.READER, 5) == [Result("RRRR", False)]
    # 6: forgot to shake (SH-4a): the shaker says nothing at all
    assert said(Source.SHAKER, 6) == []
    assert said(Source.BOWL, 6) == [BowlOn(), OFF]
    assert said(Source.READER, 6) == [Result("WRWR", False)]
    # 7: lifted early (SH-4b): the OFF reaches the server before it closed betting
    assert said(Source.BOWL, 7) == [BowlOn(), OFF]
    off_at = next(t for t, s, m in srv.heard if s is Source.BOWL and m == OFF and t >= srv.opens[6])
    assert off_at < srv.opens[6] + 0.25


def test_server_lamp_commands_open_and_close_the_simulated_rounds() -> None:
    table, srv, _ = run_table()
    opened = table.model.log.of(ev.RoundOpened)
    closed = table.model.log.of(ev.BettingClosed)
    assert [e.round for e in opened] == list(range(1, ROUNDS + 1))  # type: ignore[attr-defined]
    assert [e.round for e in closed] == list(range(1, ROUNDS + 1))  # type: ignore[attr-defined]
    for event, sent in zip(opened, srv.opens, strict=True):
        assert event.deadline - event.t == pytest.approx(0.25)  # type: ignore[attr-defined]  # OPEN ms=250
        assert sent <= event.t < sent + 0.05


def test_a_faulty_line_both_ways_loses_and_duplicates_nothing() -> None:
    rates = FaultRates(flip=0.05, drop=0.1, duplicate=0.1, reorder=0.05, slice=0.2, latency=0.002)
    table, noisy, wrapped = run_table(rates)
    assert table.reports is not None and table.hub.pending() == 0
    for src in DEVICES:
        handed = [m for _t, s, m in table.reports if s is src]
        assert noisy.said(src) == handed, src  # every report arrived once, in order
    assert len(table.reports) > 40
    injected = sum(sum(w.counts(d).values()) for w in wrapped for d in ("tx", "rx"))
    assert injected > 30


def test_heartbeats_off_for_campaigns_leave_only_reports_on_the_wire() -> None:
    env = simpy.Environment()
    pipes = {d: memory_pipe(d.value) for d in DEVICES}
    table = EmulatedTable(
        load_profile("compressed"),
        2,
        {d: p[0] for d, p in pipes.items()},
        env=env,
        server_lamp=False,
        require_ack=False,
        heartbeat_s=float("inf"),
        players=0,
    )
    table.model.run(20)
    wire = b"".join(p[1].read() for p in pipes.values())
    assert b" HB*" not in wire
    assert wire.count(b" RESULT ") >= 20


def test_every_device_report_is_tagged_with_the_round_the_table_was_playing() -> None:  # protocol §6 round tag
    _table, srv, _ = run_table()
    assert len(srv.tags) == len(srv.heard) and None not in srv.tags
    for n in range(1, ROUNDS + 1):
        for src in (Source.BOWL, Source.SHAKER, Source.READER, Source.CONSOLE):
            tagged = [m for (_t, s, m), tag in zip(srv.heard, srv.tags, strict=True) if s is src and tag == str(n)]
            assert tagged == srv.said(src, n), (n, src)


def test_round_tags_can_be_turned_off_for_a_server_that_does_not_take_them() -> None:
    env = simpy.Environment()
    pipes = {d: memory_pipe(d.value) for d in DEVICES}
    EmulatedTable(
        load_profile("compressed"),
        11,
        {d: p[0] for d, p in pipes.items()},
        env=env,
        players=0,
        script=SCRIPT,
        round_tags=False,
    )
    server = DevServer(env, {d: p[1] for d, p in pipes.items()}, rounds=2)
    env.run(until=server.done)
    assert server.heard and set(server.tags) == {None}
