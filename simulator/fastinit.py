"""A faster ``__init__`` for the frozen, slotted dataclasses the model creates by the million.

The dataclass-generated ``__init__`` of a frozen class sets each field with ``object.__setattr__``, which looks the
attribute up on the type every time. :func:`install_fast_init` replaces it with a generated ``__init__`` that has the
same parameters and sets each slot through its own slot descriptor, bound once (the gain: docs/performance.md).
The instances stay frozen: assigning to a field afterwards still raises ``FrozenInstanceError``.
"""

from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass
from typing import Any


def install_fast_init(cls: type) -> None:
    """Give the frozen slotted dataclass ``cls`` a generated ``__init__`` equivalent to the dataclass one: same
    positional and keyword parameters, same attribute values.

    Raises:
        TypeError: ``cls`` is not a frozen dataclass with slots, or a field has a default (not supported here, so
            that the generated signature can never silently differ from the dataclass one).
    """
    if not is_dataclass(cls) or not cls.__dataclass_params__.frozen or "__slots__" not in cls.__dict__:  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__qualname__}: expected a frozen dataclass with slots=True")
    spec = fields(cls)
    if any(f.default is not MISSING or f.default_factory is not MISSING or not f.init for f in spec):
        raise TypeError(f"{cls.__qualname__}: fields with defaults or init=False are not supported")
    names = [f.name for f in spec]
    # Each slot's descriptor ``__set__`` bound once; the frozen class's own ``__setattr__`` is bypassed, as the
    # dataclass-generated ``__init__`` bypasses it with ``object.__setattr__``.
    namespace: dict[str, Any] = {f"_set_{n}": getattr(cls, n).__set__ for n in names}
    lines = [f"def __init__(self, {', '.join(names)}):"] + [f"    _set_{n}(self, {n})" for n in names]
    exec("\n".join(lines), namespace)  # the same technique dataclasses uses to build __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    setattr(cls, "__init__", init)  # noqa: B010 - assigning a method on purpose
