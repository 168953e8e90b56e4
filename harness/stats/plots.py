"""PNG plots for an audit (matplotlib's object API on an Agg canvas: no pyplot state, no display needed).

* ``rtp_convergence.png``: running measured RTP with the theoretical RTP and its 99 % band.
* ``outcome_histogram.png``: observed red counts against the expected N·(1, 4, 6, 4, 1)/16.
* ``monitor.png``: the live monitor's z at every look with its alarm boundary (±).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from harness.stats.exact import Z_TWO_SIDED
from harness.stats.monitor import Look

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(width: float, height: float) -> Figure:
    """A new matplotlib figure (no pyplot state). matplotlib is imported on first use: about 1 s of start-up that a
    process drawing nothing never pays."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def rtp_convergence(
    path: Path,
    returned: npt.NDArray[np.float64],
    wagered: npt.NDArray[np.float64],
    theoretical: npt.NDArray[np.float64],
    sigma: npt.NDArray[np.float64],
    title: str,
) -> Path:
    """Plot running Σreturned/Σwagered against the stake-weighted theoretical RTP ± 2.576 × SE.

    Arrays are per bet, in order: amounts, each bet's theoretical RTP, the σ of its net result per unit stake.
    """
    cum_w = np.cumsum(wagered)
    measured = np.cumsum(returned) / cum_w
    theo = np.cumsum(theoretical * wagered) / cum_w
    half = Z_TWO_SIDED[99] * np.sqrt(np.cumsum((sigma * wagered) ** 2)) / cum_w
    x = np.arange(1, len(wagered) + 1)
    fig = _figure(8, 4.5)
    ax = fig.subplots()
    ax.fill_between(x, theo - half, theo + half, color="tab:blue", alpha=0.2, label="theoretical ± 99 % band")
    ax.plot(x, theo, color="tab:blue", lw=1, label="theoretical")
    ax.plot(x, measured, color="tab:red", lw=1, label="measured")
    ax.set_xscale("log")
    k = min(len(x) - 1, 29)  # the scale follows the band from 30 bets on, so the early swings do not flatten it
    low = min(float(np.min((theo - half)[k:])), float(np.min(measured[k:])))
    high = max(float(np.max((theo + half)[k:])), float(np.max(measured[k:])))
    ax.set_ylim(low - 0.05 * (high - low + 1e-9), high + 0.05 * (high - low + 1e-9))
    ax.set_xlabel("decided bets")
    ax.set_ylabel("RTP")
    ax.set_title(title)
    ax.legend(loc="lower right")
    return _save(fig, path)


def outcome_histogram(path: Path, reds: npt.NDArray[np.int64]) -> Path:
    """Bars of observed red counts with the fair expectation as markers."""
    observed = np.bincount(reds, minlength=5)
    expected = len(reds) * np.array([1, 4, 6, 4, 1]) / 16
    fig = _figure(6, 4)
    ax = fig.subplots()
    ax.bar(range(5), observed, color="tab:red", alpha=0.6, label="observed")
    ax.plot(range(5), expected, "kD", label="expected (fair)")
    ax.set_xticks(range(5))
    ax.set_xlabel("reds")
    ax.set_ylabel("rounds")
    ax.set_title(f"Outcome histogram, {len(reds)} settled rounds")
    ax.legend()
    return _save(fig, path)


def monitor_trace(path: Path, looks: Sequence[Look]) -> Path:
    """z at each look against ± the boundary; an alarm is where z leaves the band."""
    x = np.array([lk.round for lk in looks])
    z = np.array([lk.z for lk in looks])
    bound = np.array([lk.boundary for lk in looks])
    fig = _figure(8, 4)
    ax = fig.subplots()
    if len(looks):
        ax.fill_between(x, -bound, bound, color="tab:green", alpha=0.15, label="no-alarm band")
        ax.plot(x, z, color="tab:blue", lw=1, label="z = S/√n")
        ax.legend(loc="upper left")
    ax.set_ylim(-8, 8)
    ax.set_xlabel("settled rounds")
    ax.set_ylabel("z")
    ax.set_title("Live bias monitor")
    return _save(fig, path)


#: Fixed margins in inches (left, right, bottom, top): room for the tick labels, the axis labels and the title of
#: every plot here. Computing them per figure (``tight_layout``) draws each figure twice.
_MARGINS_IN = (0.85, 0.2, 0.6, 0.4)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    width, height = fig.get_size_inches()
    left, right, bottom, top = _MARGINS_IN
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)
    fig.savefig(path, dpi=100)
    return path
