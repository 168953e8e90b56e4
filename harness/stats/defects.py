"""Generated outcome streams: fair tokens and the biases a physical shaker really has, many streams at once.

Each kind is declared once in :data:`DEFECTS`; the calibration and power script
(:mod:`harness.stats.calibrate`), the tests and ``docs/statistics.md`` read it. A batch is an array of token
patterns, shape (streams, rounds), bit j set when token j shows red, drawn from a seeded numpy generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Patterns = npt.NDArray[np.int64]
_BITS = np.array([1, 2, 4, 8], dtype=np.int64)


def _tokens(rng: np.random.Generator, streams: int, rounds: int, p_red: npt.ArrayLike) -> Patterns:
    """Independent tokens, P(red) per token (4 values) or per round and token (broadcast to rounds × 4)."""
    reds = rng.random((streams, rounds, 4), dtype=np.float32) < np.asarray(p_red, dtype=np.float32)
    return (reds.astype(np.int64) @ _BITS).astype(np.int64)


def fair(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """Four fair independent tokens: every pattern 0..15 with probability 1/16."""
    return rng.integers(0, 16, size=(streams, rounds), dtype=np.int64)


def _last_fresh(keep: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """Per row and round, the index of the latest round at or before it that was not kept (round 0 never is)."""
    keep = keep.copy()
    keep[:, 0] = False
    idx = np.where(keep, 0, np.arange(keep.shape[1], dtype=np.int64))
    return np.maximum.accumulate(idx, axis=1)


def _set_bit(patterns: Patterns, token: int, bit: npt.NDArray[np.int64]) -> Patterns:
    return (patterns & ~np.int64(1 << token)) | (bit << token)


def uniform_bias(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """Every token P(red) 0.51 (one point towards red)."""
    return _tokens(rng, streams, rounds, [0.51] * 4)


def single_token(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """Token 0 at P(red) 0.52, the others fair."""
    return _tokens(rng, streams, rounds, [0.52, 0.5, 0.5, 0.5])


def copy_token(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """Token 2 shows token 1's face with probability 0.05 (they stick together), else its own fair face."""
    pats = fair(rng, streams, rounds)
    copy = rng.random((streams, rounds)) < 0.05
    return np.where(copy, _set_bit(pats, 2, (pats >> 1) & 1), pats)


def round_repeat(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """With probability 0.03 a round repeats the previous round's pattern exactly."""
    pats = fair(rng, streams, rounds)
    keep = rng.random((streams, rounds)) < 0.03
    return np.take_along_axis(pats, _last_fresh(keep), axis=1)


def switching(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """Every token at P(red) 0.52 for 2,500 rounds, then 0.48 for 2,500, and so on."""
    p = np.where((np.arange(rounds) // 2_500) % 2 == 0, 0.52, 0.48)
    return _tokens(rng, streams, rounds, np.repeat(p[:, None], 4, axis=1))


def sticky_token(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """Token 0 keeps its previous face with probability 0.10, else shows a fresh fair face."""
    pats = fair(rng, streams, rounds)
    keep = rng.random((streams, rounds)) < 0.10
    bit = np.take_along_axis(pats & 1, _last_fresh(keep), axis=1)
    return _set_bit(pats, 0, bit)


def xor_token(rng: np.random.Generator, streams: int, rounds: int) -> Patterns:
    """With probability 0.10 token 3 shows the previous round's token 0 XOR token 1, else a fresh fair face:
    independent of every single earlier token, dependent on the previous pattern."""
    pats = fair(rng, streams, rounds)
    rule = np.zeros_like(pats)
    rule[:, 1:] = (pats[:, :-1] & 1) ^ ((pats[:, :-1] >> 1) & 1)
    follow = rng.random((streams, rounds)) < 0.10
    follow[:, 0] = False
    return np.where(follow, _set_bit(pats, 3, rule), pats)


@dataclass(frozen=True, slots=True)
class Defect:
    """One generated kind of stream: its name, what it is, and its batch generator."""

    name: str
    description: str
    generate: Callable[[np.random.Generator, int, int], Patterns]


DEFECTS: tuple[Defect, ...] = (
    Defect("fair", "four fair independent tokens", fair),
    Defect("uniform_1pp", "every token P(red) 0.51", uniform_bias),
    Defect("single_0.52", "token 0 at P(red) 0.52", single_token),
    Defect("copy_0.05", "token 2 copies token 1 with probability 0.05", copy_token),
    Defect("repeat_0.03", "a round repeats the previous one with probability 0.03", round_repeat),
    Defect("switching", "bias 0.52 and 0.48 alternating every 2,500 rounds", switching),
    Defect("sticky_0.10", "token 0 keeps its last face with probability 0.10", sticky_token),
    Defect("xor_0.10", "token 3 = previous token 0 XOR token 1 with probability 0.10", xor_token),
)
BY_NAME = {d.name: d for d in DEFECTS}


def defect(name: str) -> Defect:
    """The :class:`Defect` called ``name``.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown stream kind {name!r}; one of {', '.join(BY_NAME)}") from None
