"""Simulator throughput: rounds/s of the table model against a bare SimPy loop with as many events per round.

    .venv/bin/python benchmarks/bench_simulator.py [--rounds N] [--profile NAME] [--players N] [--repeat K]

The limit is measured in the same run: a single SimPy process yielding one ``env.timeout`` per event, for as many
events as the model scheduled per round. The model's cost is printed as a ratio to that loop (target <= 3x) and its
absolute rate against the target of 20,000 rounds/s (standard profile, 10 players, one core). Best of K repeats.
"""

from __future__ import annotations

import argparse
import time

import simpy

from harness.files import load_profile
from simulator import Table


def model_run(profile_name: str, rounds: int, players: int, seed: int) -> tuple[float, int, int]:
    """Seconds to simulate ``rounds`` rounds, SimPy events processed (estimated from a counted run of up to 2,000
    rounds), ground-truth events recorded."""
    table = Table(load_profile(profile_name), seed=seed, players=players)
    steps = 0
    env = table.env
    original_step = env.step

    def counting_step() -> None:
        nonlocal steps
        steps += 1
        original_step()

    env.step = counting_step  # type: ignore[method-assign]
    # Count once on a separate run so the timed run carries no counting overhead.
    table.run(min(rounds, 2000))
    per_round = steps / table.rounds_ended
    timed = Table(load_profile(profile_name), seed=seed, players=players)
    start = time.perf_counter()
    timed.run(rounds)
    elapsed = time.perf_counter() - start
    return elapsed, round(per_round * rounds), len(timed.log)


def bare_run(events: int) -> float:
    """Seconds for a bare SimPy loop processing ``events`` timeouts."""
    env = simpy.Environment()

    def loop() -> simpy.events.ProcessGenerator:
        timeout = env.timeout
        for _ in range(events):
            yield timeout(1.0)

    env.process(loop())
    start = time.perf_counter()
    env.run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    parser.add_argument("--profile", default="standard")
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    best_model = best_bare = best_empty = best_empty_bare = float("inf")
    events = recorded = empty_events = 0
    for _ in range(args.repeat):
        elapsed, events, recorded = model_run(args.profile, args.rounds, args.players, args.seed)
        best_model = min(best_model, elapsed)
        best_bare = min(best_bare, bare_run(events))
        if args.players:  # the same table without players, to split the cost into rounds and bets
            elapsed, empty_events, _ = model_run(args.profile, args.rounds, 0, args.seed)
            best_empty = min(best_empty, elapsed)
            best_empty_bare = min(best_empty_bare, bare_run(empty_events))
    rate = args.rounds / best_model
    ratio = best_model / best_bare
    print(f"profile={args.profile} players={args.players} rounds={args.rounds} (best of {args.repeat})")
    print(f"  simpy events/round      {events / args.rounds:8.1f}")
    print(f"  ground-truth events     {recorded / args.rounds:8.1f} per round")
    print(f"  model                   {rate:10,.0f} rounds/s   ({best_model:.3f} s)")
    print(f"  bare simpy loop         {args.rounds / best_bare:10,.0f} rounds/s   ({best_bare:.3f} s, same events)")
    print(f"  model cost / bare loop  {ratio:8.2f}x   (target <= 3.00x)")
    print(f"  absolute vs target      {rate / 20000:8.2f}x of 20,000 rounds/s")
    # Diagnostics: the model's own work per round, beyond what the same SimPy events cost in the bare loop.
    model_us, bare_us = best_model / args.rounds * 1e6, best_bare / args.rounds * 1e6
    logic = model_us - bare_us
    print(f"  per round               {model_us:8.1f} us model, {bare_us:.1f} us bare loop, {logic:.1f} us model logic")
    if args.players:
        # What the players add: their SimPy events (one per bet or departure, and link changes) and the work
        # around each, against the same number of bare-loop events.
        empty_us, empty_bare_us = best_empty / args.rounds * 1e6, best_empty_bare / args.rounds * 1e6
        extra = (events - empty_events) / args.rounds
        print(
            f"  table alone (0 players) {empty_us:8.1f} us/round, {empty_events / args.rounds:.1f} simpy events: "
            f"{empty_us / empty_bare_us:.2f}x its bare loop"
        )
        print(
            f"  players' share          {model_us - empty_us:8.1f} us/round, {extra:.1f} simpy events: "
            f"{(model_us - empty_us) / (bare_us - empty_bare_us):.2f}x their bare loop"
        )


if __name__ == "__main__":
    main()
