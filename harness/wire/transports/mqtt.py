"""The device end of a line as an MQTT client: :class:`MqttPort`, named in a bench file as
``mqtt://HOST:PORT/PREFIX`` (:func:`parse_mqtt_url`; docs/benches.md, "Device lines on an MQTT broker"), for studios
whose table devices sit on a broker.

Topics: the line ``LINE`` under the prefix ``PREFIX`` has the root ``PREFIX/LINE``; the device end publishes what the
device sends on ``ROOT/up`` and takes what it receives from ``ROOT/down``. The server end does the opposite; it opens
``mqtt://HOST:PORT/PREFIX/LINE`` (:attr:`MqttPort.address`), which the reference server's gateway opens as an MQTT line
(``gameserver/mqtt_line.py``). Every message is QoS 1, the session is clean (the broker keeps nothing for a client
between connections) and the client pings the broker every ``keepalive_s`` seconds when idle.

Bytes keep their message boundaries: each :meth:`MqttPort.write` is one message, and each :meth:`MqttPort.read`
returns the payload of one message, oldest first. A lost broker connection is the cable pulled: the line is down, what
was in flight or unread is lost, bytes written meanwhile are lost and counted in ``dropped``, and the client
reconnects on its own (after ``reconnect_min_s``, doubling up to ``reconnect_max_s``). The connection that comes back
is a re-plug: :attr:`MqttPort.connected` stays False through the first :meth:`MqttPort.tick` after a loss, so an owner
that ticks before it looks at ``connected`` (the device hub) always sees the line go down and come back, and closes
and opens its device end (the device sends HELLO again).

Needs the ``mqtt`` extra (paho-mqtt): ``pip install 'xocdia-hil[mqtt]'``.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import require_extra
from harness.wire.transports.base import Transport, TransportClosed

if TYPE_CHECKING:
    from paho.mqtt.client import Client

__all__ = [
    "MQTT_EXTRA",
    "MQTT_FORMS",
    "MqttAddress",
    "MqttPort",
    "MqttUrlError",
    "is_mqtt_url",
    "parse_mqtt_url",
    "require_mqtt",
]

SCHEME = "mqtt://"
#: The extra that installs the MQTT client, and the modules behind it (for :func:`~harness.errors.require_extra`).
MQTT_EXTRA = "mqtt"
MQTT_MODULES = {"paho": "paho-mqtt"}
#: The form an ``mqtt://`` URL takes, as error messages name it.
MQTT_FORMS = (
    "mqtt://HOST:PORT/PREFIX (HOST a name or an IPv4 address, an IPv6 address in [brackets]; PORT 1-65535; PREFIX "
    "topic levels joined by /, none empty, without + or #)"
)
MAX_PORT = 65535
QOS = 1
UP, DOWN = "up", "down"  # the device end publishes on ROOT/up and subscribes to ROOT/down
DEFAULT_KEEPALIVE_S = 5
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_RECONNECT_MIN_S = 0.2
DEFAULT_RECONNECT_MAX_S = 2.0
_HOST_PORT = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)):(?P<port>\d+)"
)


class MqttUrlError(ValueError):
    """An ``mqtt://`` URL that does not name a broker and a topic prefix; :attr:`why` says what is wrong with it."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"{url!r}: {why}; must be {MQTT_FORMS}")
        self.url = url
        self.why = why


@dataclass(frozen=True, slots=True)
class MqttAddress:
    """A broker (``host``, IPv6 without brackets, and ``port``) and a topic ``prefix`` (no leading or trailing
    ``/``)."""

    host: str
    port: int
    prefix: str

    @property
    def hostport(self) -> str:
        """``HOST:PORT``, an IPv6 host in brackets."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def url(self, *levels: str) -> str:
        """``mqtt://HOST:PORT/PREFIX``, with ``levels`` appended as topic levels."""
        return f"{SCHEME}{self.hostport}/{'/'.join((self.prefix, *levels))}"


def is_mqtt_url(url: str) -> bool:
    """True when ``url`` names a line on an MQTT broker (``mqtt://``, any case)."""
    return url[: len(SCHEME)].lower() == SCHEME


def parse_mqtt_url(url: str) -> MqttAddress:
    """The broker and the topic prefix of an ``mqtt://HOST:PORT/PREFIX`` URL.

    Raises:
        MqttUrlError: ``url`` is not ``mqtt://`` followed by ``HOST:PORT/PREFIX``: a malformed host, no port or one
            outside 1-65535, no prefix, an empty topic level, a wildcard (``+``, ``#``), a query or a fragment.
    """
    if not is_mqtt_url(url):
        raise MqttUrlError(url, "not an mqtt:// URL")
    rest = url[len(SCHEME) :]
    where, slash, prefix = rest.partition("/")
    found = _HOST_PORT.fullmatch(where)
    if found is None:
        raise MqttUrlError(url, "no port" if ":" not in where else "the host or the port is malformed")
    port = int(found["port"])
    if not 1 <= port <= MAX_PORT:
        raise MqttUrlError(url, f"port {port} is out of range")
    if not slash or not prefix:
        raise MqttUrlError(url, "no topic prefix")
    if "?" in prefix or "#" in prefix or "+" in prefix:
        raise MqttUrlError(url, "the topic prefix has a wildcard (+ or #) or a query")
    if any(not level for level in prefix.split("/")):
        raise MqttUrlError(url, "the topic prefix has an empty level")
    if any(ch.isspace() or ord(ch) < 32 for ch in prefix):
        raise MqttUrlError(url, "the topic prefix has a space or a control character")
    return MqttAddress(found["v6"] or found["host"], port, prefix)


def require_mqtt(what: str) -> None:
    """Check that the MQTT client is installed.

    Raises:
        MissingExtra: ``WHAT needs paho-mqtt, not installed: pip install 'xocdia-hil[mqtt]'``.
    """
    require_extra(MQTT_EXTRA, MQTT_MODULES, what)


class MqttPort(Transport):
    """The device end of line ``name`` on the broker and prefix ``url`` names (``mqtt://HOST:PORT/PREFIX``), connected
    and subscribed when constructed (module docstring: topics, QoS, keepalive, losses and re-plugs).

    :meth:`fds` is a descriptor that turns readable when a message arrives or the connection goes down or comes back,
    so a selector wakes for either.

    Raises:
        MissingExtra: paho-mqtt is not installed (the message names the extra).
        MqttUrlError: ``url`` is not an ``mqtt://HOST:PORT/PREFIX`` URL.
        TransportClosed: the broker cannot be reached, refuses the connection, or does not accept the subscription
            within ``connect_timeout_s``; the message names the line and the broker.
    """

    def __init__(
        self,
        name: str,
        url: str,
        *,
        keepalive_s: int = DEFAULT_KEEPALIVE_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        reconnect_min_s: float = DEFAULT_RECONNECT_MIN_S,
        reconnect_max_s: float = DEFAULT_RECONNECT_MAX_S,
    ) -> None:
        require_mqtt(f"line {name} ({url})")
        from paho.mqtt.client import Client
        from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

        self.name = name
        self.url = url
        self.broker = parse_mqtt_url(url)
        self.root = f"{self.broker.prefix}/{name}"
        self.up_topic, self.down_topic = f"{self.root}/{UP}", f"{self.root}/{DOWN}"
        #: Connections to the broker that were lost so far.
        self.losses = 0
        self._lock = threading.Lock()
        self._chunks: deque[bytes] = deque()
        self._up = False  # connected and subscribed (paho's thread sets it)
        self._why = ""  # why the last connection attempt or connection failed
        self._sub_mid: int | None = None
        self._seen_losses = 0  # losses as of the last tick
        self._published = False  # what :attr:`connected` reports, moved by tick
        self._closed = False
        self._ready = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        client = Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"xocdia-hil-{name}-{uuid.uuid4().hex[:12]}",
            clean_session=True,
            protocol=MQTTProtocolVersion.MQTTv311,
        )
        client.connect_timeout = connect_timeout_s
        client.reconnect_delay_set(reconnect_min_s, reconnect_max_s)  # type: ignore[arg-type]  # seconds, floats work
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        client.on_disconnect = self._on_disconnect
        self._client: Client = client
        try:
            client.connect(self.broker.host, self.broker.port, keepalive=keepalive_s)
        except (OSError, ValueError) as exc:
            self._release()
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            raise TransportClosed(f"{name}: cannot reach the MQTT broker at {self.broker.hostport} ({why})") from exc
        client.loop_start()
        if not self._ready.wait(connect_timeout_s) or not self._up:
            why = self._why or f"no answer within {connect_timeout_s:g} s"
            self.close()
            raise TransportClosed(f"{name}: the MQTT broker at {self.broker.hostport} did not take the line ({why})")
        self._published = True

    # --- paho's network thread ------------------------------------------------------------------------------
    def _on_connect(self, client: Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self._why = f"refused: {reason}"
            self._ready.set()
            return
        lost = client.drop_out_messages()  # written while down or in flight at the loss: lost with the cable
        _, mid = client.subscribe(self.down_topic, qos=QOS)
        with self._lock:
            self.dropped += sum(len(m.payload) for m in lost)
            self._sub_mid = mid

    def _on_subscribe(self, client: Client, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        granted = bool(reasons) and not any(r.is_failure for r in reasons)
        with self._lock:
            if mid != self._sub_mid:
                return
            self._up = granted
            if not granted:
                self._why = f"subscription to {self.down_topic} refused"
        self._ready.set()
        self._wake()

    def _on_message(self, client: Client, userdata: Any, message: Any) -> None:
        payload = bytes(message.payload)
        if not payload:
            return
        with self._lock:
            if not self._up:
                return  # a delivery racing the loss: lost with the cable
            self._chunks.append(payload)
        self._wake()

    def _on_disconnect(self, client: Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        with self._lock:
            was_up, self._up = self._up, False
            if was_up:
                self.losses += 1
                self._why = f"connection lost: {reason}"
            self._chunks.clear()  # what was not read yet is lost with the cable
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # a full pipe is awake already; a closed one has nobody to wake
            os.write(self._wake_w, b"!")

    # --- the owner's side -----------------------------------------------------------------------------------
    @property
    def address(self) -> str:
        """What the game server opens: ``mqtt://HOST:PORT/PREFIX/LINE``, the line's topic root."""
        return self.broker.url(self.name)

    @property
    def link_up(self) -> bool:
        """True while the broker connection is up and subscribed now, whether or not :meth:`tick` has taken in a loss
        before it (:attr:`connected` is what the line's owner goes by)."""
        with self._lock:
            return self._up and not self._closed

    @property
    def connected(self) -> bool:
        """True while the broker connection is up, subscribed, and has not been lost since the last :meth:`tick`
        (which stays False through the first tick after a loss); False once closed."""
        if self._closed or not self._published:
            return False
        with self._lock:
            return self._up and self.losses == self._seen_losses

    def fds(self) -> list[int]:
        """The wake-up descriptor (readable on a message, a loss or a reconnection); none once closed."""
        return [] if self._closed else [self._wake_r]

    def tick(self, now: float) -> float | None:
        """Take in the connection's changes: after a loss since the last tick, :attr:`connected` is False through this
        tick (and ``now`` is returned: the next tick may bring the line back); otherwise it follows the connection.
        Returns None when no tick is needed until the descriptor wakes."""
        if self._closed:
            return None
        self._drain_wake()  # the changes are taken in here, so a down line's descriptor does not stay readable
        with self._lock:
            losses, up = self.losses, self._up
        if losses != self._seen_losses:
            self._seen_losses = losses
            self._published = False
            return now
        self._published = up
        return None

    def read(self, timeout_s: float = 0.0) -> bytes:
        """The payload of the oldest message not read yet, waiting up to ``timeout_s`` seconds for one (``b""`` if
        none, or while the line is down and its loss was already taken in by :meth:`tick`).

        Raises:
            TransportClosed: the port is closed, or the broker connection was lost since the last tick.
        """
        if self._closed:
            raise TransportClosed(f"{self.name}: closed")
        self._drain_wake()
        chunk = self._take()
        if chunk is None and timeout_s > 0:
            select.select([self._wake_r], [], [], timeout_s)
            self._drain_wake()
            chunk = self._take()
        return chunk or b""

    def _take(self) -> bytes | None:
        with self._lock:
            if self._published and (not self._up or self.losses != self._seen_losses):
                raise TransportClosed(f"{self.name}: the MQTT broker at {self.broker.hostport}: {self._why}")
            return self._chunks.popleft() if self._chunks else None

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self._wake_r, 4096):
                pass

    def write(self, data: bytes) -> None:
        """Publish ``data`` as one message on ``ROOT/up`` (QoS 1) without waiting for the broker. While the line is
        down the bytes are lost and counted in ``dropped``.

        Raises:
            TransportClosed: the port is closed.
        """
        if self._closed:
            raise TransportClosed(f"{self.name}: closed")
        if not data:
            return
        if not self.connected:
            with self._lock:
                self.dropped += len(data)
            return
        info = self._client.publish(self.up_topic, bytes(data), qos=QOS)
        if info.rc != 0:  # the connection went down just now: what paho queued is dropped when it reconnects
            with self._lock:
                self.dropped += len(data)

    def close(self) -> None:
        """Disconnect from the broker and stop the client's thread; idempotent."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):  # a connection that failed already: disconnecting is best effort
            self._client.disconnect()
        self._client.loop_stop()
        self._release()

    def _release(self) -> None:
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1
        self._closed = True
