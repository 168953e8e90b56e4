"""Live bias monitor: a time-uniform sequential test on the running red excess, valid over the whole record.

Per settled round the monitor adds X = reds − 2 to S (void and cancelled rounds are skipped). Under fair,
independent tokens X is a sum of four independent ±½ steps, so E exp(λX) = cosh(λ/2)⁴ ≤ exp(λ²/2) for every
λ: exp(λS_n − λ²n/2) is a non-negative supermartingale. Mixing λ over N(0, 1/ρ) gives the mixture
supermartingale (Robbins 1970)

    M_n = √(ρ / (n + ρ)) · exp(S_n² / (2 (n + ρ)))

and Ville's inequality bounds the chance that M_n ever reaches 1/a, over the whole unbounded record and however
often it is looked at, by a. So

* the monitor's **anytime-valid p-value** after n settled rounds is p_n = min(1, 1 / max_{k ≤ n} M_k): a fair
  table shows p_n ≤ a at any time with probability at most a;
* the monitor **alarms** at the first settled round where M_n ≥ 1 / ``design.alpha``, i.e. where
  |S_n| ≥ √((n + ρ)(ln((n + ρ)/ρ) + 2 ln(1/α))). The check is made after every settled round (cost O(1) a
  round, no epochs, no restarts); there is one false-alarm budget for the whole record.

The audit and ``audit --follow`` set ``design.alpha`` to the monitor's share of the family-wise budget
(:func:`harness.stats.fairness.monitor_design`), so an alarm always means the audit of the same rounds fails.
ρ = 500 puts the tightest boundary near the 10,000-round certification size (4.4 σ there at the audit's level);
changing it changes the power, never the false-alarm bound. An alarm latches (play should stop,
GLI-19 3.3.3) until :meth:`BiasMonitor.reset`, which starts a new record from zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

DEFAULT_RHO = 500.0


@dataclass(frozen=True, slots=True)
class MonitorDesign:
    """``alpha``: the false-alarm bound over the whole record; ``rho``: the mixture's scale (rounds);
    ``look``: how often (settled rounds) a :class:`Look` is kept for the plot (alarms are checked every round).
    """

    alpha: float
    rho: float = DEFAULT_RHO
    look: int = 500

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be strictly between 0 and 1, got {self.alpha}")
        if not self.rho > 0:
            raise ValueError(f"rho must be > 0, got {self.rho}")
        if self.look < 1:
            raise ValueError(f"look must be >= 1, got {self.look}")

    def boundary(self, n: int) -> float:
        """The |z| = |S_n| / √n at which the monitor alarms after ``n`` >= 1 settled rounds."""
        return math.sqrt((n + self.rho) * (math.log((n + self.rho) / self.rho) + 2 * math.log(1 / self.alpha)) / n)


def log_evidence(excess: npt.NDArray[np.integer], rho: float = DEFAULT_RHO) -> npt.NDArray[np.float64]:
    """ln M_n for the running sums ``excess`` (S_1, S_2, ..., one per settled round), last axis = rounds."""
    n = np.arange(1, excess.shape[-1] + 1, dtype=np.float64)
    s = excess.astype(np.float64)
    return 0.5 * np.log(rho / (n + rho)) + s * s / (2 * (n + rho))


def anytime_p_value(reds: npt.NDArray[np.integer], rho: float = DEFAULT_RHO) -> tuple[float, int]:
    """The monitor's anytime-valid p-value over the settled ``reds`` (0..4 each) and the settled round (1-based)
    where the evidence was strongest (0 for an empty stream, p = 1)."""
    if len(reds) == 0:
        return 1.0, 0
    log_m = log_evidence(np.cumsum(reds.astype(np.int64) - 2), rho)
    best = int(np.argmax(log_m))
    return float(min(1.0, math.exp(-max(0.0, float(log_m[best]))))), best + 1


@dataclass(frozen=True, slots=True)
class Look:
    """The monitor's state every ``design.look`` settled rounds: z = S/√n and the alarm boundary there."""

    round: int
    z: float
    boundary: float


@dataclass(frozen=True, slots=True)
class Alarm:
    """The monitor's alarm. ``round``: settled rounds since the record started; ``p_red_estimate``: the mean
    P(red) per token over all those rounds, (S / n + 2) / 4."""

    round: int
    z: float
    direction: str  # "red" or "white": the colour the tokens favour
    p_red_estimate: float


class BiasMonitor:
    """The sequential test of the module docstring over a stream of red counts, one round at a time, at cost
    O(1) a round. An alarm latches: :meth:`update` keeps returning it until :meth:`reset`."""

    def __init__(self, design: MonitorDesign) -> None:
        self.design = design
        self.looks: list[Look] = []
        self.alarm: Alarm | None = None
        self._n = 0
        self._excess = 0
        self._threshold = math.log(1 / design.alpha)
        self._best = 0.0

    @property
    def rounds(self) -> int:
        """Settled rounds seen since the record started (or since :meth:`reset`)."""
        return self._n

    @property
    def excess(self) -> int:
        """S: reds minus 2 per settled round, summed since the record started."""
        return self._excess

    @property
    def z(self) -> float | None:
        """S / √n since the record started (None before a settled round)."""
        return self._excess / math.sqrt(self._n) if self._n else None

    @property
    def p_value(self) -> float:
        """The anytime-valid p-value so far (1.0 before any settled round)."""
        return min(1.0, math.exp(-self._best))

    def update(self, reds: int | None) -> Alarm | None:
        """Feed one round (``None`` for a void or cancelled round, skipped). Returns the alarm once raised.

        Raises:
            ValueError: ``reds`` outside 0..4.
        """
        if self.alarm is not None or reds is None:
            return self.alarm
        if not 0 <= reds <= 4:
            raise ValueError(f"reds must be 0..4, got {reds}")
        self._n += 1
        self._excess += reds - 2
        n, s, rho = self._n, self._excess, self.design.rho
        log_m = 0.5 * math.log(rho / (n + rho)) + s * s / (2 * (n + rho))
        self._best = max(self._best, log_m)
        z = s / math.sqrt(n)
        if n % self.design.look == 0:
            self.looks.append(Look(n, z, self.design.boundary(n)))
        if log_m >= self._threshold:
            self.alarm = Alarm(n, z, "red" if s > 0 else "white", 0.5 + s / (4 * n))
        return self.alarm

    def feed(self, rounds: Iterable[int | None]) -> Alarm | None:
        """:meth:`update` with every round in order; stops at the first alarm."""
        for reds in rounds:
            if self.update(reds) is not None:
                break
        return self.alarm

    def reset(self) -> None:
        """Clear an alarm and start a new record from zero (after the table was checked or replaced)."""
        self.alarm = None
        self.looks = []
        self._n = 0
        self._excess = 0
        self._best = 0.0


def first_alarms(reds: npt.NDArray[np.integer], design: MonitorDesign) -> npt.NDArray[np.int64]:
    """Vectorised :class:`BiasMonitor` over many independent runs of settled rounds (one run per row).

    Returns, per run, the settled round (1-based) of the first alarm, or -1 for none: the same answer as feeding
    each row to a fresh :class:`BiasMonitor`.

    Raises:
        ValueError: not a 2-D array.
    """
    if reds.ndim != 2:
        raise ValueError(f"need a 2-D array (runs x rounds), got {reds.ndim} dimension(s)")
    if reds.shape[1] == 0:
        return np.full(reds.shape[0], -1, dtype=np.int64)
    log_m = log_evidence(np.cumsum(reds.astype(np.int64) - 2, axis=1), design.rho)
    crossed = log_m >= math.log(1 / design.alpha)
    first = np.argmax(crossed, axis=1)
    return np.where(crossed.any(axis=1), first + 1, -1).astype(np.int64)


def looks_of(reds: npt.NDArray[np.integer], design: MonitorDesign) -> list[Look]:
    """The :class:`Look` s a :class:`BiasMonitor` keeps over the settled ``reds`` (every ``design.look``
    rounds, up to and including an alarm's look), computed with arrays."""
    if len(reds) == 0:
        return []
    excess = np.cumsum(reds.astype(np.int64) - 2)
    alarms = first_alarms(reds.reshape(1, -1), design)
    end = len(reds) if alarms[0] < 0 else int(alarms[0])
    rounds = np.arange(design.look, end + 1, design.look)
    return [Look(int(n), float(excess[n - 1]) / math.sqrt(n), design.boundary(int(n))) for n in rounds]
