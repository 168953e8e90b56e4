"""The bench follows what a dialect declares it carries (docs/dialects/README.md, "What the bench does with the
declaration"): the server's line guard accepts untagged reports only on a line whose dialect declares no round tags
(in-process and in the server process's config), the emulated devices send only what their line declares, a lamp
whose protocol carries no betting time shows betting open until CLOSE, and numeric round ids map to rounds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import serial
import simpy

from gameserver.config import parse_config
from gameserver.gateway import DeviceGateway, DevicePort
from gameserver.protocol import Frame as ServerFrame
from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.inprocess_port import ServerPort
from harness.bench.adapters.server_process import server_config
from harness.bench.config import load_bench
from harness.bench.devices.declared import declared_reports
from harness.bench.devices.lamp import LampDriver, OrdinalLampDriver
from harness.bench.rig import Rig
from harness.records import PlayerSpec
from harness.wire.dialects import plan_lines
from harness.wire.dialects.ascii import AsciiDialect
from harness.wire.messages import (
    BowlOff,
    BowlOn,
    Drop,
    Frame,
    LampClose,
    LampOpen,
    Problem,
    ProblemReason,
    Source,
    TokensPlaced,
)
from harness.wire.transports.memory import memory_pipe
from simulator.lamp import Lamp, LampState
from tests.bench.declared_dialects import BareVendor, RecordingAscii, RecordingEnd, Sent, UntaggedAscii
from tests.wire.dialects.vendor_poll import VendorPollDialect, vendor_codec

ROOT = Path(__file__).resolve().parents[2]
BARE = f"{BareVendor.__module__}:BareVendor"
RECORDING = f"{RecordingAscii.__module__}:RecordingAscii"
UNTAGGED = f"{UntaggedAscii.__module__}:UntaggedAscii"
#: Round 1: a token drops off the plate on the first shake, and the bowl touches a token when it is lifted.
INCIDENTS: list[dict[str, Any]] = [
    {"round": 1, "drop": "token"},
    {"round": 1, "shake": 2, "faces": "r r w w"},
    {"round": 1, "touch": True},
]
UNTAGGED_READ = ServerFrame(5, "READER", "RESULT", (("faces", "RRWW"), ("overlap", "0")))


# --- untagged reports: accepted only on a line that declares no round tags ---------------------------------------


def _port(spec_dialect: object | None) -> ServerPort:
    _device, server = memory_pipe("reader")
    spec = None
    if spec_dialect is not None:
        assert isinstance(spec_dialect, VendorPollDialect | AsciiDialect)
        [spec] = [line for line in plan_lines(spec_dialect) if Source.READER in line.roles]
    return ServerPort("reader", server, spec, 0.0, 3.0)


def test_the_in_process_line_guard_accepts_untagged_reads_only_where_the_dialect_declares_no_round_tags() -> None:
    untagged_line = _port(VendorPollDialect())
    assert untagged_line.accepts_untagged
    assert untagged_line.guard.check(UNTAGGED_READ).accept
    for tagged_line in (_port(AsciiDialect()), _port(None)):
        assert not tagged_line.accepts_untagged
        verdict = tagged_line.guard.check(UNTAGGED_READ)
        assert not verdict.accept and verdict.why == "untagged"
    untagged_line.reopen(1.0)  # a restarted server keeps the line's declaration
    assert untagged_line.guard.check(UNTAGGED_READ).accept


def _setup(dialect: AsciiDialect) -> ServerSetup:
    lines = {line.name: line for line in plan_lines(dialect)}
    devices = {name: f"/dev/pts/{i}" for i, name in enumerate(lines)}
    players = (PlayerSpec("alice", 1_000),)
    return ServerSetup(players, devices, simpy.Environment(), Path("."), 1.0, 0.05, 1.0, 4, 5.0, 3.0, lines=lines)


def test_the_server_process_config_accepts_untagged_reports_per_line_where_none_are_declared() -> None:
    tagged = server_config(_setup(AsciiDialect()), {"alice": "alice-secret"}, "boss", "boss-secret")
    assert all("untagged_reports" not in entry for entry in tagged["devices"].values())
    assert "untagged_reports" not in tagged  # never the whole server's compatibility mode
    untagged = server_config(_setup(UntaggedAscii()), {"alice": "alice-secret"}, "boss", "boss-secret")
    assert {entry.get("untagged_reports") for entry in untagged["devices"].values()} == {"accept"}
    assert "untagged_reports" not in untagged
    parsed = parse_config(untagged)
    assert parsed.device_untagged == dict.fromkeys(untagged["devices"], True) and not parsed.accept_untagged


def test_the_gateway_guards_each_line_by_its_own_untagged_reports_setting() -> None:
    raw = {"devices": {"reader": {"url": "loop://", "untagged_reports": "accept"}, "bowl": "loop://"}}
    config = parse_config(raw)
    assert config.device_untagged == {"reader": True}
    ports: dict[str, DevicePort] = {n: serial.serial_for_url("loop://", timeout=0.05) for n in ("reader", "bowl")}
    gateway = DeviceGateway(ports, lambda _r: None, untagged=config.device_untagged)
    try:
        assert gateway.guards["reader"].check(UNTAGGED_READ).accept
        lift = ServerFrame(6, "BOWL", "OFF", (("touch", "0"), ("token", "-")))
        assert gateway.guards["bowl"].check(lift).why == "untagged"
    finally:
        gateway.stop()
    with pytest.raises(Exception, match=r"config\.devices\.reader\.untagged_reports: refuse or accept"):
        parse_config({"devices": {"reader": {"url": "loop://", "untagged_reports": "yes"}}})


def test_a_local_hil_table_whose_protocol_has_no_round_tags_settles_its_rounds_on_the_server_process() -> None:
    cmd = [sys.executable, "-m", "harness.cli", "run", "--bench", "local-hil", "--rounds", "2", "--players", "1"]
    done = subprocess.run([*cmd, "--dialect", UNTAGGED], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "rounds: 2 (settled: 2)" in done.stdout.splitlines()


# --- the emulated devices send only what their line declares ------------------------------------------------------


def _sent(rig: Rig) -> list[Sent]:
    out: list[Sent] = []
    for port in rig.emulated.hub.ports.values():
        assert isinstance(port.end, RecordingEnd)
        out += port.end.sent
    return out


def _play_round(spec: str) -> tuple[list[Sent], str]:
    with Rig.build(load_bench("in-process", spec), {"alice": 10_000}, script=INCIDENTS) as rig:
        rid = rig.open_round()
        end = rig.play_to_end(rid)
        return _sent(rig), f"{end.kind} {end.clause}"


def test_devices_on_lines_that_declare_little_send_no_tag_time_or_token_sensor_frame() -> None:
    sent, end = _play_round(BARE)
    kinds = {type(m) for _s, m, _r, _a in sent}
    assert {BowlOn, BowlOff, Drop} <= kinds, kinds  # the round was played: the incidents were reported
    assert TokensPlaced not in kinds  # no token sensor
    assert all(r is None and a is None for _s, _m, r, a in sent), [x for x in sent if x[2] or x[3]]
    # a touch and a token drop still name their token (a semantic frame's rule): the dialect's wire drops it
    assert any(isinstance(m, BowlOff) and m.touch and m.token is not None for _s, m, _r, _a in sent)
    assert end == "void SH-5"  # and the server, accepting the untagged lift, voids the touched round


def test_devices_on_lines_that_declare_everything_send_it_all() -> None:
    sent, _end = _play_round(RECORDING)
    assert any(isinstance(m, TokensPlaced) for _s, m, _r, _a in sent)
    assert all(r is not None and a is not None for _s, m, r, a in sent if not isinstance(m, TokensPlaced))
    assert any(isinstance(m, Drop) and m.token is not None for _s, m, _r, _a in sent)
    assert any(isinstance(m, BowlOff) and m.token is not None for _s, m, _r, _a in sent)


def test_the_declaration_is_read_per_line() -> None:
    devices = frozenset(Source) - {Source.SERVER}
    declared = declared_reports(plan_lines(BareVendor()))
    assert declared.untagged == declared.untimed == declared.unsensed == devices
    assert declared.message(Source.CONSOLE, TokensPlaced()) is None
    assert declared.round_tag(Source.READER, "12") is None and declared.event_time(Source.READER, 5) is None
    problem = Problem(ProblemReason.RESHAKE_CAP)
    assert declared.message(Source.CONSOLE, problem) is problem  # a required field: the wire's to drop
    full = declared_reports(plan_lines(AsciiDialect()))
    assert full.full and full.round_tag(Source.READER, "12") == "12" and full.event_time(Source.READER, 5) == 5


# --- the lamp: open until CLOSE without a betting time; numeric round ids -----------------------------------------


def test_a_lamp_without_a_betting_time_shows_betting_open_until_close() -> None:
    env = simpy.Environment()
    driver = LampDriver(Lamp(env), until_close_s=15.0)
    driver.apply(LampOpen("12", 0), 0.0)  # what the vendor's lamp decodes: no betting time on its wire
    assert driver.lamp.state is LampState.BETTING_OPEN
    assert driver.lamp.signal.deadline == 15.0  # it announces the table's own period, not the OPEN's 0 ms
    env.run(until=60.0)
    assert driver.lamp.state is LampState.BETTING_OPEN  # nothing closes betting but the server's CLOSE
    driver.apply(LampClose("12"), 60.0)
    assert driver.lamp.signal.state is LampState.BETTING_CLOSED
    with pytest.raises(ValueError, match="until_close_s: must be a number of seconds >= 0"):
        LampDriver(Lamp(env), until_close_s=-1.0)


def test_a_held_open_without_a_betting_time_is_held_for_the_tables_period() -> None:
    from harness.bench.devices.lamp import OpenVerdict

    driver = OrdinalLampDriver(Lamp(simpy.Environment()), until_close_s=15.0)
    driver.server_opened = lambda _rid: OpenVerdict.HOLD
    driver.apply(LampOpen("4294967295", 0), 2.0)
    assert driver.held["4294967295"].deadline == 17.0
    driver.show_held("4294967295")
    assert driver.lamp.signal.deadline == 17.0 and driver.rounds == {"4294967295": 1}


def test_the_rig_lamp_on_the_vendor_bench_announces_the_benchs_betting_period() -> None:
    bench = load_bench("in-process", f"{VendorPollDialect.__module__}:VendorPollDialect")
    with Rig.build(bench, {"alice": 1_000}) as rig:
        assert rig.driver.until_close_s == bench.timing.betting_s
    with Rig.build(load_bench("in-process"), {"alice": 1_000}) as rig:
        assert rig.driver.until_close_s is None  # the ASCII OPEN carries its betting time


def test_numeric_round_ids_up_to_u32_map_to_rounds_and_back() -> None:
    env = simpy.Environment()
    driver = LampDriver(Lamp(env))
    opened: list[int] = []
    for i, rid in enumerate(("0", "4294967295", "7", "007")):
        driver.lamp.opened.callbacks.append(lambda e: opened.append(e.value.round))
        driver.apply(LampOpen(rid, 1000), float(i))
        env.run()
    assert driver.rounds["4294967295"] == 4294967295 and driver.rounds["7"] == 7
    assert driver.rounds["0"] != 0 and driver.rounds["007"] not in (0, 7)  # 0 is the lamp's "no round yet"
    assert len(set(driver.rounds.values())) == 4 and len(opened) == 4  # every round opened on the table
    assert [driver.wire_id(n) for n in (driver.rounds[r] for r in ("0", "4294967295", "7", "007"))] == [
        "0",
        "4294967295",
        "7",
        "007",
    ]
    codec = vendor_codec()
    frame = Frame(1, Source.SERVER, LampOpen("4294967295", 0))
    [back] = codec.decoder().feed(codec.encode(frame))
    assert back == frame
