"""Field-by-field validation of parsed documents (profiles, scripts): one walker, :class:`Section`.

A :class:`Section` reads one mapping of an already-parsed document (the harness reads the files). Each getter
returns the field's value, typed, or raises the section's error class with a message that starts with the dotted
field, e.g. ``tokens.p_standing: must be a probability in [0, 1], got 1.5``. Unknown keys are errors too, either
at once (``allowed`` given: the fixed list of keys) or at :meth:`Section.done` (the keys read so far).
"""

from __future__ import annotations

import math
from typing import Any

from simulator.distributions import Distribution, DistributionError, parse_distribution
from simulator.errors import InputError

REQUIRED: Any = object()  # the default of a field that must be present


class Section:
    """One mapping of a document; remembers which keys were read so that :meth:`done` can report the others.

    ``where`` is the mapping's dotted path (``""`` for the document itself, then named ``name`` in messages);
    ``error`` is the class raised. With ``allowed``, a key outside it is reported at once, listing ``allowed``.
    """

    def __init__(
        self,
        data: Any,
        where: str,
        error: type[InputError],
        allowed: tuple[str, ...] | None = None,
        name: str = "document",
    ) -> None:
        if not isinstance(data, dict):
            raise error(f"{where or name}: expected a mapping, got {type(data).__name__}")
        self.data: dict[Any, Any] = data
        self.where = where
        self.error = error
        self.used: set[str] = set()
        if allowed is not None:
            unknown = sorted(set(data) - set(allowed), key=str)
            if unknown:
                raise error(f"{self.path(str(unknown[0]))}: unknown field; allowed: {', '.join(allowed)}")

    def path(self, key: str) -> str:
        """The dotted path of ``key`` in this section."""
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, message: str) -> InputError:
        """The error for field ``key``: ``PATH: message``."""
        return self.error(f"{self.path(key)}: {message}")

    def raw(self, key: str, default: Any = REQUIRED) -> Any:
        """The value as parsed; ``default`` when absent (a missing required field is an error)."""
        self.used.add(key)
        if key not in self.data:
            if default is REQUIRED:
                raise self.fail(key, "missing (required)")
            return default
        return self.data[key]

    def section(self, key: str) -> Section:
        """The nested mapping ``key`` (required)."""
        return Section(self.raw(key), self.path(key), self.error)

    def number(self, key: str, low: float = 0.0, high: float = math.inf) -> float:
        """A finite number in ``[low, high]`` (required)."""
        value = self.raw(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail(key, f"expected a number, got {value!r}")
        if not low <= value <= high:
            raise self.fail(key, f"must be in [{low}, {high}], got {value}")
        return float(value)

    def probability(self, key: str) -> float:
        """A number in [0, 1] (required)."""
        value = self.raw(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            raise self.fail(key, f"must be a probability in [0, 1], got {value!r}")
        return float(value)

    def whole(self, key: str, low: int = 0, high: int = 10**9, default: Any = REQUIRED) -> int:
        """A whole number in ``[low, high]``; ``default`` when absent (required without one)."""
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(key, f"must be a whole number in [{low}, {high}], got {value!r}")
        return value

    def flag(self, key: str) -> bool | None:
        """``true`` or ``false``; ``None`` when absent or null (optional)."""
        value = self.raw(key, None)
        if value is not None and not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {value!r}")
        return value

    def text(self, key: str) -> str:
        """A string (required)."""
        value = self.raw(key)
        if not isinstance(value, str):
            raise self.fail(key, f"expected text, got {value!r}")
        return value

    def dist(self, key: str) -> Distribution:
        """A duration distribution (:func:`simulator.distributions.parse_distribution`; required)."""
        try:
            return parse_distribution(self.raw(key), self.path(key))
        except DistributionError as exc:
            raise self.error(str(exc)) from None

    def done(self) -> None:
        """Raise for the first key (sorted) that no getter read, listing the keys that were."""
        unknown = sorted(set(self.data) - self.used, key=str)
        if unknown:
            allowed = ", ".join(sorted(self.used))
            raise self.fail(str(unknown[0]), f"unknown field; allowed here: {allowed}")
