"""Byte-identical replay: the same seed and profile give the same JSON Lines; another seed does not."""

from __future__ import annotations

import io

from simulator import Script, Table
from simulator.profile import profile_from_mapping
from tests.simulator.sim_helpers import run_bounded, shipped, watched_env


def jsonl(seed: int, profile_name: str = "chaotic", rounds: int = 150, script: Script | None = None) -> bytes:
    table = Table(profile_from_mapping(shipped(profile_name)), seed=seed, env=watched_env(rounds), script=script)
    run_bounded(table, rounds)
    out = io.StringIO()
    table.log.write_jsonl(out)
    return out.getvalue().encode()


def test_same_seed_and_profile_give_identical_bytes() -> None:
    first = jsonl(7)
    assert first == jsonl(7)
    assert b'"kind":"bet_sent"' in first and b'"kind":"dropped"' in first  # players and incidents included


def test_a_scripted_run_replays_identically() -> None:
    steps = [{"round": 2, "standing": [1]}, {"round": 4, "touch": True}]
    assert jsonl(3, script=Script.from_data(steps)) == jsonl(3, script=Script.from_data(steps))


def test_a_different_seed_gives_a_different_log() -> None:
    assert jsonl(7, "standard", 50) != jsonl(8, "standard", 50)
