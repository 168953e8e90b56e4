"""The device end of a line on an MQTT broker (``mqtt://HOST:PORT/PREFIX``) against a real mosquitto process: its URL
form, bytes both ways with their message boundaries on the line's topics, the reference server's end of the same line
(``gameserver.mqtt_line``), an unreachable broker, and a broker restart seen as the line going down and being plugged
back in (also by the device hub)."""

from __future__ import annotations

import importlib.util
import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from paho.mqtt.client import Client, MQTTMessage
from paho.mqtt.enums import CallbackAPIVersion

from gameserver.events import ReportKind, TableReport
from gameserver.gateway import DeviceError, DeviceGateway, open_serial
from gameserver.mqtt_line import MqttLine
from harness.bench.devices.hub import DeviceHub
from harness.wire.frame_errors import BadFrame
from harness.wire.messages import BowlOn, Hello, Source
from harness.wire.text import FrameDecoder
from harness.wire.transports import MqttPort, Pluggable, TransportClosed
from harness.wire.transports.mqtt import MqttAddress, MqttUrlError, is_mqtt_url, parse_mqtt_url
from tests.wire.transports.mosquitto import Broker, free_port, running_broker

WAIT_S = 8.0
PREFIX = "studio-7/table-3"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    yield from running_broker(tmp_path)


def _until(what: Callable[[], bool], tick: Callable[[], object] | None = None, wait_s: float = WAIT_S) -> bool:
    """Poll ``what`` (ticking between polls) for at most ``wait_s`` seconds; its last answer."""
    deadline = time.monotonic() + wait_s
    while not what() and time.monotonic() < deadline:
        if tick is not None:
            tick()
        time.sleep(0.01)
    return what()


class Peer:
    """A plain paho client on the broker standing for the far end: it records what arrives on ``listen`` topics."""

    def __init__(self, broker: Broker, *topics: str) -> None:
        self.got: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self.client = Client(CallbackAPIVersion.VERSION2, client_id=f"peer-{time.monotonic_ns()}")
        self.client.on_message = self._message
        self.client.connect("127.0.0.1", broker.port)
        for topic in topics:
            self.client.subscribe(topic, qos=1)
        self.client.loop_start()
        time.sleep(0.3)  # the subscriptions are in place

    def _message(self, client: Client, userdata: object, message: MQTTMessage) -> None:
        self.got.put((message.topic, bytes(message.payload)))

    def publish(self, topic: str, data: bytes) -> None:
        self.client.publish(topic, data, qos=1).wait_for_publish(WAIT_S)

    def next(self) -> tuple[str, bytes]:
        return self.got.get(timeout=WAIT_S)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _chunks(port: MqttPort, count: int) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + WAIT_S
    while len(got) < count and time.monotonic() < deadline:
        chunk = port.read(0.2)
        if chunk:
            got.append(chunk)
    return got


# ---------------------------------------------------------------------------------------------- the URL
def test_an_mqtt_url_names_the_broker_and_the_topic_prefix() -> None:
    assert parse_mqtt_url("mqtt://broker.lab:1883/studio-7/table-3") == MqttAddress(
        "broker.lab", 1883, "studio-7/table-3"
    )
    assert parse_mqtt_url("MQTT://[::1]:8883/t") == MqttAddress("::1", 8883, "t")
    assert MqttAddress("::1", 8883, "t").url("bowl") == "mqtt://[::1]:8883/t/bowl"
    assert is_mqtt_url("Mqtt://x:1/y") and not is_mqtt_url("socket://x:1")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("mqtt://broker/t", "no port"),
        ("mqtt://broker:1883", "no topic prefix"),
        ("mqtt://broker:1883/", "no topic prefix"),
        ("mqtt://broker:0/t", "port 0 is out of range"),
        ("mqtt://broker:70000/t", "port 70000 is out of range"),
        ("mqtt://bro ker:1883/t", "the host or the port is malformed"),
        ("mqtt://broker:1883/t/#", "the topic prefix has a wildcard (+ or #) or a query"),
        ("mqtt://broker:1883/t/+/x", "the topic prefix has a wildcard (+ or #) or a query"),
        ("mqtt://broker:1883/t//x", "the topic prefix has an empty level"),
        ("mqtt://broker:1883/t/", "the topic prefix has an empty level"),
        ("mqtt://broker:1883/t x", "the topic prefix has a space or a control character"),
    ],
)
def test_a_bad_mqtt_url_says_what_is_wrong_and_the_form(url: str, why: str) -> None:
    with pytest.raises(MqttUrlError) as err:
        parse_mqtt_url(url)
    assert err.value.why == why
    assert str(err.value).endswith(
        "must be mqtt://HOST:PORT/PREFIX (HOST a name or an IPv4 address, an IPv6 address"
        " in [brackets]; PORT 1-65535; PREFIX topic levels joined by /, none empty, without"
        " + or #)"
    )


# ---------------------------------------------------------------------------------------------- bytes both ways
def test_bytes_go_both_ways_on_the_lines_topics_with_their_message_boundaries(broker: Broker) -> None:
    root = f"{PREFIX}/bowl"
    peer = Peer(broker, f"{root}/up")
    port = MqttPort("bowl", f"{broker.url}/{PREFIX}")
    try:
        assert port.connected and port.address == f"{broker.url}/{root}"
        assert not isinstance(port, Pluggable)  # a fault run cuts its bytes (the bench's cable) instead
        sent = [b"$1 0 BOWL HELLO id=BOWL-1\r\n", b"$2 0 BOWL", b" ON*0000\r\n", bytes(range(256))]
        for chunk in sent:
            port.write(chunk)
        assert [peer.next() for _ in sent] == [(f"{root}/up", chunk) for chunk in sent]  # one message each
        down = [b"$1 0 SRV ACK of=1*C448\r\n", b"x", b"$2 0 SRV LAMP st=OPEN\r\n"]
        for chunk in down:
            peer.publish(f"{root}/down", chunk)
        assert _chunks(port, len(down)) == down  # one read a message, in order
        assert port.read(0.0) == b""
        assert port.dropped == 0
    finally:
        port.close()
        peer.close()
    assert not port.connected and port.fds() == []
    with pytest.raises(TransportClosed, match="bowl: closed"):
        port.read()
    port.close()  # idempotent


def test_the_reference_servers_end_of_the_line_opens_the_address(broker: Broker) -> None:
    device = MqttPort("shaker", f"{broker.url}/{PREFIX}")
    server = open_serial("shaker", device.address)  # what the gateway opens for --device shaker=mqtt://...
    try:
        assert isinstance(server, MqttLine)
        time.sleep(0.2)
        device.write(b"$1 0 SHAKER HELLO id=SHAKER-1\r\n")
        assert _until(lambda: server.in_waiting >= 31)
        assert server.read(4) + server.read(100) == b"$1 0 SHAKER HELLO id=SHAKER-1\r\n"  # a byte stream
        assert server.read(1) == b""  # within its read timeout
        server.write(b"$1 0 SRV ACK of=1*C448\r\n")
        assert _chunks(device, 1) == [b"$1 0 SRV ACK of=1*C448\r\n"]
    finally:
        server.close()
        device.close()


def test_an_unreachable_broker_is_one_line_naming_it() -> None:
    port = free_port()
    with pytest.raises(TransportClosed) as err:
        MqttPort("reader", f"mqtt://127.0.0.1:{port}/{PREFIX}")
    assert str(err.value) == f"reader: cannot reach the MQTT broker at 127.0.0.1:{port} (Connection refused)"
    with pytest.raises(DeviceError) as server_err:
        open_serial("reader", f"mqtt://127.0.0.1:{port}/{PREFIX}/reader")
    assert str(server_err.value) == (
        f"cannot open device reader at 'mqtt://127.0.0.1:{port}/{PREFIX}/reader': cannot reach the MQTT broker at"
        f" 127.0.0.1:{port} (Connection refused)"
    )


# ---------------------------------------------------------------------------------------------- losses and re-plugs
def test_a_broker_restart_is_the_line_down_then_plugged_back_in(broker: Broker) -> None:
    port = MqttPort("lamp", f"{broker.url}/{PREFIX}")
    server = MqttLine("lamp", port.address)
    try:
        broker.stop()
        assert _until(lambda: not port.connected)  # down as soon as the connection is lost, before any tick
        with pytest.raises(TransportClosed, match=r"lamp: the MQTT broker at 127\.0\.0\.1:\d+: connection lost"):
            port.read()
        with pytest.raises(ConnectionError):  # the server's end: its gateway reopens it
            server.read(1)
        assert port.tick(1.0) == 1.0 and not port.connected  # the loss taken in: the line is down
        assert port.read() == b""  # a line that is down is not gone
        port.write(b"lost with the cable")
        assert port.dropped == len(b"lost with the cable")
        broker.start()
        assert _until(lambda: port.link_up)  # the client reconnects on its own
        assert not port.connected  # until the owner's next tick takes the connection in
        assert port.tick(2.0) is None and port.connected  # plugged back in
        assert port.losses == 1
        server.close()
        server = MqttLine("lamp", port.address)
        time.sleep(0.2)
        port.write(b"back")
        assert _until(lambda: server.in_waiting == 4) and server.read(4) == b"back"
    finally:
        server.close()
        port.close()


def test_a_loss_and_a_reconnect_between_two_ticks_still_show_the_line_down_once(broker: Broker) -> None:
    port = MqttPort("console", f"{broker.url}/{PREFIX}")
    try:
        broker.stop()
        broker.start()
        assert _until(lambda: port.link_up and port.losses == 1)  # back before anyone looked
        assert not port.connected  # the loss is not taken in yet
        assert port.tick(5.0) == 5.0 and not port.connected  # the first tick after the loss: down
        assert port.tick(5.1) is None and port.connected  # the next one: plugged back in
    finally:
        port.close()


def test_the_device_hub_sees_a_broker_restart_as_a_replug_and_says_hello_again(broker: Broker) -> None:
    peer = Peer(broker, f"{PREFIX}/bowl/up")
    port = MqttPort("bowl", f"{broker.url}/{PREFIX}")
    hub = DeviceHub({Source.BOWL: port}, require_ack=False)
    decoder = FrameDecoder()

    seen: list[object] = []  # what the far end received, decoded

    def frames() -> list[object]:
        while not peer.got.empty():
            seen.extend(f.message for f in decoder.feed(peer.got.get()[1]) if not isinstance(f, BadFrame))
        return seen

    try:
        hub.start(0.0)
        assert _until(lambda: any(isinstance(m, Hello) for m in frames()), lambda: hub.service(time.monotonic()))
        broker.stop()
        broker.start()
        peer.close()
        peer = Peer(broker, f"{PREFIX}/bowl/up")  # a clean session: the far end subscribes again too
        seen.clear()
        assert _until(lambda: port.link_up)
        hub.service(time.monotonic())  # the first service after the loss: down
        assert not hub.ports["bowl"].connected
        hub.send(Source.BOWL, BowlOn(), time.monotonic())  # queued while down
        assert _until(lambda: len(frames()) >= 2, lambda: hub.service(time.monotonic()))
        assert isinstance(seen[0], Hello) and isinstance(seen[1], BowlOn)  # HELLO again, then what was queued
        assert hub.ports["bowl"].connected
    finally:
        hub.close()
        peer.close()


def test_the_servers_gateway_reports_a_lost_broker_and_opens_the_line_again(broker: Broker) -> None:
    device = MqttPort("bowl", f"{broker.url}/{PREFIX}")
    hub = DeviceHub({Source.BOWL: device})
    url = device.address
    reports: queue.Queue[TableReport] = queue.Queue()
    gateway = DeviceGateway(
        {"bowl": open_serial("bowl", url)}, reports.put, silence_s=60.0, reopen=lambda name: open_serial(name, url)
    )
    first = gateway.ports["bowl"]

    def serve() -> None:
        hub.service(time.monotonic())

    def link_up() -> bool:
        return bool(gateway.status()["bowl"]["up"])

    gateway.start()
    hub.start(time.monotonic())
    try:
        assert _until(link_up, serve)  # the device's HELLO reached the server, over the broker
        broker.stop()
        problem = reports.get(timeout=WAIT_S)
        assert problem.kind is ReportKind.PROBLEM and "connection lost" in problem.detail
        broker.start()
        assert _until(lambda: gateway.ports["bowl"] is not first)  # a new connection, once the broker is back
        assert isinstance(gateway.ports["bowl"], MqttLine)
        hub.send(Source.BOWL, BowlOn(), time.monotonic())
        got: list[TableReport] = []
        assert _until(lambda: any(r.kind is ReportKind.BOWL_ON for r in _drain(reports, got)), serve)  # bytes again
    finally:
        gateway.stop()
        hub.close()


def _drain(reports: queue.Queue[TableReport], into: list[TableReport]) -> list[TableReport]:
    """``into``, with the reports queued since added."""
    while not reports.empty():
        into.append(reports.get())
    return into


def test_the_servers_mqtt_line_without_paho_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "paho" else real(name, *a))
    with pytest.raises(DeviceError) as err:
        open_serial("bowl", "mqtt://127.0.0.1:1883/studio/bowl")
    assert str(err.value) == (
        "cannot open device bowl at 'mqtt://127.0.0.1:1883/studio/bowl': mqtt:// device lines need paho-mqtt, not"
        " installed: pip install 'xocdia-hil[mqtt]'"
    )
