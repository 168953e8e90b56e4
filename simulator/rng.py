"""Seeded random streams: one root seed, one independent stream per subsystem.

Streams are derived with :class:`numpy.random.SeedSequence` spawn keys, so each is a pure function of
``(root seed, subsystem, index)``: adding a player (a new index) never moves the draws of the tokens, the dealer or
another player. Draws are buffered in blocks, which keeps a scalar draw far cheaper than a numpy call. A stream
that draws only uniforms gives the same values whatever the block size; one that mixes uniforms and normals does not
(the two buffers refill from one generator, so the block size sets how their refills interleave): ``_BLOCK`` is part
of every seeded run's identity and must never change.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import IntEnum
from typing import Any

import numpy as np

_BLOCK = 512


class Subsystem(IntEnum):
    """The first spawn-key element of each stream. Never renumber: it would change every seeded run."""

    TOKENS = 0
    SHAKER = 1
    DEALER = 2
    PROBLEMS = 3
    PLAYER = 4
    NETWORK = 5
    FAULTS = 6


class Stream:
    """One reproducible source of uniform and normal variates.

    Uniforms and normals come from two buffers refilled from the same generator; since refills happen at
    deterministic points of the consumption sequence, the values drawn depend only on the seed and the order of
    calls.
    """

    __slots__ = ("_gen", "_normals", "_uniforms")

    def __init__(self, seed_sequence: np.random.SeedSequence) -> None:
        self._gen = np.random.Generator(np.random.PCG64(seed_sequence))
        self._uniforms: list[float] = []
        self._normals: list[float] = []

    def random(self) -> float:
        """A uniform variate in [0, 1)."""
        try:
            return self._uniforms.pop()
        except IndexError:
            self._uniforms.extend(reversed(self._gen.random(_BLOCK).tolist()))
            return self._uniforms.pop()

    def normal(self) -> float:
        """A standard normal variate."""
        try:
            return self._normals.pop()
        except IndexError:
            self._normals.extend(reversed(self._gen.standard_normal(_BLOCK).tolist()))
            return self._normals.pop()

    def buffers(self) -> tuple[list[float], Callable[[], float], list[float], Callable[[], float]]:
        """The live uniform buffer, :meth:`random`, the live normal buffer and :meth:`normal`.

        Guarantee: ``buf.pop() if buf else draw()`` is the next variate, the very value ``draw()`` would return;
        the buffers are refilled only in place, so a sampler may keep them (it saves a call per draw).
        """
        return self._uniforms, self.random, self._normals, self.normal

    def block(self, n: int) -> list[float]:
        """``n`` uniforms in [0, 1) straight from the generator, bypassing the scalar buffer. A stream is used
        either in blocks or through the scalar methods, never both, so each use stays reproducible on its own."""
        values: list[float] = self._gen.random(n).tolist()
        return values

    def round_blocks(self, size: int) -> RoundBlocks:
        """Consecutive blocks of ``size`` uniforms straight from the generator (see :class:`RoundBlocks`); like
        :meth:`block`, a stream used this way is used for nothing else."""
        return RoundBlocks(self._gen.random, size)

    def exponential(self, mean: float) -> float:
        """An exponential variate with the given mean (inverse transform of one uniform)."""
        return -mean * math.log(1.0 - self.random())

    def below(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        return min(int(self.random() * n), n - 1)


class Streams:
    """The family of streams of one run, all derived from ``root_seed``."""

    def __init__(self, root_seed: int) -> None:
        if root_seed < 0:
            raise ValueError(f"seed must be >= 0, got {root_seed}")
        self.root_seed = root_seed

    def stream(self, subsystem: Subsystem, index: int = 0, *sub: int) -> Stream:
        """The stream of ``subsystem`` (and of its ``index``-th member, e.g. a seat; ``sub`` narrows further, e.g.
        to one round). Same arguments, same draws; different arguments, independent streams."""
        return Stream(self.seed_sequence(subsystem, index, *sub))

    def seed_sequence(self, subsystem: Subsystem, index: int = 0, *sub: int) -> np.random.SeedSequence:
        """The seed of :meth:`stream` with the same arguments, for callers that draw arrays from a numpy
        generator of their own (``np.random.Generator(np.random.PCG64(seed_sequence))``)."""
        return np.random.SeedSequence(entropy=self.root_seed, spawn_key=(int(subsystem), index, *sub))


_FETCH_ROUNDS = 64  # per-round blocks fetched from a generator in one numpy call


class RoundBlocks:
    """Consecutive blocks of ``size`` variates from one generator, one block per round, fetched ``_FETCH_ROUNDS``
    blocks at a time (a numpy call per round costs more than the draws themselves).

    Guarantee: the k-th block holds exactly what the k-th of k calls ``draw(size)`` would return, because PCG64's
    ``random(n)`` and ``standard_normal(n)`` consume the generator value by value, so one large fetch equals many
    small ones. The generator must have no other user.
    """

    __slots__ = ("_buffer", "_draw", "_next", "_size")

    def __init__(self, draw: Callable[[int], np.ndarray[Any, Any]], size: int) -> None:
        self._draw = draw
        self._size = size
        self._buffer: list[float] = []
        self._next = 0

    def take_span(self) -> tuple[list[float], int, int]:
        """The next block without copying it: ``(buffer, start, end)``, the block being ``buffer[start:end]``. The
        buffer is the caller's to read (not to modify) until the next call."""
        start = self._advance()
        return self._buffer, start, start + self._size

    def take_into(self, target: list[float]) -> None:
        """Replace the contents of ``target`` with the next block (``target`` stays the same list)."""
        start = self._advance()
        target[:] = self._buffer[start : start + self._size]

    def _advance(self) -> int:
        """Where the next block starts in the buffer, fetching the next ``_FETCH_ROUNDS`` blocks when it is used up."""
        start = self._next
        if start >= len(self._buffer):
            self._buffer = self._draw(self._size * _FETCH_ROUNDS).tolist()
            start = 0
        self._next = start + self._size
        return start


class RoundStream(Stream):
    """A stream whose draws are budgeted per round, so that what one round draws never moves another round.

    :meth:`start_round` takes the round's fixed block of uniforms (from the subsystem's generator, spawn key
    ``(subsystem, index)``) and of normals (from a generator of their own, ``(subsystem, index, 2)``); draws come
    from those blocks, and a round that needs more (an unusual number of re-shakes) continues on an overflow stream
    of that round alone (``(subsystem, index, 1, round)``). So a scripted incident that adds or removes work in one
    round leaves every other round's draws exactly as they were. The k-th round started gets the k-th blocks,
    whatever its number.
    """

    __slots__ = ("_key", "_normal_blocks", "_overflow", "_round", "_streams", "_uniform_blocks")

    def __init__(self, streams: Streams, subsystem: Subsystem, index: int, uniforms: int, normals: int) -> None:
        super().__init__(streams.seed_sequence(subsystem, index))
        self._streams = streams
        self._key = (subsystem, index)
        normal_gen = np.random.Generator(np.random.PCG64(streams.seed_sequence(subsystem, index, 2)))
        self._uniform_blocks = RoundBlocks(self._gen.random, uniforms)
        self._normal_blocks = RoundBlocks(normal_gen.standard_normal, normals)
        self._round = -1
        self._overflow: Stream | None = None

    def start_round(self, round_no: int) -> None:
        """Begin drawing for ``round_no`` (discarding what the previous round left unused)."""
        self._round = round_no
        # Refilled in place: samplers bound with :meth:`buffers` keep these very lists.
        self._uniform_blocks.take_into(self._uniforms)
        self._normal_blocks.take_into(self._normals)
        self._overflow = None

    def _spill(self) -> Stream:
        if self._overflow is None:
            subsystem, index = self._key
            self._overflow = self._streams.stream(subsystem, index, 1, self._round)
        return self._overflow

    def random(self) -> float:
        try:
            return self._uniforms.pop()
        except IndexError:
            return self._spill().random()

    def normal(self) -> float:
        try:
            return self._normals.pop()
        except IndexError:
            return self._spill().normal()
