"""The device dialects the reference server speaks, by name (docs/server.md, "Device dialects")."""

from __future__ import annotations

from collections.abc import Callable

from gameserver.dialects.ascii import AsciiLine
from gameserver.dialects.base import ROLES, LineConfigError, ServerLine
from gameserver.dialects.bus import BusLine
from gameserver.dialects.jsonl import JsonlLine

DEFAULT = "xocdia-ascii"
LineFactory = Callable[[str, tuple[str, ...], float, float], ServerLine]
#: name -> factory(line name, roles, now, silence_s)
DIALECTS: dict[str, LineFactory] = {
    "xocdia-ascii": AsciiLine,
    "xocdia-bus": BusLine,
    "xocdia-jsonl": JsonlLine,
}


def line_roles(name: str, roles: tuple[str, ...] | None) -> tuple[str, ...]:
    """The devices a line carries: the configured ``roles``, else the line's own name when it is a device name
    (``bowl`` → ``BOWL``), else none (learnt from its first HELLO). Raises LineConfigError for an unknown role."""
    if roles:
        bad = [r for r in roles if r not in ROLES]
        if bad:
            raise LineConfigError(f"device {name}: roles: unknown {bad[0]!r}; allowed: {', '.join(ROLES)}")
        return tuple(roles)
    return (name.upper(),) if name.upper() in ROLES else ()


def make_line(dialect: str, name: str, roles: tuple[str, ...] | None, now: float, silence_s: float) -> ServerLine:
    """The server's end of line ``name`` in ``dialect``. Raises LineConfigError naming an unknown dialect or role."""
    factory = DIALECTS.get(dialect)
    if factory is None:
        raise LineConfigError(f"device {name}: dialect: unknown {dialect!r}; allowed: {', '.join(DIALECTS)}")
    return factory(name, line_roles(name, roles), now, silence_s)


__all__ = ["DEFAULT", "DIALECTS", "ROLES", "LineConfigError", "ServerLine", "line_roles", "make_line"]
