"""Interoperability: the reference game server's device gateway (its own decoder and link, written from
docs/protocol.md alone) reads the emulated devices over real ptys. Two independent implementations of the
protocol must agree: every report arrives, every frame is acknowledged both ways, no link goes down."""

from __future__ import annotations

import threading
from pathlib import Path

from gameserver.events import ReportKind, TableReport
from gameserver.gateway import DeviceGateway, open_serial
from harness.bench.devices.emulated import EmulatedTable
from harness.files import load_profile
from harness.wire.line_events import LinkEvent, Received
from harness.wire.messages import DEVICES, BowlOn, Hello, Result, Source
from harness.wire.realtime import SelectEnvironment
from harness.wire.transports.base import Transport
from harness.wire.transports.pty import PtyPort


def test_reference_gateway_reads_every_report_and_acknowledges_it(tmp_path: Path) -> None:
    ptys: dict[Source, Transport] = {d: PtyPort(d.value.lower(), tmp_path) for d in DEVICES}
    reports: list[TableReport] = []
    lock = threading.Lock()

    def submit(report: TableReport) -> None:
        with lock:
            reports.append(report)

    # the server opens its ports first (pyserial's open() flushes anything written before); without the server's
    # lamp the devices know no round, so their reports are untagged: the gateway runs in the 1.0 compatibility mode
    ports = {d.value: open_serial(d.value, t.address) for d, t in ptys.items()}
    gateway = DeviceGateway(ports, submit, accept_untagged=True)
    events: list[tuple[Source, LinkEvent]] = []
    env = SelectEnvironment()
    table = EmulatedTable(
        load_profile("compressed"),
        5,
        ptys,
        env=env,
        server_lamp=False,
        players=0,
        keep_reports=True,
        on_event=lambda src, e, _t: events.append((src, e)),
    )
    env.fds = table.hub.fds
    env.on_ready = table.wake
    gateway.start()
    try:
        env.sync()
        env.run(until=1.6)
        for _ in range(20):  # let the last ACKs travel
            if table.hub.pending() == 0:
                break
            env.run(until=env.now + 0.05)
    finally:
        gateway.stop()
        table.hub.close()
    assert table.reports is not None
    sent_results = [m.faces for _t, s, m in table.reports if isinstance(m, Result)]
    sent_bowl_on = sum(1 for _t, _s, m in table.reports if m == BowlOn())
    with lock:
        got = list(reports)
    assert len(sent_results) >= 2
    assert [r.faces for r in got if r.kind is ReportKind.RESULT] == sent_results
    assert sum(1 for r in got if r.kind is ReportKind.BOWL_ON) == sent_bowl_on
    assert not [r for r in got if r.kind is ReportKind.PROBLEM]  # no link went down, no I/O error
    assert table.hub.pending() == 0  # the gateway acknowledged every frame
    hellos = {src for src, e in events if isinstance(e, Received) and isinstance(e.frame.message, Hello)}
    assert hellos == set(DEVICES)  # and every device accepted the server's HELLO
