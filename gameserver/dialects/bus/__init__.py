"""``xocdia-bus`` at the server: :mod:`~gameserver.dialects.bus.wire` is the frame format, written from
docs/dialects/xocdia-bus.md alone; :mod:`~gameserver.dialects.bus.line` the bus master that polls the devices."""

from gameserver.dialects.bus.line import BusLine

__all__ = ["BusLine"]
