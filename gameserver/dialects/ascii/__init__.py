"""``xocdia-ascii`` at the server: one device per line, devices push (the server's own decoder and link)."""

from gameserver.dialects.ascii.line import AsciiLine

__all__ = ["AsciiLine"]
