"""Byte transports for the table devices: one small interface (:class:`Transport`) and what a transport may
optionally do (:mod:`harness.wire.transports.capabilities`), with an in-memory pipe, a pty pair, any pyserial URL, a
TCP / RFC 2217 serial server, a device end that listens for the server's TCP connection (:class:`ListenPort`), a device
end on an MQTT broker's topics (:class:`MqttPort`, the ``mqtt`` extra), and a fault-injecting wrapper."""

from harness.wire.transports.base import Transport, TransportClosed
from harness.wire.transports.capabilities import LineConfigurable, LineNegotiating, Pluggable, Replugging, Wrapping
from harness.wire.transports.listen import ListenPort
from harness.wire.transports.memory import MemoryEnd, memory_pipe
from harness.wire.transports.mqtt import MqttPort

__all__ = [
    "LineConfigurable",
    "LineNegotiating",
    "ListenPort",
    "MemoryEnd",
    "MqttPort",
    "Pluggable",
    "Replugging",
    "Transport",
    "TransportClosed",
    "Wrapping",
    "memory_pipe",
]
