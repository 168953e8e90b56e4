"""Every seat's betting decisions, drawn in blocks with numpy.

At each opening a seat decides how many bets to place (none, with probability ``1 - p_bet``) and whether the
player leaves after this round; each bet has a think time (counted from the opening, or from the seat's previous
bet), a (bet, stake) pair and a network latency. Every seat has two generators of its own:

- openings (spawn key ``(PLAYER, seat)``): two uniforms per opening, taken whether or not anyone sits there, so
  the decision at the k-th opening is a pure function of ``(seed, seat, k)``;
- bets (``(PLAYER, seat, 2)``): per bet a uniform that picks the (bet, stake) pair and the variates its think time
  and latency need (a uniform or a normal each, by distribution; none for a fixed value), drawn ``_BETS`` bets at a
  time, uniforms first; so the j-th bet placed at a seat is a pure function of ``(seed, seat, j)``.

Adding a seat, or a player who leaves early, therefore moves nothing for anyone else. Draws are turned into
decisions ``_OPENINGS`` openings / ``_BETS`` bets at a time (a few numpy calls instead of Python arithmetic per
draw) and handed out as plain Python lists. ``_BETS`` is part of every seeded run's identity, like ``rng._BLOCK``
(a block's uniforms are drawn before its normals); ``_OPENINGS`` is not (openings draw uniforms only).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simulator.bets import BetType
from simulator.distributions import Floats
from simulator.profile import PlayerSettings
from simulator.rng import Streams, Subsystem

_OPENINGS = 256  # openings drawn at once
_BETS = 256  # bets drawn per block, per seat
_REFILL = 4  # blocks drawn and turned into decisions at once (not part of a run's identity: blocks are drawn in order)

Choice = tuple[BetType, int]  # (bet, stake in minor units)


class _Odds:
    """The settings turned into lookup tables, shared by every seat."""

    def __init__(self, settings: PlayerSettings) -> None:
        total = sum(settings.bets_per_round)
        weights = [1.0 - settings.p_bet] + [settings.p_bet * w / total for w in settings.bets_per_round]
        self.n_cum = np.cumsum(weights)  # 0 (no bet this round), 1, ..., M bets
        self.max_bets = len(settings.bets_per_round)
        # Bet type and stake are independent: one uniform picks the pair from the product distribution.
        pairs = [(b, s, wb * ws) for b, wb in settings.bet_weights for s, ws in settings.stakes]
        self.options: list[Choice] = [(b, s) for b, s, _ in pairs]
        self.option_array = np.empty(len(self.options), dtype=object)  # picked by index in one numpy call
        self.option_array[:] = self.options
        self.bet_cum = np.cumsum([w for _, _, w in pairs])
        self.leave_p = 1.0 / settings.session_rounds if settings.session_rounds > 0 else 0.0
        self.think = settings.think
        self.latency = settings.network.latency


def _pick(cum: np.ndarray[Any, Any], uniforms: np.ndarray[Any, Any], last: int) -> np.ndarray[Any, Any]:
    """Index of the option each uniform picks (``bisect_right(cum, u * total)``); a draw that rounds up to the
    total lands on the last option."""
    picked: np.ndarray[Any, Any] = np.minimum(np.searchsorted(cum, uniforms * cum[-1], side="right"), last)
    return picked


class SeatBets:
    """One seat's bets, in the order they are placed: think time, (bet, stake) and latency of each.

    ``pos`` is the index of the next bet not yet taken; a caller may take ``n`` bets by advancing it while
    ``pos + n <= len(thinks)`` (the crowd does, on its hot path), and must call :meth:`take` otherwise.
    """

    __slots__ = ("_gen", "_odds", "choices", "latencies", "pos", "thinks")

    def __init__(self, streams: Streams, odds: _Odds, seat: int) -> None:
        self._gen = np.random.Generator(np.random.PCG64(streams.seed_sequence(Subsystem.PLAYER, seat, 2)))
        self._odds = odds
        self.pos = 0
        self.thinks: list[float] = []
        self.choices: list[Choice] = []
        self.latencies: list[float] = []

    def take(self, n: int) -> int:
        """The seat's next ``n`` bets: returns the index of the first in :attr:`thinks`, :attr:`choices` and
        :attr:`latencies` (valid until the next call)."""
        start = self.pos
        if start + n > len(self.thinks):
            self._refill(start, n)
            start = 0
        self.pos = start + n
        return start

    def _refill(self, used: int, n: int) -> None:
        """Drop the ``used`` bets already taken and draw whole blocks until ``n`` bets are ready."""
        odds = self._odds
        blocks = max(-(-(n - (len(self.thinks) - used)) // _BETS), _REFILL)
        # Block by block, uniforms then normals: the j-th bet's draws never depend on how bets were taken.
        parts = [self._draw_block() for _ in range(blocks)]
        picks, thinks, latencies = (np.concatenate([p[i] for p in parts]) for i in range(3))
        picked = odds.option_array[_pick(odds.bet_cum, picks, len(odds.options) - 1)]
        self.thinks = self.thinks[used:] + odds.think.vector(thinks).tolist()
        self.choices = self.choices[used:] + picked.tolist()
        self.latencies = self.latencies[used:] + odds.latency.vector(latencies).tolist()

    def _draw_block(self) -> tuple[Floats, Floats, Floats]:
        """One block's variates: the uniform that picks each bet, then each think time's and latency's variate."""
        odds, gen = self._odds, self._gen
        kinds = [odds.think.variate, odds.latency.variate]
        uniforms = gen.random((_BETS, 1 + kinds.count("uniform")))  # column 0 picks the bet
        normals = gen.standard_normal((_BETS, kinds.count("normal")))
        columns: list[Floats] = []
        next_uniform = next_normal = 0
        for kind in kinds:
            if kind == "uniform":
                next_uniform += 1
                columns.append(uniforms[:, next_uniform])
            elif kind == "normal":
                columns.append(normals[:, next_normal])
                next_normal += 1
            else:
                columns.append(np.zeros(_BETS))  # a fixed value needs no draw
        return uniforms[:, 0], columns[0], columns[1]


class SeatPlans:
    """Per opening, every seat's number of bets and whether its player leaves; per seat, its bets."""

    def __init__(self, streams: Streams, settings: PlayerSettings, seats: int) -> None:
        self._odds = odds = _Odds(settings)
        self._gens = [
            np.random.Generator(np.random.PCG64(streams.seed_sequence(Subsystem.PLAYER, i))) for i in range(seats)
        ]
        self.bets = [SeatBets(streams, odds, i) for i in range(seats)]
        self._openings: list[tuple[list[int], list[bool]]] = []

    def next_opening(self) -> tuple[list[int], list[bool]]:
        """For the next opening, per seat: how many bets its player places, and whether they leave after."""
        if not self._openings:
            self._openings = self._draw_openings()
        return self._openings.pop()

    def _draw_openings(self) -> list[tuple[list[int], list[bool]]]:
        """``_OPENINGS`` openings' decisions, last opening first (so that :meth:`next_opening` pops them in order)."""
        if not self._gens:
            return [([], [])] * _OPENINGS
        odds = self._odds
        u = np.stack([g.random((_OPENINGS, 2)) for g in self._gens], axis=1)  # (openings, seats, 2)
        counts: list[list[int]] = _pick(odds.n_cum, u[..., 0], odds.max_bets).tolist()
        leaving: list[list[bool]] = (u[..., 1] < odds.leave_p).tolist()
        plans = list(zip(counts, leaving, strict=True))
        plans.reverse()
        return plans
