"""The device dialects the reference server speaks, by name (docs/server.md, "Device dialects")."""

from __future__ import annotations

from collections.abc import Mapping

from gameserver.dialects.ascii import AsciiLine
from gameserver.dialects.base import ROLES, LineConfigError, LineOption, ServerLine
from gameserver.dialects.bus import BusLine
from gameserver.dialects.jsonl import JsonlLine

DEFAULT = "xocdia-ascii"
#: name -> the line class: ``cls(line name, roles, now, silence_s, **options)``, its options in ``cls.OPTIONS``
DIALECTS: dict[str, type[ServerLine]] = {
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


def line_options(dialect: str, given: Mapping[str, object] | None) -> dict[str, float]:
    """Every option of a line in ``dialect`` (a known one): the ``given`` ones, checked, and the others at their
    defaults. Raises LineConfigError ``options.KEY: ...`` naming the option and the allowed values (the caller names
    the line)."""
    declared = DIALECTS[dialect].OPTIONS
    chosen = {key: rule.default for key, rule in declared.items()}
    for key, value in (given or {}).items():
        rule = declared.get(str(key))
        if rule is None:
            allowed = ", ".join(declared) or "none"
            raise LineConfigError(f"options.{key}: unknown option for dialect {dialect}; allowed: {allowed}")
        if not rule.accepts(value) or not isinstance(value, int | float):
            raise LineConfigError(f"options.{key}: must be {rule.allowed()}; got {value!r}")
        chosen[str(key)] = value
    return chosen


def make_line(
    dialect: str,
    name: str,
    roles: tuple[str, ...] | None,
    now: float,
    silence_s: float,
    options: Mapping[str, object] | None = None,
) -> ServerLine:
    """The server's end of line ``name`` in ``dialect`` with its ``options`` (:func:`line_options`). Raises
    LineConfigError naming an unknown dialect, role or option, or an option's allowed values."""
    factory = DIALECTS.get(dialect)
    if factory is None:
        raise LineConfigError(f"device {name}: dialect: unknown {dialect!r}; allowed: {', '.join(DIALECTS)}")
    try:
        settings = line_options(dialect, options)
    except LineConfigError as exc:
        raise LineConfigError(f"device {name}: {exc}") from None
    return factory(name, line_roles(name, roles), now, silence_s, **settings)


__all__ = [
    "DEFAULT",
    "DIALECTS",
    "ROLES",
    "LineConfigError",
    "LineOption",
    "ServerLine",
    "line_options",
    "line_roles",
    "make_line",
]
