"""The randomness lab's battery for a physical four-token shaker, beside the kit's tests in ``fairness.py``.

Every test takes the settled rounds in order (void and cancelled rounds are skipped, so "consecutive" means
consecutive settled rounds), a batch of streams at once (one per row, see :mod:`harness.stats.primitives`), and
gives a p-value under "four fair tokens, independent of each other and of every earlier round". ``patterns``
carry bit j set when token j shows red (tokens identified); ``reds`` the red count.

* ``frequency`` (per token): exact two-sided binomial test of token j's red count against n/2.
* ``pair`` (per pair of tokens): chi-square of independence of the 2×2 table of the two tokens' faces, df 1.
* ``runs`` (per token): Wald–Wolfowitz runs of token j's faces (a sticky token makes too few runs).
* ``serial_reds``: chi-square of independence of consecutive red counts (5×5 transitions, df 16).
* ``serial_patterns``: the same over consecutive token patterns (16×16, df 225).
* ``serial_token`` (per token): token j's face against the whole previous pattern (16×2, df 15): a token that
  follows a rule of the previous round (an XOR of two earlier faces, say) is seen here even when it is
  independent of each earlier token alone.
* ``repeat``: the number of rounds whose pattern equals the previous one, exact binomial against 1/16 (under the
  null these indicators are independent Bernoulli(1/16)).
* ``stationarity``: Σ_b S_b² / n_b over blocks of ``min(1000, n // 10)`` settled rounds (S_b the block's red
  excess Σ(reds − 2), variance n_b under the null), against chi-square with one df per block; the last
  n mod block rounds are left out of this test.

Transition tables use the chi-square of independence on overlapping pairs, asymptotically chi-square with
(r − 1)(c − 1) df under independence (Anderson and Goodman 1957).
"""

from __future__ import annotations

import numpy as np

from harness.stats.primitives import (
    BatchResult,
    Ints,
    binomial_two_sided,
    chi2_sf,
    independence,
    masked,
    normal_two_sided,
    runs,
)

TOKENS = 4
PAIRS = tuple((i, j) for i in range(TOKENS) for j in range(i + 1, TOKENS))
BLOCK_ROUNDS = 1_000
MIN_BLOCK_ROUNDS = 50


def _bit(patterns: Ints, token: int) -> Ints:
    return (patterns >> token) & 1


def _na(name: str, kind: str, rows: int, why: str, tokens: tuple[int, ...] = ()) -> BatchResult:
    nan = np.full(rows, np.nan)
    return BatchResult(name, kind, tokens, nan, np.zeros(rows, np.int64), nan, ("",) * rows, why)


def frequency(patterns: Ints, token: int) -> BatchResult:
    """Exact binomial test of token ``token``'s red count against n/2; statistic z = (2k − n)/√n."""
    rows, n = patterns.shape
    name = f"frequency_t{token}"
    if n < 30:
        return _na(name, "frequency", rows, f"{n} identified rounds, need >= 30", (token,))
    k = _bit(patterns, token).sum(axis=1)
    z = (2 * k - n) / np.sqrt(n)
    notes = tuple(f"P(red) estimate {x / n:.5f}" for x in k)
    return BatchResult(
        name, "frequency", (token,), z, np.zeros(rows, np.int64), binomial_two_sided(k, n, 0.5), notes, has_df=False
    )


def _table(
    name: str, kind: str, rows_idx: Ints, cols_idx: Ints, shape: tuple[int, int], tokens: tuple[int, ...], what: str
) -> BatchResult:
    stat, df, ok = independence(rows_idx, cols_idx, shape)
    pairs = rows_idx.shape[1]
    why = f"{pairs} {what}: expected counts too small (Cochran's rule)"
    notes = tuple(f"{pairs} {what}" if good else why for good in ok)
    return BatchResult(name, kind, tokens, stat, df, masked(chi2_sf(stat, df), ok), notes, why)


def pair(patterns: Ints, first: int, second: int) -> BatchResult:
    """Chi-square of independence of two tokens' faces in the same round (2×2, df 1)."""
    return _table(
        f"pair_t{first}_t{second}",
        "pair",
        _bit(patterns, first),
        _bit(patterns, second),
        (2, 2),
        (first, second),
        "rounds",
    )


def runs_token(patterns: Ints, token: int) -> BatchResult:
    """Wald–Wolfowitz runs of token ``token``'s faces over consecutive settled rounds; two-sided normal p."""
    z, count, mean, ok = runs(_bit(patterns, token).astype(bool))
    why = "fewer than 10 red or 10 white faces"
    notes = tuple(f"{c} runs, {m:.1f} expected" if good else why for c, m, good in zip(count, mean, ok, strict=True))
    rows = patterns.shape[0]
    return BatchResult(
        f"runs_t{token}",
        "runs",
        (token,),
        z,
        np.zeros(rows, np.int64),
        masked(normal_two_sided(z), ok),
        notes,
        why,
        has_df=False,
    )


def serial_reds(reds: Ints) -> BatchResult:
    """Consecutive red counts (5×5 transitions), chi-square of independence, df 16."""
    return _table("serial_reds", "serial_reds", reds[:, :-1], reds[:, 1:], (5, 5), (), "consecutive pairs")


def serial_patterns(patterns: Ints) -> BatchResult:
    """Consecutive token patterns (16×16 transitions), chi-square of independence, df 225."""
    return _table(
        "serial_patterns", "serial_patterns", patterns[:, :-1], patterns[:, 1:], (16, 16), (), "consecutive pairs"
    )


def serial_token(patterns: Ints, token: int) -> BatchResult:
    """Token ``token``'s face against the previous round's pattern (16×2), chi-square of independence, df 15."""
    return _table(
        f"serial_t{token}",
        "serial_token",
        patterns[:, :-1],
        _bit(patterns[:, 1:], token),
        (16, 2),
        (token,),
        "consecutive pairs",
    )


def repeat(patterns: Ints) -> BatchResult:
    """Rounds whose pattern repeats the previous one: exact binomial test against 1/16."""
    rows, n = patterns.shape
    pairs = n - 1
    if pairs < 80:
        return _na("repeat", "repeat", rows, f"{max(pairs, 0)} consecutive pairs, need >= 80")
    k = np.count_nonzero(patterns[:, 1:] == patterns[:, :-1], axis=1).astype(np.int64)
    z = (k - pairs / 16) / np.sqrt(pairs * 15 / 256)
    notes = tuple(f"{x} repeats, {pairs / 16:.1f} expected" for x in k)
    return BatchResult(
        "repeat", "repeat", (), z, np.zeros(rows, np.int64), binomial_two_sided(k, pairs, 1 / 16), notes, has_df=False
    )


def stationarity(reds: Ints) -> BatchResult:
    """Red excess per block of settled rounds: Σ S_b²/n_b against chi-square with one df per block."""
    rows, n = reds.shape
    block = min(BLOCK_ROUNDS, n // 10)
    if block < MIN_BLOCK_ROUNDS:
        return _na("stationarity", "stationarity", rows, f"{n} settled rounds, need >= {10 * MIN_BLOCK_ROUNDS}")
    blocks = n // block
    sums = (reds[:, : blocks * block] - 2).reshape(rows, blocks, block).sum(axis=2).astype(np.float64)
    q = (sums**2).sum(axis=1) / block
    worst = np.argmax(np.abs(sums), axis=1)
    notes = tuple(
        f"{blocks} blocks of {block}; largest |z| {abs(sums[r, w]) / np.sqrt(block):.2f} in block {w + 1}"
        for r, w in enumerate(worst)
    )
    return BatchResult(
        "stationarity", "stationarity", (), q, np.full(rows, blocks, np.int64), chi2_sf(q, blocks), notes
    )


def lab_battery(reds: Ints, patterns: Ints | None) -> list[BatchResult]:
    """Every test of the battery on a batch of settled-round streams (``patterns`` None: tokens not
    identified, and the per-token, pattern and repeat tests are not applicable)."""
    rows = reds.shape[0]
    tests = [serial_reds(reds), stationarity(reds)]
    if patterns is None:
        why = "tokens not identified (faces missing)"
        tests += [_na(f"frequency_t{j}", "frequency", rows, why, (j,)) for j in range(TOKENS)]
        tests += [_na(f"pair_t{i}_t{j}", "pair", rows, why, (i, j)) for i, j in PAIRS]
        tests += [_na(f"runs_t{j}", "runs", rows, why, (j,)) for j in range(TOKENS)]
        tests += [_na("serial_patterns", "serial_patterns", rows, why)]
        tests += [_na(f"serial_t{j}", "serial_token", rows, why, (j,)) for j in range(TOKENS)]
        tests += [_na("repeat", "repeat", rows, why)]
        return tests
    tests += [frequency(patterns, j) for j in range(TOKENS)]
    tests += [pair(patterns, i, j) for i, j in PAIRS]
    tests += [runs_token(patterns, j) for j in range(TOKENS)]
    tests.append(serial_patterns(patterns))
    tests += [serial_token(patterns, j) for j in range(TOKENS)]
    tests.append(repeat(patterns))
    return tests
