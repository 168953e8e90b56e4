"""Schedule validation names the field and the allowed values; plans are seeded and per-seed subsets."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.faults.schedule import ScheduleError, load_schedule, parse_schedule, schedule_from_text
from harness.faults.schedule_model import KINDS, SERIAL_KINDS, TABLE_KINDS, plan
from tests.faults.faults_helpers import Make

FIXTURES = sorted(__import__("pathlib").Path(__file__).resolve().parents[2].joinpath("fixtures/faults").glob("*.yaml"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_shipped_schedule_is_valid(path: Any) -> None:
    schedule = load_schedule(path)
    assert schedule.rounds >= 1
    again = schedule_from_text(schedule.to_yaml(), path.name)
    assert again == schedule  # the canonical form reads back as itself
    assert again.digest() == schedule.digest()


def test_a_digest_follows_the_schedule_s_content_and_needs_no_hashable_fields() -> None:
    """Digests are cached per distinct schedule: a changed field gives another digest, and a schedule built in code
    with a list where the model has a tuple still gets its digest (the same as the tuple's)."""
    from dataclasses import replace

    schedule = load_schedule(FIXTURES[0])
    assert replace(schedule, rounds=schedule.rounds + 1).digest() != schedule.digest()
    assert replace(schedule, stakes=list(schedule.stakes)).digest() == schedule.digest()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"rounds": 0}, "test.yaml: rounds: must be a whole number in [1, 100000]; got 0"),
        ({"stakes": [120]}, "test.yaml: stakes[0]: must be a whole multiple of 50 minor units; got 120"),
        ({"faults": [{"kind": "meteor", "at": {"round": 1}}]}, "test.yaml: faults[0].kind: must be one of serial_flip"),
        ({"faults": [{"kind": "server_kill", "at": {"round": 1, "phase": "open"}}]},
         "faults[0].at.phase: must be one of betting_open, shaking, betting_closed, reveal, settling; got 'open'"),
        ({"faults": [{"kind": "serial_drop", "target": "printer", "at": {"round": 1}}]},
         "faults[0].target: must be one of bowl, shaker, reader, lamp, console; got 'printer'"),
        ({"faults": [{"kind": "player_reset", "target": "p9", "at": {"round": 1}}]},
         "faults[0].target: must be one of all, p1, p2; got 'p9'"),
        ({"faults": [{"kind": "table_touch", "at": {"time": 3}}]},
         "faults[0].at.time: table incidents are triggered by round only; got 3"),
        ({"faults": [{"kind": "server_kill", "at": {"round": 1}, "rate": 0.5}]},
         "faults[0].rate: not a parameter of server_kill; got 0.5"),
        ({"faults": [{"kind": "server_kill"}]}, "faults[0].at: missing (required)"),
        ({"faults": [{"kind": "serial_flip", "target": "bowl", "at": {"round": 1}, "rate": 2}]},
         "faults[0].rate: must be a number in [0, 1]; got 2"),
        ({"targets": {"server": False}, "faults": [{"kind": "server_kill", "at": {"round": 1}}]},
         "faults[0].kind: targets.server is false: this schedule may not inject server_kill"),
        ({"random": {"kinds": ["serial_flip"], "enabled": 2}},
         "random.enabled: must be a whole number in [1, 1]; got 2"),
        ({"rounds": 2, "colour": "red"}, "test.yaml: colour: unknown field; allowed: seed, rounds"),
    ],
)  # fmt: skip
def test_bad_fields_are_named(doc: dict[str, Any], message: str) -> None:
    raw = {"players": 2, **doc}
    with pytest.raises(ScheduleError) as info:
        parse_schedule(raw, "test.yaml")
    assert message in str(info.value)


def test_invalid_yaml_is_reported_with_the_source() -> None:
    with pytest.raises(ScheduleError, match=r"^x.yaml: not valid YAML") as info:
        schedule_from_text("faults: [", "x.yaml")
    # one line, pointing just past the 9 characters of the text (the unclosed "[" runs into the end)
    assert "\n" not in str(info.value) and str(info.value).endswith("at line 1, column 10")


def test_unreadable_file_is_named(tmp_path: Any) -> None:
    with pytest.raises(ScheduleError, match=r"cannot read schedule .*missing\.yaml"):
        load_schedule(tmp_path / "missing.yaml")


def test_plan_is_the_explicit_faults_in_trigger_order(make_schedule: Make) -> None:
    late = {"kind": "server_kill", "at": {"round": 2, "phase": "reveal"}}
    early = {"kind": "player_reset", "target": "p1", "at": {"round": 2, "phase": "shaking"}}
    timed = {"kind": "serial_drop", "target": "bowl", "at": {"time": 0.5}}
    faults = plan(make_schedule(late, timed, early))
    assert [f.kind for f in faults] == ["player_reset", "server_kill", "serial_drop"]


def _random_schedule(enabled: int) -> Any:
    return parse_schedule(
        {"rounds": 40, "players": 3, "random": {"rate": 1.0, "kinds": list(KINDS), "enabled": enabled}}, "r.yaml"
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_random_plan_is_a_function_of_the_seed_and_uses_only_the_enabled_subset(seed: int) -> None:
    schedule = _random_schedule(4)
    first, again = plan(schedule, seed), plan(schedule, seed)
    assert first == again
    assert len({f.kind for f in first}) <= 4
    for f in first:
        assert 1 <= f.at.round <= 40
        if f.kind in TABLE_KINDS:
            assert f.duration == 0.0
        else:
            assert 0.05 <= f.duration <= 1.0
        if f.kind in SERIAL_KINDS:
            assert f.target in ("bowl", "shaker", "reader", "lamp", "console")


def test_different_seeds_enable_different_subsets() -> None:
    schedule = _random_schedule(3)
    subsets = {frozenset(f.kind for f in plan(schedule, seed)) for seed in range(20)}
    assert len(subsets) > 5


def test_random_rate_sets_the_mean_number_of_faults() -> None:
    schedule = parse_schedule({"rounds": 2000, "random": {"rate": 0.5, "kinds": ["server_kill"]}}, "r.yaml")
    count = len(plan(schedule, 11))
    assert 900 <= count <= 1100  # Poisson(0.5) per round over 2000 rounds: mean 1000, sd ~32
