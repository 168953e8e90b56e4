"""Which optional capabilities (``harness.wire.transports.capabilities``) each transport has, pinned, and how
:func:`layers` walks the wrappers: unplugging, line pacing and RFC 2217 negotiation decide by ``isinstance`` alone."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.bench.wiring import _Cable
from harness.wire.trace import TraceRecorder, TracingTransport
from harness.wire.transports.base import Relay, Transport
from harness.wire.transports.capabilities import (
    MAX_LAYERS,
    LineConfigurable,
    LineNegotiating,
    Pluggable,
    Replugging,
    Wrapping,
    layers,
)
from harness.wire.transports.faults import FaultyTransport
from harness.wire.transports.line import LineSettings
from harness.wire.transports.memory import memory_pipe
from harness.wire.transports.netserver import SerialServer
from harness.wire.transports.paced import PacedTransport
from harness.wire.transports.pty import PtyPort
from harness.wire.transports.url import SerialUrl

CAPABILITIES: tuple[type, ...] = (Pluggable, Replugging, LineNegotiating, LineConfigurable, Wrapping)


def _names(transport: Transport) -> set[str]:
    return {c.__name__ for c in CAPABILITIES if isinstance(transport, c)}


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[dict[str, Transport]]:
    device, _server = memory_pipe("bowl")
    faulty = FaultyTransport(device, random.Random(0), lambda: 0.0)
    ports: dict[str, Transport] = {
        "memory": device,
        "pty": PtyPort("bowl", tmp_path),
        "url": SerialUrl("bowl", "loop://"),
        "serial server": SerialServer("bowl", rfc2217=True),
        "faulty": faulty,
        "relay": Relay(device),
        "paced": PacedTransport(device, LineSettings(), lambda: 0.0, hold_tx=False),
        "traced": TracingTransport(device, TraceRecorder()),
        "cable": _Cable(device),
    }
    yield ports
    for name in ("pty", "url", "serial server"):
        ports[name].close()


EXPECTED = {
    "memory": {"Pluggable", "Replugging"},
    "pty": {"Pluggable", "Replugging"},
    "url": {"LineConfigurable"},
    "serial server": {"LineNegotiating"},
    "faulty": {"Pluggable", "Replugging", "Wrapping"},
    "relay": {"Wrapping"},
    "paced": {"Wrapping"},
    "traced": {"Wrapping"},
    "cable": {"Replugging", "Wrapping"},  # not Pluggable: a fault wrapper over it cuts the bytes instead
}


def test_each_transport_has_exactly_its_capabilities(opened: dict[str, Transport]) -> None:
    assert {name: _names(t) for name, t in opened.items()} == EXPECTED


def test_layers_walks_the_wrappers_outermost_first() -> None:
    device, _server = memory_pipe("reader")
    faulty = FaultyTransport(device, random.Random(0), lambda: 0.0)
    paced = PacedTransport(faulty, LineSettings(), lambda: 0.0, hold_tx=False)
    assert list(layers(paced)) == [paced, faulty, device]
    assert list(layers(device)) == [device]


def test_layers_stops_at_its_depth() -> None:
    device, _server = memory_pipe("reader")
    outer: Transport = device
    for _ in range(MAX_LAYERS + 4):
        outer = Relay(outer)
    assert len(list(layers(outer))) == MAX_LAYERS
