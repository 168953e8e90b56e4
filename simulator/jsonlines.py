"""One event as one line of JSON Lines, written without building the dict the JSON encoder would be given.

:func:`event_line` guarantees byte for byte what ``json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))``
writes of ``{"seq": seq, **record_dict(cls, values)}`` (times rounded to the microsecond), for any values:

- each event class gets a writer generated from its declared field types (the technique ``dataclasses`` uses to
  build ``__init__``): when every value has its declared type, the whole line is one f-string;
- any other value (None, a bool where an int is declared, a non-finite float, a tuple...) sends the line down the
  field-by-field path, :func:`generic_line`, which writes what it can directly and hands the rest to the encoder.

tests/simulator/test_eventlog_lines.py holds both paths to the encoder for every event class and value type.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Sequence
from typing import Any

from simulator.events import TIME_FIELDS, Event, field_names

_ENCODE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
_quote = json.encoder.encode_basestring_ascii  # how that encoder writes a str (or a str enum), in C

_Writer = Callable[..., "str | None"]
_WRITERS: dict[type[Event], tuple[int, _Writer]] = {}
_HEADS: dict[type[Event], tuple[str, tuple[tuple[str, bool], ...]]] = {}


def event_line(seq: int, cls: type[Event], values: Sequence[Any]) -> str:
    """The line (without its newline) of the event of class ``cls`` with these field values, at position ``seq``.

    Raises:
        ValueError: not one value per field of ``cls``.
        TypeError: a time field that is not a number.
    """
    spec = _WRITERS.get(cls)
    if spec is None:
        spec = _WRITERS[cls] = _compile(cls)
    arity, writer = spec
    if len(values) == arity and type(seq) is int:
        line = writer(seq, *values)
        if line is not None:
            return line
    return generic_line(seq, cls, values)


def generic_line(seq: int, cls: type[Event], values: Sequence[Any]) -> str:
    """:func:`event_line`, field by field, for any values (raises as :func:`event_line` does)."""
    kind, keys = _head(cls)
    parts = ['{"seq":', int.__repr__(seq), kind]
    for (key, is_time), v in zip(keys, values, strict=True):
        parts.append(key)
        parts.append(_value(round(v, 6) if is_time else v))
    parts.append("}")
    return "".join(parts)


def _head(cls: type[Event]) -> tuple[str, tuple[tuple[str, bool], ...]]:
    """``,"kind":"..."`` for ``cls``, and each field's ``,"name":`` with whether it is a time."""
    head = _HEADS.get(cls)
    if head is None:
        keys = tuple((f",{_quote(name)}:", name in TIME_FIELDS) for name in field_names(cls))
        head = _HEADS[cls] = (f',"kind":{_quote(cls.kind)}', keys)
    return head


def _value(v: Any) -> str:
    """``v`` as the encoder writes it: an exact int, str or finite float written directly, anything else (a str
    enum, None, a bool, a tuple, a non-finite float) by the encoder itself."""
    kind = type(v)
    if kind is int:
        return int.__repr__(v)
    if kind is str:
        return _quote(v)
    if kind is float and v - v == 0.0:  # finite (inf - inf and nan - nan are nan)
        return float.__repr__(v)
    return _ENCODE(v)


def _compile(cls: type[Event]) -> tuple[int, _Writer]:
    """A writer for ``cls``: ``writer(seq, *values)`` gives the line when every value has its declared type, else
    None. A time is rounded first and must then be an int or a finite float; an int, a bool or a str (str enums
    included) must be exactly that; a field of any other declared type (``int | None``...) goes through
    :func:`_value`."""
    hints = typing.get_type_hints(cls)
    kind, keys = _head(cls)
    lines: list[str] = []
    guards: list[str] = []
    parts = ['{{"seq":{seq!r}', kind.replace("{", "{{").replace("}", "}}")]
    for i, (name, (key, is_time)) in enumerate(zip(field_names(cls), keys, strict=True)):
        v, declared = f"v{i}", hints[name]
        key = key.replace("{", "{{").replace("}", "}}")
        if is_time:
            lines.append(f"    {v} = round({v}, 6)")
            guards.append(f"(type({v}) is int or (type({v}) is float and {v} - {v} == 0.0))")
            parts.append(f"{key}{{{v}!r}}")
        elif declared is int:
            guards.append(f"type({v}) is int")
            parts.append(f"{key}{{{v}!r}}")
        elif declared is bool:
            guards.append(f"type({v}) is bool")
            parts.append(f'{key}{{"true" if {v} else "false"}}')
        elif isinstance(declared, type) and issubclass(declared, str):
            guards.append(f"isinstance({v}, str)")
            parts.append(f"{key}{{_quote({v})}}")
        else:
            parts.append(f"{key}{{_value({v})}}")
    names = [f"v{i}" for i in range(len(keys))]
    source = [f"def write(seq, {', '.join(names)}):", *lines]
    source.append(f"    if {' and '.join(guards) or 'True'}:")
    source.append(f"        return f'{''.join(parts)}}}}}'")
    source.append("    return None")
    namespace: dict[str, Any] = {"_quote": _quote, "_value": _value}
    exec("\n".join(source), namespace)  # generated from the class's own field names and types
    return len(keys), namespace["write"]
