"""``xocdia-bus`` (docs/dialects/xocdia-bus.md): a multi-drop binary bus the server polls.

- :mod:`~harness.wire.dialects.bus.catalogue`: addresses, type codes, limits and :class:`Poll`, the one message
  this dialect adds;
- :mod:`~harness.wire.dialects.bus.encode` / :mod:`~harness.wire.dialects.bus.decode`: bodies ↔ semantic frames;
- :mod:`~harness.wire.dialects.bus.framer`: the hunting length-prefixed framer;
- :mod:`~harness.wire.dialects.bus.codec`: the three assembled into the dialect's codec;
- :mod:`~harness.wire.dialects.bus.devices` / :mod:`~harness.wire.dialects.bus.master`: the devices' end and the
  bus master (the server's end), sans I/O;
- :mod:`~harness.wire.dialects.bus.dialect`: :class:`BusDialect`, the lines and options of a bench.
"""

from harness.wire.dialects.bus.catalogue import ROLE_AT, Poll
from harness.wire.dialects.bus.codec import CODEC, BusMessageMap, bus_codec
from harness.wire.dialects.bus.devices import BusDeviceEnd
from harness.wire.dialects.bus.dialect import ADDRESS, BusDialect, golden_frame
from harness.wire.dialects.bus.framer import BusFramer
from harness.wire.dialects.bus.master import BusServerEnd

__all__ = [
    "ADDRESS",
    "CODEC",
    "ROLE_AT",
    "BusDeviceEnd",
    "BusDialect",
    "BusFramer",
    "BusMessageMap",
    "BusServerEnd",
    "Poll",
    "bus_codec",
    "golden_frame",
]
