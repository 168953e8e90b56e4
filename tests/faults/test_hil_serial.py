"""Serial-line faults on the local HIL bench (a real ``xocdia-server`` process that opens its own ends of real pty
lines): the bench wraps the device end of every line. A schedule of drops, bit flips and a pulled reader cable
runs through the real ``run_schedule`` and recovers; a pulled cable is silence to the server, never an I/O error;
a wrapped line with no fault active delivers exactly what the device sent."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.faults.injector import run_schedule
from harness.faults.prepare import prepare_bench
from harness.faults.schedule import load_schedule
from harness.wire.messages import DEVICES

pytestmark = pytest.mark.slow

SCHEDULE = Path(__file__).resolve().parents[2] / "fixtures" / "faults" / "hil-serial.yaml"
NAMES = {d.value.lower() for d in DEVICES}


def test_drops_flips_and_a_pulled_cable_are_applied_and_every_round_recovers() -> None:
    schedule = load_schedule(SCHEDULE)  # shaker drops in round 1, bowl flips in round 2, reader unplugged in 3
    result = run_schedule(load_bench("local-hil"), schedule)  # refused before device ends were wrapped
    assert not result.aborted and result.rounds_played == 3, result.aborted
    assert result.passed, result.report.lines()
    assert result.final is not None
    ended = sorted({e.round_id for e in result.final.events if e.ends_round})
    assert ended == ["1", "2", "3"]  # settled, or voided/cancelled and refunded: never left open
    fired = [op.detail.split(" at ")[0] for op in result.history if op.f == "fault"]
    healed = [op.detail.split(" at ")[0] for op in result.history if op.f == "heal"]
    expected = ["serial_drop(shaker)", "serial_flip(bowl)", "serial_unplug(reader)"]
    assert fired == expected and sorted(healed) == sorted(expected)
    assert not [op for op in result.history if op.f == "skipped"]
    # the line's own counts: frames really lost on the shaker's line and really corrupted on the bowl's
    assert result.serial_counts["shaker"].get("drop", 0) > 0, result.serial_counts
    assert result.serial_counts["bowl"].get("flip", 0) > 0, result.serial_counts
    assert set(result.serial_counts["shaker"]) == {"drop"} and set(result.serial_counts["bowl"]) == {"flip"}


def _server_trace(rig: Rig) -> list[dict[str, Any]]:
    """The server process's own serial trace (``--trace``): what it read and wrote on its ends, and its errors."""
    path = rig.workdir / "server.serial.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _frames(chunks: list[str]) -> list[str]:
    return [f + "\n" for f in "".join(chunks).split("\n") if f]


@pytest.fixture
def rig() -> Iterator[Rig]:
    """The local HIL bench as a fault run with serial faults planned builds it, with one player."""
    with Rig.build(prepare_bench(load_bench("local-hil"), 1, serial=True), {"p1": 1000}) as built:
        yield built


def test_every_line_is_wrapped_and_a_quiet_wrapper_delivers_what_the_device_sent(rig: Rig) -> None:
    assert set(rig.serial_ports) == NAMES
    rig.run_for(0.6)  # HELLOs and ACKs both ways; the devices' first heartbeat is due only after 1 s of quiet
    time.sleep(0.3)  # the server's reader threads (50 ms timeouts) catch up; the devices write nothing meanwhile
    trace = _server_trace(rig)
    for name in NAMES:
        sent = _frames(
            [r.data.decode("latin-1") for r in rig.recorder.records if r.port == name.upper() and r.dir == "tx"]
        )
        got = _frames([e["bytes"] for e in trace if e["device"] == name and e["dir"] == "rx"])
        # a pty drops what was written before the server opened it, so the server may have missed a first HELLO
        assert got and got == sent[len(sent) - len(got) :], (name, sent, got)
        assert any(" HELLO " in f for f in got), name
        assert not any(
            rig.serial_ports[name].counts(d)[k] for d in ("tx", "rx") for k in rig.serial_ports[name].counts(d)
        )


def test_a_pulled_device_cable_is_silence_to_the_server_and_replugging_says_hello(rig: Rig) -> None:
    rig.run_for(0.3)
    port = rig.serial_ports["reader"]
    pty = rig.lines["reader"]
    port.unplug()
    assert not port.connected  # the device sees its cable gone ...
    assert pty.connected and Path(pty.address).exists()  # ... the server's end of the pty is still there
    rig.run_for(0.3)  # bytes the device wrote before the pull reach the server meanwhile
    start = len(_server_trace(rig))
    rig.run_for(1.5)  # a connected reader would send a heartbeat after 1 s of quiet
    time.sleep(0.2)
    window = _server_trace(rig)[start:]
    assert not [e for e in window if e["device"] == "reader" and e["dir"] in ("rx", "error")], window
    port.replug()
    assert port.connected
    hello = len(_server_trace(rig))
    rig.run_until(
        lambda: any(
            e["device"] == "reader" and e["dir"] == "rx" and " HELLO " in e["bytes"] for e in _server_trace(rig)[hello:]
        ),
        "the reader's HELLO at the server after the replug",
        timeout_s=3.0,
    )
    assert not [e for e in _server_trace(rig) if e["dir"] == "error"]  # never an I/O error on any line
