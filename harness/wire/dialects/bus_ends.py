"""The two ends of an ``xocdia-bus`` line (docs/dialects/xocdia-bus.md §5): the devices answer, the server polls.

:class:`BusDeviceEnd` emulates every device on one line: it answers each POLL to one of its addresses with that
device's oldest unacknowledged report (the same seq until a later POLL acknowledges it) or NOTHING, and each lamp
WRITE with an ACK. :class:`BusServerEnd` is the bus master: one request at a time, every device polled once per
cycle, a report acknowledged by the next POLL to its address, lamp commands written (and retried) until the lamp
acknowledges them, duplicates suppressed, silent devices reported.

Both are sans I/O, like :class:`harness.wire.protocol.link.Link`: fed bytes and the time, they say when they next
need to run.

The devices' end is :mod:`harness.wire.dialects.bus_devices`, the master :mod:`harness.wire.dialects.bus_master`;
their names stay importable from here.
"""

from __future__ import annotations

from harness.wire.dialects.bus_catalogue import EPS
from harness.wire.dialects.bus_devices import BusDeviceEnd
from harness.wire.dialects.bus_master import BURST, HOLD_CYCLES, BusServerEnd

__all__ = ["BURST", "EPS", "HOLD_CYCLES", "BusDeviceEnd", "BusServerEnd"]
