"""Statistical checks at fixed seeds: outcome frequencies and incident rates match the profile.

Every bound is a binomial one computed from the profile's rate, not from the run: |observed - n p| < 5 sd with
sd = sqrt(n p (1 - p)). At 5 sigma a correct model fails one check in about 1.7 million, so a failure means a bug.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from harness.files import load_profile
from simulator.events import (
    BowlLifted,
    DropItem,
    Dropped,
    Event,
    Revealed,
    RoundOpened,
    RoundStatus,
    ShakeSkipped,
    ShakeStarted,
)
from simulator.profile import profile_from_mapping
from tests.simulator.sim_helpers import ended, profile_of, run_table, set_field, shipped, write_profile

SIGMAS = 5.0


def assert_binomial(successes: int, trials: int, p: float, what: str) -> None:
    sd = math.sqrt(trials * p * (1 - p))
    assert abs(successes - trials * p) < SIGMAS * sd, (
        f"{what}: {successes}/{trials} = {successes / trials:.5f}, expected {p:.5f} ± {SIGMAS * sd / trials:.5f}"
    )


def settled_faces(events: list[Event]) -> list[str]:
    return [e.faces for e in ended(events).values() if e.status is RoundStatus.SETTLED and e.faces is not None]


def test_fair_tokens_give_1_4_6_4_1_over_16() -> None:
    faces = settled_faces(run_table(load_profile("standard"), seed=21, rounds=30_000))
    n = len(faces)
    assert n > 29_000  # standard voids about 4 rounds in 1000
    for reds, weight in enumerate((1, 4, 6, 4, 1)):
        assert_binomial(sum(f.count("R") == reds for f in faces), n, weight / 16, f"{reds} reds")


def test_a_biased_p_red_shifts_the_mean_to_2_4(tmp_path: Path) -> None:
    data = set_field(shipped("standard"), "tokens.p_red", 0.6)
    profile = load_profile(write_profile(tmp_path / "biased.yaml", data))
    faces = settled_faces(run_table(profile, seed=22, rounds=20_000))
    n = len(faces)
    mean = sum(f.count("R") for f in faces) / n
    # 4 tokens at 0.6: mean 2.4, variance 4 * 0.6 * 0.4 = 0.96 per round.
    assert abs(mean - 2.4) < SIGMAS * math.sqrt(0.96 / n)


def test_each_token_keeps_its_own_p_red(standard_data: dict[str, Any]) -> None:
    p_red = [0.5, 0.6, 0.7, 0.8]
    faces = settled_faces(run_table(profile_of(standard_data, tokens__p_red=p_red), seed=23, rounds=20_000))
    for token, p in enumerate(p_red):
        assert_binomial(sum(f[token] == "R" for f in faces), len(faces), p, f"token {token} red")


@pytest.fixture(scope="module")
def chaotic_run() -> list[Event]:
    return run_table(profile_from_mapping(shipped("chaotic")), seed=24, rounds=20_000)


def test_incident_rates_match_the_chaotic_profile(chaotic_run: list[Event]) -> None:
    # chaotic: p_overlap .2/shake, p_standing .03/token-shake, p_touch .05/lift, forget_shake .03/round.
    forgotten = {e.round for e in chaotic_run if isinstance(e, ShakeSkipped)}
    assert_binomial(len(forgotten), 20_000, 0.03, "forgotten shakes per round")

    # A reveal after a real shake shows that shake's overlap and standing tokens (a forgotten shake shows neither).
    reveals = [e for e in chaotic_run if isinstance(e, Revealed) and e.round not in forgotten]
    assert_binomial(sum(r.overlap for r in reveals), len(reveals), 0.2, "overlap per shake")
    standing = sum(r.faces.count("S") for r in reveals)
    assert_binomial(standing, 4 * len(reveals), 0.03, "standing per token-shake")

    lifts = [e for e in chaotic_run if isinstance(e, BowlLifted)]
    assert_binomial(sum(lift.touched for lift in lifts), len(lifts), 0.05, "touches per lift")


def test_drop_rates_match_the_chaotic_profile(chaotic_run: list[Event]) -> None:
    shakes = sum(isinstance(e, ShakeStarted) for e in chaotic_run)
    drops = [e for e in chaotic_run if isinstance(e, Dropped)]
    assert_binomial(sum(d.item is DropItem.BOWL for d in drops), shakes, 0.03, "bowl drops per shake")
    # Any drop: not (no bowl drop and no plate drop and no token falling), with p_fall .01 per token.
    p_any = 1 - (1 - 0.03) * (1 - 0.02) * (1 - 0.01) ** 4
    assert_binomial(len(drops), shakes, p_any, "drops of any kind per shake")


def median_duration(events: list[Event]) -> float:
    opened = {e.round: e.t for e in events if isinstance(e, RoundOpened)}
    durations = sorted(e.t - opened[r] for r, e in ended(events).items())
    return durations[len(durations) // 2]


def test_a_standard_round_lasts_betting_plus_react_plus_lift() -> None:
    # Nearly every round: 15 s of betting, then react (median 0.8 s) and lift (median 1.0 s), both narrow
    # log-normals: the median round lasts about 16.8 s.
    assert abs(median_duration(run_table(load_profile("standard"), seed=25, rounds=2000)) - 16.8) < 0.1


def test_a_compressed_round_lasts_under_a_third_of_a_second() -> None:
    # 0.25 s of betting, react median 0.01 s, lift median 0.01 s: about 0.27 s from opening to verdict.
    assert abs(median_duration(run_table(load_profile("compressed"), seed=26, rounds=2000)) - 0.27) < 0.01
