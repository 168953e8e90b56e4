"""Profiles: the shipped ones load; every kind of bad field is a ProfileError naming the dotted field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.files import available_profiles, load_profile
from simulator import ProfileError
from simulator.bets import BetType
from simulator.distributions import Fixed, LogNormal
from simulator.profile import STAKE_QUANTUM, profile_from_mapping
from tests.simulator.sim_helpers import del_field, profile_of, set_field, shipped, write_profile


def test_the_shipped_profiles_load_and_carry_their_names() -> None:
    assert {"chaotic", "compressed", "standard"} <= set(available_profiles())
    for name in available_profiles():
        assert load_profile(name).name == name


def test_standard_profile_values_come_through() -> None:
    profile = load_profile("standard")
    assert profile.table.max_reshakes == 3
    assert profile.table.pause_timeout == 60.0
    assert profile.tokens.p_red == (0.5, 0.5, 0.5, 0.5)
    assert profile.timing.shake == LogNormal(4.0, 0.2)
    assert profile.players.count == 10
    assert {bet for bet, _ in profile.players.bet_weights} == set(BetType)  # all ten bet types are played
    assert all(stake % 50 == 0 for stake, _ in profile.players.stakes)


def test_a_profile_loads_from_a_path(tmp_path: Path, standard_data: dict[str, Any]) -> None:
    set_field(standard_data, "name", "mine")
    set_field(standard_data, "tokens.p_red", [0.5, 0.6, 0.5, 0.4])
    set_field(standard_data, "dealer.timing.lift", 1.5)
    profile = load_profile(write_profile(tmp_path / "mine.yaml", standard_data))
    assert profile.name == "mine"
    assert profile.tokens.p_red == (0.5, 0.6, 0.5, 0.4)
    assert profile.timing.lift == Fixed(1.5)


def test_the_stake_quantum_is_fifty_minor_units(standard_data: dict[str, Any]) -> None:
    # LCM of the payout odds' denominators (14/1, 14/5, 3/2, 13/2, 24/25) is 50.
    assert STAKE_QUANTUM == 50
    profile = profile_of(standard_data, players__stakes={50: 1, 150: 2})
    assert profile.players.stakes == ((50, 1.0), (150, 2.0))


BAD_FIELDS: list[tuple[str, Any, str]] = [
    ("table.betting_period", 0, "table.betting_period: must be in [0.001, inf], got 0"),
    ("table.round_gap", -1, "table.round_gap: must be in [0.0, inf], got -1"),
    ("table.max_reshakes", 2.5, "table.max_reshakes: must be a whole number in [0, 100], got 2.5"),
    ("table.max_reshakes", -1, "table.max_reshakes: must be a whole number in [0, 100]"),
    ("table.max_reshakes", True, "table.max_reshakes: must be a whole number"),
    ("table.pause_timeout", "long", "table.pause_timeout: expected a number, got 'long'"),
    ("tokens.p_standing", 1.5, "tokens.p_standing: must be a probability in [0, 1], got 1.5"),
    ("tokens.p_fall", -0.1, "tokens.p_fall: must be a probability in [0, 1]"),
    ("tokens.p_overlap", None, "tokens.p_overlap: must be a probability in [0, 1], got None"),
    ("tokens.p_red", [0.5, 0.5, 0.5], "tokens.p_red: expected one probability or a list of 4"),
    ("tokens.p_red", [0.5, 0.5, 1.2, 0.5], "tokens.p_red[2]: must be a probability in [0, 1], got 1.2"),
    ("tokens.p_red", "fair", "tokens.p_red: expected one probability or a list of 4"),
    ("dealer.timing.shake", {"dist": "gamma"}, "dealer.timing.shake.dist: must be one of"),
    ("dealer.timing.lift", -1, "dealer.timing.lift: must be >= 0"),
    ("dealer.timing.react", {"dist": "lognormal", "median": 1}, "dealer.timing.react: a lognormal"),
    ("dealer.mistakes.forget_shake", True, "dealer.mistakes.forget_shake: must be a probability"),
    ("dealer.mistakes", [0.1], "dealer.mistakes: expected a mapping, got list"),
    ("shaker.p_touch", 2, "shaker.p_touch: must be a probability in [0, 1], got 2"),
    ("problems.resolve", {"dist": "exponential", "mean": 0}, "problems.resolve.mean: must be > 0"),
    ("players.count", -1, "players.count: must be a whole number in [0, 1000], got -1"),
    ("players.p_bet", 1.01, "players.p_bet: must be a probability"),
    ("players.bets_per_round", {1: 1, 3: 1}, "players.bets_per_round: keys must be 1, 2, 3, ... without gaps"),
    ("players.bets_per_round", {}, "players.bets_per_round: expected a non-empty mapping"),
    ("players.bet_weights", {"five_red": 1}, "players.bet_weights.five_red: unknown bet type; allowed: four_red"),
    ("players.bet_weights", {"big": -1}, "players.bet_weights.big: weight must be a number >= 0, got -1"),
    ("players.bet_weights", {"big": 0, "small": 0}, "players.bet_weights: weights must not all be 0"),
    ("players.stakes", {120: 1}, "players.stakes.120: a stake is a positive whole number of minor units, a mul"),
    ("players.stakes", {0: 1}, "players.stakes.0: a stake is a positive whole number"),
    ("players.stakes", {12.5: 1}, "players.stakes.12.5: a stake is a positive whole number"),
    ("players.think", "soon", "players.think: expected a number of seconds or a mapping"),
    ("players.session_rounds", -3, "players.session_rounds: must be in [0.0, inf], got -3"),
    ("players.network.latency", {"dist": "uniform", "low": 1, "high": 0}, "players.network.latency.high"),
    ("players.network", None, "players.network: expected a mapping, got NoneType"),
    ("name", 7, "name: expected text, got 7"),
    ("table", [1, 2], "table: expected a mapping, got list"),
]


@pytest.mark.parametrize(("dotted", "value", "message"), BAD_FIELDS, ids=[f"{d}={v!r}" for d, v, _ in BAD_FIELDS])
def test_a_bad_field_is_named_with_what_is_allowed(
    standard_data: dict[str, Any], dotted: str, value: Any, message: str
) -> None:
    set_field(standard_data, dotted, value)
    with pytest.raises(ProfileError) as info:
        profile_from_mapping(standard_data)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "dotted", ["colour", "tokens.p_bias", "dealer.timing.nap", "dealer.style", "players.network.jitter"]
)
def test_an_unknown_key_is_rejected_not_ignored(standard_data: dict[str, Any], dotted: str) -> None:
    set_field(standard_data, dotted, 1)
    with pytest.raises(ProfileError, match=rf"^{dotted.replace('.', '[.]')}: unknown field; allowed here: "):
        profile_from_mapping(standard_data)


@pytest.mark.parametrize("dotted", ["tokens.p_overlap", "table", "players.network.down", "dealer.timing.shake"])
def test_a_missing_field_is_named(standard_data: dict[str, Any], dotted: str) -> None:
    del_field(standard_data, dotted)
    with pytest.raises(ProfileError, match=rf"^{dotted.replace('.', '[.]')}: missing \(required\)$"):
        profile_from_mapping(standard_data)


def test_an_unknown_profile_name_lists_the_shipped_ones() -> None:
    with pytest.raises(
        ProfileError, match=r"^unknown profile 'stnadard'; shipped profiles: .*chaotic, compressed.*standard"
    ):
        load_profile("stnadard")


def test_a_missing_profile_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match=r"profile file not found: .*nothere.yaml"):
        load_profile(tmp_path / "nothere.yaml")


def test_a_profile_that_is_not_yaml_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("table: {betting_period: [1,\n", encoding="utf-8")
    with pytest.raises(ProfileError, match=r"broken.yaml: not valid YAML"):
        load_profile(path)


def test_a_profile_that_is_a_list_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n", encoding="utf-8")
    with pytest.raises(ProfileError, match=r"list.yaml: profile: expected a mapping, got list"):
        load_profile(path)


def test_a_file_error_names_both_the_file_and_the_field(tmp_path: Path) -> None:
    data = shipped("chaotic")
    set_field(data, "shaker.p_drop_plate", 3)
    path = write_profile(tmp_path / "bad.yaml", data)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert str(info.value).startswith(f"profile {path}: shaker.p_drop_plate: must be a probability")
