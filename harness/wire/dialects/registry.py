"""Finding dialects by name: the shipped ones, those installed packages declare under the entry point group
``xocdia_hil.dialects``, and any ``package.module:ClassName`` on the import path or in the current working folder
(docs/dialects/README.md)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from harness.wire.dialects.base import Dialect, DialectError, LineSpec, check_parts
from harness.wire.messages import DEVICES, Source

ENTRY_POINT_GROUP = "xocdia_hil.dialects"
DEFAULT_DIALECT = "xocdia-ascii"
#: The dialects this package ships: name -> ``module:Class``.
SHIPPED: dict[str, str] = {
    "xocdia-ascii": "harness.wire.dialects.ascii:AsciiDialect",
    "xocdia-bus": "harness.wire.dialects.bus:BusDialect",
    "xocdia-jsonl": "harness.wire.dialects.jsonl:JsonlReaderDialect",
}


def _import(path: str, field: str) -> Any:
    """The attribute ``path`` (``module:attr``) names. The current working folder is searched last, so a lab's
    dialect module beside its bench file loads without packaging, and never shadows an installed module.

    Raises:
        DialectError: the module does not import, or has no such attribute (the message names ``field``).
    """
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise DialectError(f"{field}: must be a dialect name or 'package.module:ClassName'; got {path!r}")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DialectError(f"{field}: cannot import module {module_name!r} of {path!r}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise DialectError(f"{field}: module {module_name!r} has no {attr!r}") from None


def installed() -> dict[str, metadata.EntryPoint]:
    """Dialects declared by installed packages under :data:`ENTRY_POINT_GROUP`, by entry point name."""
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Every dialect name that :func:`dialect_class` resolves: shipped first, then installed ones."""
    return list(SHIPPED) + sorted(n for n in installed() if n not in SHIPPED)


def dialect_class(spec: str, field: str = "devices.dialect") -> type[Dialect]:
    """The dialect class named by ``spec``: a shipped name, an installed entry point name, or ``module:Class``.

    Raises:
        DialectError: an unknown name (the message lists the known ones), a path that does not import, or a class that
            is not a complete :class:`Dialect` (the message names the missing part).
    """
    if not isinstance(spec, str) or not spec:
        raise DialectError(f"{field}: must be a dialect name or 'package.module:ClassName'; got {spec!r}")
    if spec in SHIPPED:
        cls = _import(SHIPPED[spec], field)
    elif ":" in spec:
        cls = _import(spec, field)
    else:
        found = installed().get(spec)
        if found is None:
            raise DialectError(
                f"{field}: unknown dialect {spec!r}; known: {', '.join(names())} (or 'package.module:Class')"
            )
        try:
            cls = found.load()
        except Exception as exc:  # an installed plugin that fails to import: name it
            raise DialectError(f"{field}: dialect {spec!r} ({found.value}) does not load: {exc}") from None
    check_parts(cls)
    return cls  # type: ignore[no-any-return]


def load_dialect(spec: str, options: Mapping[str, Any] | None = None, field: str = "devices.dialect") -> Dialect:
    """An instance of the dialect ``spec`` with ``options``. Raises DialectError (see :func:`dialect_class`; a bad
    option names ``devices.options.<key>``)."""
    return dialect_class(spec, field)(options)


def plan_lines(dialect: Dialect, roles: Sequence[Source] = DEVICES) -> list[LineSpec]:
    """The table's lines for ``roles`` under ``dialect`` (and its companions): every role on exactly one line, line
    names unique.

    Raises:
        DialectError: the dialect's plan leaves a role out, puts one on two lines, or reuses a line name.
    """
    lines = dialect.lines(roles)
    seen: dict[Source, str] = {}
    names_seen: set[str] = set()
    for line in lines:
        if line.name in names_seen:
            raise DialectError(f"devices.dialect: {dialect.name!r} names two lines {line.name!r}")
        names_seen.add(line.name)
        for role in line.roles:
            if role in seen:
                raise DialectError(
                    f"devices.dialect: {dialect.name!r} puts {role.value} on {seen[role]!r} and {line.name!r}"
                )
            seen[role] = line.name
        if line.medium not in ("serial", "tcp"):
            raise DialectError(f"devices.dialect: line {line.name!r} medium must be serial or tcp; got {line.medium!r}")
    missing = [r.value for r in roles if r not in seen]
    if missing:
        raise DialectError(f"devices.dialect: {dialect.name!r} carries no line for {', '.join(missing)}")
    return lines
