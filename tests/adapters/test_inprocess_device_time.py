"""The in-process adapter dates device frames (protocol 1.2 ``at=<ms>``) with each line's DeviceClock: frames
written by hand on in-memory lines, through the server's own decoder, link and engine, in SimPy time.

The table (times in sim seconds; the device clocks read sim time in ms): round 1 opens at 0 and closes at 2.0;
BOWL ON at 0.1, SHAKER START 0.2 / END 0.5; the dealer lifts at 1.5 but the bowl's line delivers ``BOWL OFF``
only at 2.3, after the reader's untimed ``RESULT`` (2.1). With ``at`` the server learns the bowl's offset from
``BOWL ON`` and dates the lift 1.5 + (at most one 5 ms service tick): void SH-4b, the stake refunded. Without
``at`` nothing tells it when the lift happened and it settles — the behaviour revision 1.2 fixes."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import simpy

from gameserver.protocol import encode
from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.records import PlayerSpec
from harness.wire.transports.memory import MemoryEnd, memory_pipe

Fields = tuple[tuple[str, str], ...]


def run_table(tmp_path: Path, timed: bool) -> InProcessAdapter:
    env = simpy.Environment()
    lines = {name: memory_pipe(name) for name in ("bowl", "shaker", "reader")}
    setup = ServerSetup(
        players=(PlayerSpec("alice", 10_000),),
        devices={name: server for name, (_device, server) in lines.items()},
        env=env,
        workdir=tmp_path,
        betting_s=2.0,
        round_gap_s=1.0,
        pause_timeout_s=60.0,
        reshake_cap=3,
        result_timeout_s=30.0,
        heartbeat_s=600.0,  # the hand-driven devices send no heartbeats
    )
    adapter = InProcessAdapter({})
    adapter.start(setup)
    adapter.connect("alice")
    adapter.supervise("open")
    assert adapter.place_bet("alice", "a-1", "two_red", 1_000).accepted
    seqs = dict.fromkeys(lines, 0)

    def send(device: str, src: str, type_: str, fields: Fields, at_ms: int | None) -> None:
        seqs[device] += 1
        tail: Fields = (("at", str(at_ms)),) if timed and at_ms is not None else ()
        end: MemoryEnd = lines[device][0]  # tagged with round 1: the server refuses an untagged result or lift
        end.write(encode(seqs[device], src, type_, (*fields, ("round", "1"), *tail)))

    script: list[tuple[float, str, str, str, Fields, int | None]] = [
        (0.1, "bowl", "BOWL", "ON", (), 100),
        (0.2, "shaker", "SHAKER", "START", (), 200),
        (0.5, "shaker", "SHAKER", "END", (), 500),
        (2.1, "reader", "READER", "RESULT", (("faces", "RRWW"), ("overlap", "0")), None),  # untimed
        (2.3, "bowl", "BOWL", "OFF", (("touch", "0"), ("token", "-")), 1500),
    ]

    def table() -> Generator[simpy.Event, Any, None]:
        for when, device, src, type_, fields, at_ms in script:
            yield env.timeout(when - env.now)
            send(device, src, type_, fields, at_ms)

    env.process(table())
    env.run(until=3.0)
    adapter.stop()
    return adapter


def test_a_late_timed_lift_voids_sh4b_in_process(tmp_path: Path) -> None:
    adapter = run_table(tmp_path, timed=True)
    events = [(e.round_id, e.kind, e.clause) for e in adapter.round_events()]
    assert events == [("1", "opened", ""), ("1", "closed", ""), ("1", "void", "SH-4b")]
    (row,) = adapter.bet_record("alice")
    assert (row.result, row.returned, row.round_status) == ("refund", 1_000, "void")
    assert adapter.balance("alice") == 10_000


def test_the_same_table_without_device_time_settles(tmp_path: Path) -> None:
    adapter = run_table(tmp_path, timed=False)
    events = [(e.round_id, e.kind, e.faces) for e in adapter.round_events()]
    assert events == [("1", "opened", ""), ("1", "closed", ""), ("1", "settled", "RRWW")]
    (row,) = adapter.bet_record("alice")
    assert (row.result, row.returned) == ("win", 2_500)  # two_red pays 1.5: 1000 + 1500 on RRWW
    assert adapter.balance("alice") == 11_500
