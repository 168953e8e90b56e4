"""A device line on an MQTT broker, opened by the gateway for a ``--device NAME=mqtt://HOST:PORT/ROOT`` URL
(:func:`gameserver.gateway.open_serial`), for studios whose table devices sit on a broker.

The line's topic root ``ROOT`` is one or more topic levels: the server takes what the device sends from ``ROOT/up``
and publishes what it sends on ``ROOT/down`` (the device does the opposite). Every message is QoS 1 on a clean
session; the client pings the broker every ``keepalive_s`` seconds when idle. The gateway reads it as a byte stream,
as it reads a serial port.

One connection per port: when the broker connection is lost, every later read and write raises ``ConnectionError``
(an ``OSError``), so the gateway reports the line's problem, closes the port and opens a new one (its ``reopen``),
as it does for a TCP device that dropped its connection.

Needs the ``mqtt`` extra (paho-mqtt): ``pip install 'xocdia-hil[mqtt]'``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import threading
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paho.mqtt.client import Client

SCHEME = "mqtt://"
QOS = 1
KEEPALIVE_S = 5
CONNECT_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 0.05  # as the gateway's serial ports: a read returns within 50 ms
_URL = re.compile(
    r"mqtt://(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)):(?P<port>\d+)"
    r"/(?P<root>[^/+#?\s]+(?:/[^/+#?\s]+)*)",
    re.IGNORECASE,
)
FORM = "mqtt://HOST:PORT/ROOT (PORT 1-65535; ROOT topic levels joined by /, none empty, without + or #)"


class MqttLineError(OSError):
    """The line cannot be opened: a malformed URL, paho-mqtt not installed, or a broker that cannot be reached or
    refuses the connection or the subscription."""


def is_mqtt_url(url: str) -> bool:
    """True when ``url`` names a line on an MQTT broker (``mqtt://``, any case)."""
    return url[: len(SCHEME)].lower() == SCHEME


class MqttLine:
    """Device line ``name`` on the broker and topic root that ``url`` names, connected and subscribed to
    ``ROOT/up`` when constructed.

    Raises:
        MqttLineError: the URL is not ``mqtt://HOST:PORT/ROOT``, paho-mqtt is not installed (naming the extra), or the
            broker cannot be reached, refuses, or does not confirm the subscription within ``connect_timeout_s``.
    """

    def __init__(
        self,
        name: str,
        url: str,
        timeout_s: float = READ_TIMEOUT_S,
        keepalive_s: int = KEEPALIVE_S,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        found = _URL.fullmatch(url)
        if found is None or not 1 <= int(found["port"]) <= 65535:
            raise MqttLineError(f"{url!r} is not {FORM}")
        if importlib.util.find_spec("paho") is None:
            raise MqttLineError("mqtt:// device lines need paho-mqtt, not installed: pip install 'xocdia-hil[mqtt]'")
        from paho.mqtt.client import Client
        from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

        self.name = name
        self.timeout_s = timeout_s
        self.host, self.port = found["v6"] or found["host"], int(found["port"])
        root = found["root"]
        self.up_topic, self.down_topic = f"{root}/up", f"{root}/down"
        self._cond = threading.Condition()
        self._buffer = bytearray()
        self._up = False
        self._lost = False
        self._why = ""
        self._sub_mid: int | None = None
        self._done = threading.Event()
        client = Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"xocdia-server-{name}-{uuid.uuid4().hex[:12]}",
            clean_session=True,
            protocol=MQTTProtocolVersion.MQTTv311,
        )
        client.connect_timeout = connect_timeout_s
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        client.on_disconnect = self._on_disconnect
        self._client: Client = client
        where = f"{self.host}:{self.port}" if ":" not in self.host else f"[{self.host}]:{self.port}"
        try:
            client.connect(self.host, self.port, keepalive=keepalive_s)
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            raise MqttLineError(f"cannot reach the MQTT broker at {where} ({why})") from None
        client.loop_start()
        if not self._done.wait(connect_timeout_s) or not self._up:
            why = self._why or f"no answer within {connect_timeout_s:g} s"
            self.close()
            raise MqttLineError(f"the MQTT broker at {where} did not take the line ({why})")

    def _on_connect(self, client: Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure or self._lost:  # refused, or paho reconnecting a port the gateway replaces
            self._why = f"refused: {reason}"
            self._done.set()
            return
        _, self._sub_mid = client.subscribe(self.up_topic, qos=QOS)

    def _on_subscribe(self, client: Client, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        if mid == self._sub_mid:
            self._up = bool(reasons) and not any(r.is_failure for r in reasons)
            self._why = "" if self._up else f"subscription to {self.up_topic} refused"
            self._done.set()

    def _on_message(self, client: Client, userdata: Any, message: Any) -> None:
        with self._cond:
            if not self._lost:
                self._buffer += message.payload
                self._cond.notify_all()

    def _on_disconnect(self, client: Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        with self._cond:
            self._lost = True
            self._why = f"connection lost: {reason}"
            self._cond.notify_all()

    @property
    def in_waiting(self) -> int:
        """Bytes received and not read yet."""
        with self._cond:
            return len(self._buffer)

    def read(self, size: int = 1) -> bytes:
        """Up to ``size`` bytes, waiting at most the port's timeout (``b""`` if none came).

        Raises:
            ConnectionError: the broker connection was lost.
        """
        with self._cond:
            if not self._buffer and not self._lost:
                self._cond.wait(self.timeout_s)
            if self._lost:
                raise ConnectionError(f"device {self.name}: the MQTT broker at {self.host}:{self.port}: {self._why}")
            data = bytes(self._buffer[:size])
            del self._buffer[:size]
            return data

    def write(self, data: bytes) -> int:
        """Publish ``data`` as one message on ``ROOT/down`` (QoS 1) without waiting for the broker; returns its length.

        Raises:
            ConnectionError: the broker connection was lost.
        """
        if self._lost:
            raise ConnectionError(f"device {self.name}: the MQTT broker at {self.host}:{self.port}: {self._why}")
        if data:
            self._client.publish(self.down_topic, bytes(data), qos=QOS)
        return len(data)

    def close(self) -> None:
        """Disconnect and stop the client's thread; idempotent."""
        with self._cond:
            self._lost = True
            self._why = "closed"
        with contextlib.suppress(Exception):  # a connection that failed already: disconnecting is best effort
            self._client.disconnect()
        self._client.loop_stop()
