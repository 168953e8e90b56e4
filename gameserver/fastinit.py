"""A faster ``__init__`` for the frozen dataclasses the server makes on every frame, report, event and bet.

A frozen dataclass's generated ``__init__`` sets each field with ``object.__setattr__``. :func:`fast_init` replaces
it with a generated ``__init__`` with the same parameters and defaults that stores each field in the instance's
``__dict__``, which is what ``object.__setattr__`` does for a class without slots (the gain: docs/performance.md).
Instances stay frozen, and equality, hashing and ``repr`` are the dataclass's own. The model has its own generator,
for slotted classes without defaults (``simulator.fastinit``); the server does not import the model.
"""

from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass
from typing import Any, TypeVar

_C = TypeVar("_C", bound=type)


def fast_init(cls: _C) -> _C:
    """Give the frozen dataclass ``cls`` (no slots) a generated ``__init__`` equivalent to the dataclass one: same
    positional and keyword parameters, same defaults, a fresh value from each ``default_factory`` when its argument
    is left out. Returns ``cls`` (a class decorator, applied above ``@dataclass``).

    Raises:
        TypeError: ``cls`` is not a frozen dataclass, has slots or ``__post_init__``, or has a field that is
            keyword-only or left out of ``__init__`` (not supported, so that the signature can never silently differ).
    """
    if not is_dataclass(cls) or not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__qualname__}: expected a frozen dataclass")
    spec = fields(cls)
    if "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__") or any(not f.init or f.kw_only for f in spec):
        raise TypeError(f"{cls.__qualname__}: slots, __post_init__, keyword-only or init=False fields: not supported")
    namespace: dict[str, Any] = {"_MISSING": MISSING}
    params, lines = [], []
    for f in spec:
        name = f.name
        if f.default is not MISSING:
            namespace[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
            lines.append(f"    own[{name!r}] = {name}")
        elif f.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            lines.append(f"    own[{name!r}] = _factory_{name}() if {name} is _MISSING else {name}")
        else:
            params.append(name)
            lines.append(f"    own[{name!r}] = {name}")
    source = [f"def __init__(self, {', '.join(params)}):", "    own = self.__dict__", *lines]
    exec("\n".join(source), namespace)  # the same technique dataclasses uses to build __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    setattr(cls, "__init__", init)  # noqa: B010 - assigning a method on purpose
    return cls
