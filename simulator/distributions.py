"""Duration distributions used by profiles, each drawing from a :class:`~simulator.rng.Stream`.

In a profile a distribution is written as a mapping, e.g. ``{dist: lognormal, median: 4.0, sigma: 0.2}``, or as a
bare number for a fixed value. All durations are seconds of simulation time and never negative.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from simulator.errors import InputError
from simulator.rng import Stream

Floats = NDArray[np.float64]
Variate = Literal["uniform", "normal", "none"]


class Distribution(Protocol):
    """Something that draws one non-negative duration from a stream."""

    def sample(self, stream: Stream) -> float: ...

    def bind(self, stream: Stream) -> Callable[[], float]:
        """A zero-argument sampler on ``stream``: the same draws as repeated :meth:`sample` calls, faster."""
        ...

    @property
    def variate(self) -> Variate:
        """What one value is made from: a uniform in [0, 1), a standard normal, or nothing (a fixed value)."""
        ...

    def vector(self, variates: Floats) -> Floats:
        """Many values at once, element by element, each from the :attr:`variate` at the same position (for
        ``"none"`` the array only gives the shape). Same shape."""
        ...

    @property
    def mean(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Fixed:
    value: float

    def sample(self, stream: Stream) -> float:
        return self.value

    def bind(self, stream: Stream) -> Callable[[], float]:
        value = self.value
        return lambda: value

    @property
    def variate(self) -> Variate:
        return "none"

    def vector(self, variates: Floats) -> Floats:
        return np.full_like(variates, self.value)

    @property
    def mean(self) -> float:
        return self.value


@dataclass(frozen=True, slots=True)
class Uniform:
    low: float
    high: float

    def sample(self, stream: Stream) -> float:
        return self.low + (self.high - self.low) * stream.random()

    def bind(self, stream: Stream) -> Callable[[], float]:
        low, width = self.low, self.high - self.low
        us, u, _, _ = stream.buffers()
        return lambda: low + width * (us.pop() if us else u())

    @property
    def variate(self) -> Variate:
        return "uniform"

    def vector(self, variates: Floats) -> Floats:
        return self.low + (self.high - self.low) * variates

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2


@dataclass(frozen=True, slots=True)
class Exponential:
    mean_value: float

    def sample(self, stream: Stream) -> float:
        return stream.exponential(self.mean_value)

    def bind(self, stream: Stream) -> Callable[[], float]:
        mean, log = self.mean_value, math.log
        us, u, _, _ = stream.buffers()
        return lambda: -mean * log(1.0 - (us.pop() if us else u()))

    @property
    def variate(self) -> Variate:
        return "uniform"

    def vector(self, variates: Floats) -> Floats:
        result: Floats = -self.mean_value * np.log1p(-variates)
        return result

    @property
    def mean(self) -> float:
        return self.mean_value


@dataclass(frozen=True, slots=True)
class LogNormal:
    """Log-normal with the given median and log-space standard deviation ``sigma`` (right-skewed human timing)."""

    median: float
    sigma: float

    def sample(self, stream: Stream) -> float:
        return self.median * math.exp(self.sigma * stream.normal())

    def bind(self, stream: Stream) -> Callable[[], float]:
        median, sigma, exp = self.median, self.sigma, math.exp
        _, _, ns, n = stream.buffers()
        return lambda: median * exp(sigma * (ns.pop() if ns else n()))

    @property
    def variate(self) -> Variate:
        return "normal"

    def vector(self, variates: Floats) -> Floats:
        result: Floats = self.median * np.exp(self.sigma * variates)
        return result

    @property
    def mean(self) -> float:
        return self.median * math.exp(self.sigma * self.sigma / 2)


DIST_NAMES = ("fixed", "uniform", "exponential", "lognormal")


class DistributionError(InputError):
    """A distribution spec that cannot be used; the message names the offending key."""


def parse_distribution(spec: Any, where: str) -> Distribution:
    """Build a distribution from its profile spec.

    Raises:
        DistributionError: unknown ``dist``, missing/unknown parameters, or a value out of range; the message starts
            with ``where`` (the dotted field path).
    """
    if isinstance(spec, bool):
        raise DistributionError(f"{where}: expected a number of seconds or a mapping with 'dist', got {spec!r}")
    if isinstance(spec, int | float):
        return Fixed(_non_negative(spec, where))
    if not isinstance(spec, dict):
        raise DistributionError(f"{where}: expected a number of seconds or a mapping with 'dist', got {spec!r}")
    kind = spec.get("dist")
    params = {k: v for k, v in spec.items() if k != "dist"}
    expected: dict[str, tuple[str, ...]] = {
        "fixed": ("value",),
        "uniform": ("low", "high"),
        "exponential": ("mean",),
        "lognormal": ("median", "sigma"),
    }
    if kind not in expected:
        raise DistributionError(f"{where}.dist: must be one of {', '.join(DIST_NAMES)}, got {kind!r}")
    names = expected[kind]
    if set(params) != set(names):
        raise DistributionError(
            f"{where}: a {kind} distribution takes exactly {', '.join(names)}; "
            f"got {', '.join(sorted(params)) or 'none'}"
        )
    values = {name: _non_negative(params[name], f"{where}.{name}") for name in names}
    if kind == "fixed":
        return Fixed(values["value"])
    if kind == "uniform":
        if values["high"] < values["low"]:
            raise DistributionError(f"{where}.high: must be >= low ({values['low']}), got {values['high']}")
        return Uniform(values["low"], values["high"])
    if kind == "exponential":
        if values["mean"] <= 0:
            raise DistributionError(f"{where}.mean: must be > 0, got {values['mean']}")
        return Exponential(values["mean"])
    if values["median"] <= 0:
        raise DistributionError(f"{where}.median: must be > 0, got {values['median']}")
    return LogNormal(values["median"], values["sigma"])


def _non_negative(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DistributionError(f"{where}: expected a finite number, got {value!r}")
    if value < 0:
        raise DistributionError(f"{where}: must be >= 0, got {value}")
    return float(value)
