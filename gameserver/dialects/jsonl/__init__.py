"""``xocdia-jsonl`` at the server: the result reader on a TCP line, one JSON object per line."""

from gameserver.dialects.jsonl.line import JsonlLine

__all__ = ["JsonlLine"]
