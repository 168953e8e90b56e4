"""The judge's cost per round stays flat as a run grows: judging is linear in rounds.

A synthetic run of N rounds (each: the table's verdict, the server's opening, close and end, three bets with their
replies and bet-record rows, and on every tenth round a pause and resume, a re-shake, a retried bet and a bench
alteration of its reports) is judged whole, for N and for ``--factor`` x N. Printed: CPU and wall time per round
at both sizes and their ratio against the limit measured in the same run, the per-round cost at N (a linear judge
gives a ratio near 1; a quadratic one, about ``factor``). Target: ratio <= 1.5.

    .venv/bin/python benchmarks/bench_judge.py [--rounds N] [--factor F] [--repeat K]
"""

from __future__ import annotations

import argparse
import gc
import os
import time

from harness.judge import Observation, SentBet, judge
from harness.judge.timeline import Alteration, Timing
from harness.records import BetRecordRow, BetReply, RoundEvent
from simulator.events import Event, Reshake, ReshakeReason, RoundEnded, RoundStatus

FACES = ("WWWW", "WWWR", "WWRR", "WRRR", "RRRR")
RETURNS = {"big": (0, 0, 1000, 1960, 1960), "small": (1960, 1960, 1000, 0, 0), "odd": (0, 1960, 0, 1960, 0)}


def synthetic(rounds: int) -> Observation:
    """A run of ``rounds`` rounds that a correct server played (the judge finds no difference in it)."""
    truth: list[Event] = []
    events: list[RoundEvent] = []
    sent: list[SentBet] = []
    rows: list[BetRecordRow] = []
    alterations: list[Alteration] = []
    balance = 10_000_000
    for n in range(1, rounds + 1):
        rid, t0 = str(n), n * 10.0
        faces = FACES[n % 5]
        reds = faces.count("R")
        special = n % 10 == 0
        events.append(RoundEvent(rid, "opened", t0, raw={"data": {"closes_at": t0 + 1.0}}))
        close = t0 + 1.0
        if special:
            events += [RoundEvent(rid, "paused", t0 + 0.2), RoundEvent(rid, "resumed", t0 + 0.5)]
            close += 0.3
            truth.append(Reshake(t0 + 0.6, n, ReshakeReason.DROP, 1))
            events.append(RoundEvent(rid, "reshake", t0 + 0.6))
            alterations.append(Alteration(rid, t0 + 0.1, "queued", "READER", "Result", rid, faces))
        events.append(RoundEvent(rid, "closed", close))
        for k, bet in enumerate(("big", "small", "odd")):
            bet_id, client = f"{n}-{k}", f"alice-{n}-{k}"
            after = balance - 1000 + RETURNS[bet][reds]
            reply = BetReply("alice", client, bet, 1000, True, True, bet_id, rid, "", balance, balance - 1000)
            sent.append(SentBet(reply, False, t0 + 0.1 * (k + 1), rid))
            if special and k == 0:
                sent.append(SentBet(reply, False, t0 + 0.15, rid))  # a retry: the original confirmation
            result = "win" if RETURNS[bet][reds] > 1000 else ("push" if RETURNS[bet][reds] == 1000 else "lose")
            row = BetRecordRow(bet_id, rid, "alice", bet, 1000, result, RETURNS[bet][reds], "settled", faces,
                               balance, after, client)  # fmt: skip
            rows.append(row)
            balance = after
        truth.append(RoundEnded(t0 + 3.0, n, RoundStatus.SETTLED, None, faces, reds, 1 if special else 0))
        events.append(RoundEvent(rid, "settled", t0 + 3.0, faces=faces))
    return Observation(
        truth=tuple(truth),
        rounds={str(n): n for n in range(1, rounds + 1)},
        server_events=tuple(events),
        records={"alice": rows},
        balances={"alice": balance},
        opening={"alice": 10_000_000},
        sent=tuple(sent),
        server_clock_is_sim=True,
        timing=Timing(1.0, 2.0, 1.0, 3),
        alterations=tuple(alterations),
        supervisor_paused=tuple(str(n) for n in range(10, rounds + 1, 10)),
    )


def per_round(rounds: int, repeat: int) -> tuple[float, float]:
    """Best of ``repeat``: (CPU seconds, wall seconds) of judging a run of ``rounds`` rounds, per round."""
    obs = synthetic(rounds)
    gc.collect()
    gc.freeze()  # the run's own records are old objects: the collector's passes over them are not the judge's cost
    cpu = wall = float("inf")
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        verdict = judge(obs)
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
        if not verdict.passed:
            raise SystemExit("the synthetic run must pass:\n" + verdict.summary()[:2000])
    gc.unfreeze()
    return cpu / rounds, wall / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2_000, help="rounds of the smaller run")
    parser.add_argument("--factor", type=int, default=8, help="the larger run is this many times longer")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (best kept: the machine is shared)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    small_cpu, small_wall = per_round(args.rounds, args.repeat)
    big_cpu, big_wall = per_round(args.rounds * args.factor, args.repeat)
    ratio = big_cpu / small_cpu
    print(f"load {load:.2f}")
    print(f"judge, {args.rounds} rounds: {small_cpu * 1e6:.1f} us CPU/round ({small_wall * 1e6:.1f} us wall)")
    big = args.rounds * args.factor
    print(f"judge, {big} rounds: {big_cpu * 1e6:.1f} us CPU/round ({big_wall * 1e6:.1f} us wall)")
    print(f"per-round cost at {args.factor}x the rounds / at 1x: {ratio:.2f} (limit 1.5; quadratic: ~{args.factor})")
    print("PASS" if ratio <= 1.5 else "FAIL")


if __name__ == "__main__":
    main()
