"""Wiring a bench's lines: the device end and the server end of each line (in-memory pipes, ptys, TCP serial servers,
URLs the device end dials, addresses it listens on), and the wrappers the device ends get (the camera's latency,
serial faults for a fault run, line pacing)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.bench.config import Bench
from harness.wire.dialects import LineSpec
from harness.wire.messages import Source
from harness.wire.transports.base import Relay, Transport, TransportClosed
from harness.wire.transports.faults import FaultRates, FaultyTransport
from harness.wire.transports.listen import ListenPort, is_listen_url, parse_listen_url
from harness.wire.transports.memory import memory_pipe
from harness.wire.transports.mqtt import MqttPort, is_mqtt_url
from harness.wire.transports.netserver import SerialServer
from harness.wire.transports.paced import pace_lines
from harness.wire.transports.pty import PtyPort
from harness.wire.transports.url import SerialUrl


def wire_lines(bench: Bench, plan: list[LineSpec], workdir: Path) -> tuple[dict[str, Transport], dict[str, Any]]:
    """The device end and the server end of each line, by line name: in-memory pipes, ptys (a ``tcp`` line: a raw TCP
    serial server the server opens as ``socket://``), or the bench's URLs (:func:`_url_line`: a device end that dials,
    or one that listens). Raises TransportClosed when a line cannot be opened or bound; none is left open then."""
    device: dict[str, Transport] = {}
    server: dict[str, Any] = {}
    try:
        for line in plan:
            name = line.name
            if bench.transport == "memory":
                device[name], server[name] = memory_pipe(name)
            elif bench.transport == "pty" and line.medium == "tcp":
                net = SerialServer(name, rfc2217=False)
                device[name], server[name] = net, net.address
            elif bench.transport == "pty":
                pty = PtyPort(name, workdir)
                device[name], server[name] = pty, pty.address
            else:
                device[name], server[name] = _url_line(name, bench.device_urls[name])
    except BaseException:
        for opened in device.values():
            opened.close()
        raise
    return device, server


def _url_line(name: str, url: str) -> tuple[Transport, str]:
    """The device end of a ``url`` bench's line and what the server opens: for ``listen://HOST:PORT`` a TCP server
    bound there (:class:`~harness.wire.transports.listen.ListenPort`) and ``socket://HOST:PORT`` with the port bound
    (port 0: the one chosen), for ``mqtt://HOST:PORT/PREFIX`` an MQTT client on the line's topics
    (:class:`~harness.wire.transports.mqtt.MqttPort`) and ``mqtt://HOST:PORT/PREFIX/LINE``, else the pyserial URL or
    path the device end dials or opens, and the same URL. Raises TransportClosed when it cannot be opened, bound or
    connected."""
    if is_listen_url(url):
        address = parse_listen_url(url)  # validated with the bench file
        port = ListenPort(name, address.host, address.port)
        return port, port.address
    if is_mqtt_url(url):  # the line's topics under the prefix; the server opens mqtt://HOST:PORT/PREFIX/LINE
        mqtt = MqttPort(name, url)
        return mqtt, mqtt.address
    return SerialUrl(name, url), url


def wrap_device_ends(
    bench: Bench,
    plan: list[LineSpec],
    device: dict[str, Transport],
    server: Mapping[str, Any],
    clock: Callable[[], float],
) -> dict[str, FaultyTransport]:
    """Wrap the device ends in place: the camera's latency on the reader's own line (not on a bus, where it would
    delay every device's answers) and, when the server options say ``serial_faults: true`` (a fault run,
    ``prepare_bench``), serial faults on each line the server opens itself (an in-memory server end is the in-process
    adapter's to wrap). One FaultyTransport a line (the camera's latency is its base tx rate: nested ones would lose
    the inner one's tick deadline), between the trace and a :class:`_Cable`. Returns line name -> serial wrapper, each
    with a ``random.Random`` of its own from ``fault_seed``."""
    wrap, seed = bench.server.options.get("serial_faults", False), bench.server.options.get("fault_seed", 0)
    out: dict[str, FaultyTransport] = {}
    for line in plan:
        name = line.name
        camera = line.roles == (Source.READER,) and bench.reader_latency_s > 0  # it reads once the bowl is off
        tx = FaultRates(latency=bench.reader_latency_s) if camera else None
        if wrap and not isinstance(server[name], Transport):
            rng = random.Random(f"{seed}/serial/{name}")
            device[name] = out[name] = FaultyTransport(_Cable(device[name]), rng, clock, tx=tx)
        elif camera:
            device[name] = FaultyTransport(device[name], random.Random(f"xocdia-reader/{bench.seed}"), clock, tx=tx)
    pace_lines(device, server, bench.paced_line, clock)  # outermost, under the trace: it records line times
    return out


class _Cable(Relay):
    """The bench's end (pty, URL, or an address it listens on: no tick deadline) of a line the server opened itself.
    With no ``unplug`` (it is :class:`~harness.wire.transports.capabilities.Replugging`, not ``Pluggable``), a
    FaultyTransport over it pulls the cable by cutting the bytes (the device sees its port gone) and leaves the
    server's port open: the server sees silence, as when a UART's cable is pulled, never an I/O error."""

    def replug(self) -> None:
        """Drop what the server wrote while the cable was out: it never reached the device (bounded)."""
        with contextlib.suppress(TransportClosed):
            for _ in range(64):
                if not self.inner.read(0.0):
                    return
