"""The floor under bench_simulator's ratio: the table's round skeleton with no model logic at all.

    .venv/bin/python benchmarks/bench_simulator_floor.py [--rounds N] [--bets K] [--repeat R]

The skeleton has what the real model cannot do without: the same three processes (lamp controller, dealer, crowd),
the same lamp events, one timeout per dealer step and per bet (a callback, as in the model), and the same
ground-truth records (nine per round plus one per bet, as ``simulator.eventlog`` keeps them). It has none of the
model's logic: no random draws, no incidents, no round books, no seats joining or leaving, no links. Its cost
against a bare SimPy loop with the same number of events is the lowest ratio any model of this shape can reach in
this interpreter; whatever the real model costs above it is its logic. Timings are measured in the same run, best of R.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Generator
from typing import Any

import simpy
from bench_simulator import bare_run  # the same limit as bench_simulator (this folder is on sys.path)

from simulator.bets import BetType
from simulator.eventlog import Record
from simulator.events import (
    BetSent,
    BettingClosed,
    BowlLifted,
    BowlPlaced,
    Revealed,
    RoundEnded,
    RoundOpened,
    RoundStatus,
    ShakeEnded,
    ShakeStarted,
    TokensPlaced,
)
from simulator.lamp import LampSignal, LampState

Proc = Generator[Any, Any, Any]


class _Skeleton:
    def __init__(self, rounds: int, bets: int) -> None:
        self.env = env = simpy.Environment()
        self.log: list[Record] = []
        self.opened: simpy.Event = env.event()
        self.changed: simpy.Event = env.event()
        self.cleared: simpy.Event = env.event()
        self.rounds, self.bets = rounds, bets
        # Waiters first, as in the model, so that the first opening wakes them.
        env.process(self.dealer())
        env.process(self.crowd())
        env.process(self.controller())

    def lamp(self, state: LampState, round_no: int, opened: bool = False) -> None:
        signal = LampSignal(state, round_no, None)
        fired, self.changed = self.changed, self.env.event()
        fired.succeed(signal)
        if opened:
            fired, self.opened = self.opened, self.env.event()
            fired.succeed(signal)

    def controller(self) -> Proc:
        env, emit = self.env, self.log.append
        for r in range(1, self.rounds + 1):
            self.cleared = env.event()
            self.lamp(LampState.BETTING_OPEN, r, opened=True)
            emit((RoundOpened, env.now, r, env.now + 15.0))
            yield env.timeout(15.0)
            self.lamp(LampState.BETTING_CLOSED, r)
            emit((BettingClosed, env.now, r))
            yield self.cleared
            self.lamp(LampState.OFF, r)
            yield env.timeout(4.0)

    def dealer(self) -> Proc:
        env, emit = self.env, self.log.append
        while True:
            signal = yield self.opened
            r = signal.round
            emit((TokensPlaced, env.now, r))
            yield env.timeout(2.0)
            emit((BowlPlaced, env.now, r))
            emit((ShakeStarted, env.now, r, 1))
            yield env.timeout(4.0)
            emit((ShakeEnded, env.now, r, 1))
            yield self.changed  # betting closed
            yield env.timeout(0.8)
            yield env.timeout(1.0)
            emit((BowlLifted, env.now, r, False, False, None))
            emit((Revealed, env.now, r, "RRWW", False))
            emit((RoundEnded, env.now, r, RoundStatus.SETTLED, None, "RRWW", 2, 0))
            self.cleared.succeed()

    def crowd(self) -> Proc:
        env = self.env
        while True:
            signal = yield self.opened
            now = env.now
            for k in range(self.bets):
                delay = 1.0 + k
                env.timeout(delay, (now + delay, signal.round, k)).callbacks.append(self.deliver)

    def deliver(self, due: simpy.Event) -> None:
        at, round_no, k = due.value  # type: ignore[misc]
        player = "p01.1"
        self.log.append((BetSent, at, round_no, player, f"{player}-{k}", BetType.BIG, 100, at + 0.06))

    def run(self) -> tuple[float, int]:
        """Seconds and SimPy events for the whole run (GC paused, as the model runs)."""
        steps = 0
        step = self.env.step
        gc.disable()
        start = time.perf_counter()
        try:
            while True:
                step()
                steps += 1
        except simpy.core.EmptySchedule:
            pass
        elapsed = time.perf_counter() - start
        gc.enable()
        return elapsed, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    parser.add_argument("--bets", type=int, default=10, help="bets per round (the standard profile averages 10.3)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for bets in sorted({0, args.bets}):
        best = best_bare = float("inf")
        steps = 0
        for _ in range(args.repeat):
            elapsed, steps = _Skeleton(args.rounds, bets).run()
            best = min(best, elapsed)
            best_bare = min(best_bare, bare_run(steps))
        per = 1e6 / args.rounds
        print(
            f"skeleton, {bets:2d} bets/round: {steps / args.rounds:5.1f} simpy events/round, "
            f"{best * per:5.1f} us/round vs bare loop {best_bare * per:5.1f} us: {best / best_bare:.2f}x"
        )


if __name__ == "__main__":
    main()
