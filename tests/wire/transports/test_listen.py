"""A device end that listens (``listen://``): the game server dials it with pyserial's ``socket://``, over real
loopback TCP sockets. One client at a time, bytes both ways, writes with no client counted, a reconnect (also one
that comes before the old connection's end was read) and an unplug seen by the device hub as a re-plug."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing

import pytest
import serial

from harness.bench.devices.hub import DeviceHub
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import BowlOn, Frame, Hello, Source
from harness.wire.text import FrameDecoder
from harness.wire.transports import (
    LineConfigurable,
    LineNegotiating,
    ListenPort,
    Pluggable,
    Replugging,
    TransportClosed,
    Wrapping,
)
from harness.wire.transports.listen import ListenAddress, ListenUrlError, is_listen_url, parse_listen_url

WAIT_S = 5.0
ACK_HELLO = b"$1 0 SRV ACK of=1*C448\r\n"  # the server acknowledges the device's HELLO (seq 1)


def _until(what: Callable[[], bool], tick: Callable[[], object] | None = None) -> bool:
    """Poll ``what`` (ticking between polls) for at most WAIT_S seconds; its last answer."""
    deadline = time.monotonic() + WAIT_S
    while not what() and time.monotonic() < deadline:
        if tick is not None:
            tick()
        time.sleep(0.005)
    return what()


def _dial(port: ListenPort) -> serial.Serial:
    """What the game server does: pyserial's socket:// to the address the port gives."""
    return serial.serial_for_url(port.address, timeout=0.05)


class HubThread:
    """Services a hub on the wall clock in a background thread (the bench's loop, minus SimPy); holding ``lock``
    pauses it."""

    def __init__(self, hub: DeviceHub) -> None:
        self.hub = hub
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            select.select(self.hub.fds(), [], [], 0.01)
            with self.lock:
                self.hub.service(time.monotonic())

    def send(self, message: BowlOn) -> None:
        with self.lock:
            self.hub.send(Source.BOWL, message, time.monotonic())


@pytest.fixture
def served() -> Iterator[tuple[HubThread, ListenPort]]:
    port = ListenPort("bowl")
    hub = DeviceHub({Source.BOWL: port})
    runner = HubThread(hub)
    hub.start(time.monotonic())
    runner.thread.start()
    yield runner, port
    runner.stop.set()
    runner.thread.join(timeout=5)
    hub.close()


def _frames(client: serial.Serial, count: int) -> list[Frame]:
    decoder, frames = FrameDecoder(), list[Frame]()
    deadline = time.monotonic() + WAIT_S
    while len(frames) < count and time.monotonic() < deadline:
        frames += [f for f in decoder.feed(client.read(256)) if not isinstance(f, BadFrame)]
    return frames


def _is_hello(frame: Frame) -> bool:
    return isinstance(frame.message, Hello)


def _acked_hello(client: serial.Serial) -> None:
    """Read the device's HELLO and acknowledge it, so that the device sends it again only when its end is opened
    again (not as a retransmission)."""
    assert _is_hello(_frames(client, 1)[0])
    client.write(ACK_HELLO)
    time.sleep(0.3)  # past a retransmission that was on its way
    client.reset_input_buffer()


def _read(client: serial.Serial, count: int) -> bytes:
    """What the client reads within WAIT_S seconds, up to ``count`` bytes."""
    got = b""
    deadline = time.monotonic() + WAIT_S
    while len(got) < count and time.monotonic() < deadline:
        got += client.read(count - len(got))
    return got


# ---------------------------------------------------------------------------------------------- the URL
@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("listen://127.0.0.1:4001", ListenAddress("127.0.0.1", 4001)),
        ("LISTEN://table-gw.lab:0", ListenAddress("table-gw.lab", 0)),
        ("listen://[::1]:65535", ListenAddress("::1", 65535)),
    ],
)
def test_a_listen_url_names_a_host_and_a_port(url: str, address: ListenAddress) -> None:
    assert is_listen_url(url)
    assert parse_listen_url(url) == address


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("listen://127.0.0.1", "no port"),
        ("listen://:4001", "the host or the port is malformed"),
        ("listen://host:port", "the host or the port is malformed"),
        ("listen://host:4001/x", "the host or the port is malformed"),
        ("listen://host:65536", "port 65536 is out of range"),
        ("socket://host:4001", "not a listen:// URL"),
    ],
)
def test_a_bad_listen_url_says_what_is_wrong_and_the_form(url: str, why: str) -> None:
    with pytest.raises(ListenUrlError) as err:
        parse_listen_url(url)
    assert err.value.why == why
    assert "listen://HOST:PORT" in str(err.value) and url in str(err.value)


def test_pyserial_urls_and_paths_are_not_listen_urls() -> None:
    assert not any(is_listen_url(u) for u in ("socket://h:1", "rfc2217://h:1", "/dev/ttyUSB0", "loop://"))


# ---------------------------------------------------------------------------------------------- the transport
def test_the_server_dials_the_port_and_bytes_go_both_ways() -> None:
    with closing(ListenPort("bowl")) as port:
        assert port.address == f"socket://127.0.0.1:{port.port}" and port.port > 0
        kinds = (Pluggable, Replugging, LineNegotiating, LineConfigurable, Wrapping)
        assert {k.__name__ for k in kinds if isinstance(port, k)} == {"Pluggable", "Replugging"}
        assert not port.connected
        with _dial(port) as client:
            assert _until(lambda: port.connected, lambda: port.tick(0.0))
            port.write(b"$1 0 BOWL HELLO\r\n")
            assert _read(client, 17) == b"$1 0 BOWL HELLO\r\n"
            client.write(b"from the server")
            assert port.read(1.0) == b"from the server"
            assert port.read(0.0) == b""
        assert port.dropped == 0 and port.accepted == 1


def test_a_second_client_is_refused_while_one_is_connected() -> None:
    with closing(ListenPort("bowl")) as port, _dial(port) as first:
        assert _until(lambda: port.connected, lambda: port.tick(0.0))
        with socket.create_connection(("127.0.0.1", port.port), timeout=WAIT_S) as second:
            assert _until(lambda: port.refused == 1, lambda: port.tick(0.0))
            assert second.recv(16) == b""  # closed by the device end at once
        first.write(b"still the line")
        assert port.read(1.0) == b"still the line"  # the first client keeps the line
        assert port.accepted == 1


def test_bytes_written_with_no_client_are_dropped_and_counted() -> None:
    with closing(ListenPort("bowl")) as port:
        port.write(b"12345")  # nobody dialled yet
        assert port.dropped == 5
        with _dial(port) as client:
            assert _until(lambda: port.connected, lambda: port.tick(0.0))
        with pytest.raises(TransportClosed, match="closed its connection"):
            assert _until(lambda: port.read(0.05) != b"")
        assert not port.connected
        port.write(b"lost")
        assert port.dropped == 9
        with _dial(port) as client:  # the next client gets none of what was written meanwhile
            assert _until(lambda: port.connected, lambda: port.tick(0.0))
            port.write(b"new")
            assert _read(client, 3) == b"new"


def test_the_line_is_down_for_one_tick_between_two_connections() -> None:
    with closing(ListenPort("bowl")) as port:
        first = _dial(port)
        assert _until(lambda: port.connected, lambda: port.tick(0.0))
        first.close()
        assert _until(lambda: not port.connected, lambda: port.write(b"x"))  # the end seen by a write, not a read
        with _dial(port):
            time.sleep(0.05)  # the new connection waits in the kernel
            assert port.tick(0.0) is None and not port.connected  # an owner that ticks sees the line down
            assert _until(lambda: port.connected, lambda: port.tick(0.0))
        assert port.accepted == 2 and port.dropped >= 1


def test_an_address_in_use_cannot_be_bound_and_the_error_names_it() -> None:
    with closing(ListenPort("bowl")) as taken:
        in_use = rf"^shaker: cannot listen on 127\.0\.0\.1:{taken.port}: "
        with pytest.raises(TransportClosed, match=in_use):
            ListenPort("shaker", "127.0.0.1", taken.port)


def test_a_fixed_port_binds_again_at_once_after_a_connection() -> None:
    port = ListenPort("bowl")
    number = port.port
    with _dial(port):
        assert _until(lambda: port.connected, lambda: port.tick(0.0))
        port.write(b"x")
    port.close()
    port.close()  # idempotent
    with pytest.raises(TransportClosed, match="closed"):
        port.read()
    with closing(ListenPort("bowl", "127.0.0.1", number)) as again:  # the old connection's TIME_WAIT does not block it
        assert again.port == number


# ---------------------------------------------------------------------------------------------- under the hub
def test_the_hub_sends_hello_when_the_server_connects(served: tuple[HubThread, ListenPort]) -> None:
    runner, port = served
    with _dial(port) as client:
        first = _frames(client, 1)
        assert [f.message for f in first] == [Hello("BOWL-0001", 1, "xocdia-hil-0.1")]
        client.write(ACK_HELLO)
        runner.send(BowlOn())
        later = [f.message for f in _frames(client, 4) if not _is_hello(f)]  # HELLO again if the ACK came late
        assert later[:1] == [BowlOn()]


@pytest.mark.parametrize("at_once", [False, True], ids=["after-the-end-is-read", "before-the-end-is-read"])
def test_a_reconnect_is_a_replug_the_device_says_hello_again(
    served: tuple[HubThread, ListenPort], at_once: bool
) -> None:
    runner, port = served
    client = _dial(port)
    _acked_hello(client)
    if at_once:
        with runner.lock:  # the hub sleeps through the disconnect and the new connection
            client.close()
            again = _dial(port)
            time.sleep(0.05)  # the old connection's end and the new connection are both in the kernel
    else:
        client.close()
        assert _until(lambda: not port.connected)
        again = _dial(port)
    with again:
        frames = _frames(again, 1)
        assert frames and _is_hello(frames[0]), frames  # the device end was closed and opened again
        assert (port.refused, port.accepted) == (0, 2)


def test_an_unplugged_port_drops_the_client_and_refuses_until_replugged(served: tuple[HubThread, ListenPort]) -> None:
    runner, port = served
    with _dial(port) as client:
        _acked_hello(client)
        with runner.lock:
            port.unplug()
        with pytest.raises(serial.SerialException):  # the server sees its connection end, as on a pulled cable
            assert _until(lambda: client.read(16) != b"")
    with socket.create_connection(("127.0.0.1", port.port), timeout=WAIT_S) as meanwhile:
        assert _until(lambda: port.refused == 1)
        assert meanwhile.recv(16) == b""
    with runner.lock:
        port.replug()
    with _dial(port) as again:
        frames = _frames(again, 1)
        assert frames and _is_hello(frames[0])
    assert port.accepted == 2


def test_an_unplug_and_replug_the_hub_slept_through_is_still_a_replug(served: tuple[HubThread, ListenPort]) -> None:
    runner, port = served
    with _dial(port) as client:
        _acked_hello(client)
        with runner.lock:  # pulled and put back between two services, and the server dials again at once
            port.unplug()
            port.replug()
            again = _dial(port)
            time.sleep(0.05)
    with again:
        frames = _frames(again, 1)
        assert frames and _is_hello(frames[0]), frames
