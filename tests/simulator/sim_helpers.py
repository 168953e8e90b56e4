"""Helpers for the simulator tests: profiles built from the shipped YAML with chosen fields changed, and runs.

Profiles are always built through the public loader path (:func:`profile_from_mapping` or a YAML file), so every
test also exercises the validation a user's profile goes through.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Any

import simpy
import yaml

from harness.files import PROFILE_DIR
from simulator import Script, Table
from simulator.events import Event, RoundEnded
from simulator.profile import Profile, profile_from_mapping

#: Fixed, round-number timings (seconds) for the rule tests, so every expected time can be added up by hand.
FIXED_TIMING = {"place": 1.0, "shake": 4.0, "react": 0.5, "lift": 1.0, "rearrange": 3.0, "reassemble": 8.0}

#: Simulation seconds per round after which a run counts as stalled (the slowest profile needs well under 200).
SIM_SECONDS_PER_ROUND = 1000.0

#: Every chance-incident field of a profile; zeroing them all gives a table where nothing goes wrong by chance.
INCIDENT_FIELDS = (
    "tokens.p_standing",
    "tokens.p_fall",
    "tokens.p_overlap",
    "dealer.mistakes.forget_shake",
    "dealer.mistakes.early_lift",
    "shaker.p_drop_bowl",
    "shaker.p_drop_plate",
    "shaker.p_touch",
    "problems.rate",
)


def shipped(name: str) -> dict[str, Any]:
    """A fresh, mutable copy of a shipped profile document."""
    data = yaml.safe_load((PROFILE_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return copy.deepcopy(data)


def set_field(data: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """Set ``a.b.c`` in a profile document (in place) and return the document."""
    *parents, last = dotted.split(".")
    node = data
    for key in parents:
        node = node[key]
    node[last] = value
    return data


def del_field(data: dict[str, Any], dotted: str) -> dict[str, Any]:
    """Remove ``a.b.c`` from a profile document (in place) and return the document."""
    *parents, last = dotted.split(".")
    node = data
    for key in parents:
        node = node[key]
    del node[last]
    return data


def quiet_data(base: str = "standard") -> dict[str, Any]:
    """A shipped profile with every incident rate 0 and fixed timings: only scripts make anything happen."""
    data = shipped(base)
    for dotted in INCIDENT_FIELDS:
        set_field(data, dotted, 0.0)
    data["dealer"]["timing"].update(FIXED_TIMING)
    set_field(data, "problems.resolve", 30.0)
    return data


def profile_of(data: dict[str, Any], **dotted: Any) -> Profile:
    """Validate ``data`` with the fields given as ``tokens__p_red=0.6`` (``__`` for ``.``) changed."""
    doc = copy.deepcopy(data)
    for key, value in dotted.items():
        set_field(doc, key.replace("__", "."), value)
    return profile_from_mapping(doc)


def write_profile(path: Path, data: dict[str, Any]) -> Path:
    """Write a profile document as YAML and return the path."""
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run_bounded(table: Table, rounds: int) -> Table:
    """Run ``table`` for ``rounds`` rounds; a run that stalls (a round that never ends) raises instead of spinning.

    The table must have been built on an environment from :func:`watched_env` with the same ``rounds``.
    """
    table.run(rounds)
    return table


def watched_env(rounds: int) -> simpy.Environment:
    """A SimPy environment with a watchdog process that fails the run once ``SIM_SECONDS_PER_ROUND * rounds`` of
    simulation time have passed (a stalled table would otherwise spin forever while links keep ticking)."""
    env = simpy.Environment()
    limit = SIM_SECONDS_PER_ROUND * rounds

    def watchdog() -> Generator[simpy.Event, None, None]:
        yield env.timeout(limit)
        raise RuntimeError(f"run stalled: {rounds} rounds not ended after {limit:.0f} s of simulation time")

    env.process(watchdog())
    return env


def run_table(
    profile: Profile, seed: int, rounds: int, script: list[dict[str, Any]] | None = None, players: int | None = 0
) -> list[Event]:
    """Run ``rounds`` rounds (no players unless asked) on a watched environment and return the event log."""
    table = Table(
        profile,
        seed=seed,
        env=watched_env(rounds),
        script=Script.from_data(script) if script else None,
        players=players,
    )
    return list(run_bounded(table, rounds).log)


def by_round(events: Iterable[Event]) -> dict[int, list[Event]]:
    """The events that carry a ``round`` field, grouped by round, in log order."""
    out: dict[int, list[Event]] = defaultdict(list)
    for event in events:
        round_no = getattr(event, "round", None)
        if round_no is not None:
            out[round_no].append(event)
    return dict(out)


def ended(events: Iterable[Event]) -> dict[int, RoundEnded]:
    """Each round's RoundEnded (asserting there is at most one per round)."""
    out: dict[int, RoundEnded] = {}
    for event in events:
        if isinstance(event, RoundEnded):
            assert event.round not in out, f"round {event.round} ended twice"
            out[event.round] = event
    return out


def kinds(events: Iterable[Event]) -> list[str]:
    """The ``kind`` names of events, in order."""
    return [event.kind for event in events]
