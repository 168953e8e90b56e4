"""Live bias monitor: a two-sided group-sequential test on the running red excess, in epochs.

Per settled round the monitor adds ``reds − 2`` to S (void and cancelled rounds are skipped). Fair tokens give
S mean 0 and variance n after n rounds; a per-token bias δ gives drift 4δ per round. Every ``look`` settled
rounds it computes z = S / √n and raises an alarm when |z| crosses the boundary:

* phase 1, n ≤ ``horizon`` (10,000): |z| ≥ c₁ · horizon / n, i.e. |S| ≥ c₁ · horizon / √n — high early, where
  a small bias cannot be seen yet anyway, and c₁ at n = horizon, close to a single fixed test there;
* phase 2, horizon < n ≤ ``epoch`` (100,000): |z| ≥ c₂ (a constant, Pocock-style boundary).

After ``epoch`` settled rounds without an alarm the test restarts from zero, so the false-alarm rate is per
epoch. An alarm latches (play should stop, GLI-19 3.3.3) until :meth:`BiasMonitor.reset`.

Design (docs/statistics.md; rates from ``benchmarks/bench_monitor.py``): c₁ = 2.68 spends about 0.85 % false
alarms in phase 1 and c₂ = 4.2 brings the whole epoch to about 0.88 % (calibrated on 400,000 seeded fair
paths); a 1 pp per-token bias (P(red) 0.51 or 0.49) is then caught within 10,000 rounds in about 91 % of runs.
Changing ``look``, ``horizon`` or ``epoch`` changes these rates: re-measure with the benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class MonitorDesign:
    look: int = 500
    horizon: int = 10_000
    epoch: int = 100_000
    c1: float = 2.68
    c2: float = 4.2

    def __post_init__(self) -> None:
        if self.look < 1 or self.horizon < self.look or self.epoch < self.horizon:
            raise ValueError(f"need 1 <= look <= horizon <= epoch, got {self.look}, {self.horizon}, {self.epoch}")
        if self.c1 <= 0 or self.c2 <= 0:
            raise ValueError(f"boundaries must be > 0, got c1={self.c1}, c2={self.c2}")

    def boundary(self, n: int) -> float:
        """The |z| an alarm needs after ``n`` settled rounds of the current epoch (n >= 1)."""
        return self.c1 * self.horizon / n if n <= self.horizon else self.c2


@dataclass(frozen=True, slots=True)
class Look:
    """One evaluation of the monitor: ``round`` counts settled rounds since the monitor started."""

    round: int
    epoch: int
    n: int
    z: float
    boundary: float


@dataclass(frozen=True, slots=True)
class Alarm:
    round: int  # settled rounds since the monitor started, at the look that alarmed
    n: int  # settled rounds into the epoch
    z: float
    direction: str  # "red" or "white": the colour the tokens favour
    p_red_estimate: float


class BiasMonitor:
    """Sequential bias test over a stream of red counts, one round at a time.

    Every ``design.look`` settled rounds it records a :class:`Look` (z = S / √n, S the running Σ(reds − 2) of the
    epoch) and raises an :class:`Alarm` when |z| reaches ``design.boundary(n)``. An epoch ends without alarm after
    ``design.epoch`` settled rounds and the next starts from zero. An alarm latches: :meth:`update` keeps returning
    it until :meth:`reset`.
    """

    def __init__(self, design: MonitorDesign | None = None) -> None:
        self.design = design or MonitorDesign()
        self.looks: list[Look] = []
        self.alarm: Alarm | None = None
        self._total = 0
        self._epoch = 0
        self._n = 0
        self._excess = 0

    def update(self, reds: int | None) -> Alarm | None:
        """Feed one round (``None`` for a void or cancelled round, skipped). Returns the alarm once raised.

        Raises:
            ValueError: ``reds`` outside 0..4.
        """
        if self.alarm is not None or reds is None:
            return self.alarm
        if not 0 <= reds <= 4:
            raise ValueError(f"reds must be 0..4, got {reds}")
        self._total += 1
        self._n += 1
        self._excess += reds - 2
        if self._n % self.design.look == 0:
            self._evaluate()
        return self.alarm

    def feed(self, rounds: Iterable[int | None]) -> Alarm | None:
        """:meth:`update` with every round in order; stops at the first alarm."""
        for reds in rounds:
            if self.update(reds) is not None:
                break
        return self.alarm

    def reset(self) -> None:
        """Clear an alarm and start a new epoch (after the table was checked or replaced)."""
        self.alarm = None
        self._epoch += 1
        self._n = 0
        self._excess = 0

    def _evaluate(self) -> None:
        n = self._n
        z = self._excess / math.sqrt(n)
        bound = self.design.boundary(n)
        self.looks.append(Look(self._total, self._epoch, n, z, bound))
        if abs(z) >= bound:
            p_hat = 0.5 + self._excess / (4 * n)
            self.alarm = Alarm(self._total, n, z, "red" if z > 0 else "white", p_hat)
        elif n >= self.design.epoch:
            self._epoch += 1
            self._n = 0
            self._excess = 0


def first_alarms(reds: npt.NDArray[np.integer], design: MonitorDesign | None = None) -> npt.NDArray[np.int64]:
    """Vectorised :class:`BiasMonitor` over many independent runs of settled rounds (one run per row).

    Returns, per run, the settled round at whose look the first alarm is raised, or -1 for none. Same answer
    as feeding each row to a fresh :class:`BiasMonitor`.

    Raises:
        ValueError: not a 2-D array, or runs longer than one epoch.
    """
    d = design or MonitorDesign()
    if reds.ndim != 2:
        raise ValueError(f"need a 2-D array (runs x rounds), got {reds.ndim} dimension(s)")
    if reds.shape[1] > d.epoch:
        raise ValueError(f"runs of {reds.shape[1]} rounds exceed one epoch ({d.epoch})")
    looks = np.arange(d.look, reds.shape[1] + 1, d.look)
    if not len(looks):
        return np.full(reds.shape[0], -1, dtype=np.int64)
    excess = np.cumsum(reds, axis=1, dtype=np.int64)[:, looks - 1] - 2 * looks
    bound = np.array([d.boundary(int(n)) for n in looks])
    crossed = np.abs(excess) / np.sqrt(looks) >= bound
    first = np.argmax(crossed, axis=1)
    return np.where(crossed.any(axis=1), looks[first], -1).astype(np.int64)
