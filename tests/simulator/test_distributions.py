"""Duration distributions: parsing from profile specs, their validation errors, and their draws."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest

from simulator.distributions import (
    DistributionError,
    Exponential,
    Fixed,
    LogNormal,
    Uniform,
    parse_distribution,
)
from simulator.rng import Streams, Subsystem


def draws(spec: Any, n: int, seed: int = 5) -> list[float]:
    dist = parse_distribution(spec, "x")
    stream = Streams(seed).stream(Subsystem.DEALER)
    return [dist.sample(stream) for _ in range(n)]


def test_a_bare_number_is_a_fixed_duration() -> None:
    assert parse_distribution(3, "x") == Fixed(3.0)
    assert draws(2.5, 5) == [2.5] * 5
    assert parse_distribution({"dist": "fixed", "value": 0}, "x").mean == 0.0


def test_uniform_draws_stay_between_low_and_high() -> None:
    assert parse_distribution({"dist": "uniform", "low": 1, "high": 3}, "x") == Uniform(1.0, 3.0)
    values = draws({"dist": "uniform", "low": 1, "high": 3}, 2000)
    assert min(values) >= 1.0 and max(values) < 3.0
    # Uniform(1, 3): mean 2, standard deviation 2/sqrt(12); 5 standard errors.
    assert abs(statistics.fmean(values) - 2.0) < 5 * (2 / math.sqrt(12)) / math.sqrt(2000)


def test_exponential_sample_mean_matches() -> None:
    assert parse_distribution({"dist": "exponential", "mean": 4}, "x") == Exponential(4.0)
    values = draws({"dist": "exponential", "mean": 4}, 20_000)
    assert min(values) >= 0.0
    assert abs(statistics.fmean(values) - 4.0) < 5 * 4.0 / math.sqrt(20_000)


def test_lognormal_median_and_mean() -> None:
    dist = parse_distribution({"dist": "lognormal", "median": 4.0, "sigma": 0.2}, "x")
    assert dist == LogNormal(4.0, 0.2)
    assert dist.mean == pytest.approx(4.0 * math.exp(0.02))  # median * exp(sigma^2 / 2)
    values = draws({"dist": "lognormal", "median": 4.0, "sigma": 0.2}, 10_000)
    assert min(values) > 0.0
    # Half the draws fall below the median: binomial(10000, 0.5), standard deviation 50; 5 sigma.
    assert abs(sum(v < 4.0 for v in values) - 5000) < 250


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (True, "where: expected a number of seconds or a mapping"),
        ("4s", "where: expected a number of seconds or a mapping"),
        ([1, 2], "where: expected a number of seconds or a mapping"),
        (-1, "where: must be >= 0, got -1"),
        (float("nan"), "where: expected a finite number"),
        (float("inf"), "where: expected a finite number"),
        ({"dist": "gamma", "shape": 2}, "where.dist: must be one of fixed, uniform, exponential, lognormal"),
        ({"median": 2, "sigma": 1}, "where.dist: must be one of"),
        ({"dist": "uniform", "low": 1}, "where: a uniform distribution takes exactly low, high; got low"),
        ({"dist": "exponential", "mean": 1, "sd": 2}, "takes exactly mean; got mean, sd"),
        ({"dist": "fixed"}, "takes exactly value; got none"),
        ({"dist": "uniform", "low": 3, "high": 1}, "where.high: must be >= low (3.0), got 1.0"),
        ({"dist": "exponential", "mean": 0}, "where.mean: must be > 0, got 0.0"),
        ({"dist": "lognormal", "median": 0, "sigma": 1}, "where.median: must be > 0"),
        ({"dist": "lognormal", "median": 1, "sigma": -0.1}, "where.sigma: must be >= 0"),
        ({"dist": "lognormal", "median": "1", "sigma": 0.1}, "where.median: expected a finite number, got '1'"),
    ],
)
def test_bad_specs_name_the_field(spec: Any, message: str) -> None:
    with pytest.raises(DistributionError) as info:
        parse_distribution(spec, "where")
    assert message in str(info.value)
    assert str(info.value).startswith("where")
