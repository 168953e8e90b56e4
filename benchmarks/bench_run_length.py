"""Per-round cost against run length: CPU time (``time.process_time``) of one round of the rig, and of judging per
round judged, at 100, 1,000 and 10,000 rounds of one run (more with ``--sizes``), and the peak resident memory.

One rig plays the longest run as ``xocdia-hil run --bench in-process --players 10`` does (a random crowd of 10 seats,
5 wallets a seat, the seats' later players betting from them). The rig's per-round figure at N rounds is the CPU
time of the window of rounds just before round N (``--window`` rounds, 100 by default) over the window: what a round
costs once the run is that long, which is flat when nothing the rig does grows with the rounds played. Judging
(``--judge stream``, the default): the rig feeds the oracle round by round (``Rig.judge_ended``, timed apart from
the rounds; each ended round's bets read once as it is fed, the in-process adapter being ``RoundRecords``;
``--every N``: feeds at least N rounds apart), and judging's figure at N is the CPU of all of it so far over the
rounds judged, the run's verdict included at the last size; ``--judge whole``: at each size the observation is
read and judged whole (not timed as rounds), over N. The limit is the first size (the first with rounds judged,
for judging), measured in the same run: the targets are the last size's per-round figures within 10 % of the
first's (``last/first <= 1.10``). Wall times and the load average are printed beside the CPU times.

Every wallet's session (its event stream, which the server feeds each round's public events) is opened before the
first round, so that every round serves the same 50 streams: left to the crowd (``--ramp``, as ``run`` does), a
wallet's stream opens at its first bet and stays open, the streams grow from about 20 at round 50 to 50 by round
450, and a round's cost grows with them over the first sizes: a ramp in the work, not a cost growing with the run.

    .venv/bin/python benchmarks/bench_run_length.py [--sizes 100,1000,10000] [--window 100] [--ledger memory]
                                                    [--judge stream|whole] [--every N] [--ramp] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import resource
import time

from harness.bench.config import Bench, load_bench
from harness.bench.rig import Rig
from harness.cli.run import VISITS, WALLET
from harness.judge.oracle import judge

FLAT_TARGET = 1.10  # the last size's per-round CPU over the first's
SEATS = 10


@dataclasses.dataclass(frozen=True)
class Point:
    """The figures at one run length."""

    rounds: int
    rig_cpu_us: float  # CPU a round over the window before ``rounds`` (judging left out)
    rig_wall_us: float
    judge_cpu_us: float  # judging's CPU a round: of the rounds judged so far (stream), of the verdict (whole)
    judge_wall_us: float
    observe_cpu_s: float  # reading the observation from the server (whole), the bet records (stream: in judging)
    outcome: str
    bets: int
    rounds_judged: int
    peak_rss_mb: float  # the process's peak resident memory so far (``ru_maxrss``)


def measure(
    bench: Bench, sizes: list[int], window: int, how: str = "stream", every: int | None = None, ramp: bool = False
) -> list[Point]:
    """Play ``max(sizes)`` rounds on one rig; at each size, the window's per-round CPU and judging's.

    ``how`` "stream": the rig judges round by round (``Rig.stream_judging``,
    ``judge_ended`` after each round, feeding at least ``every`` rounds apart (None: the rig's default), timed
    apart from the rounds), and judging's figure at N is the CPU of every
    ``judge_ended`` so far (bet records read, rounds fed) over the rounds fed; at the last size the run's verdict
    (every round left, the balances) is added. "whole": the observation is read and judged whole at each size.
    Every wallet's session (its event stream) is opened before the first round, unless ``ramp``: then each opens
    when the crowd first bets from it, as in ``run``."""
    players = {f"p{s:02d}.{v}": WALLET for s in range(1, SEATS + 1) for v in range(1, VISITS + 1)}
    points: list[Point] = []
    with Rig.build(bench, players, crowd=SEATS, wallets_per_seat=VISITS) as rig:
        if how == "stream":
            rig.stream_judging(every=every)
        for player in () if ramp else players:
            rig.adapter.connect(player)
        gc.collect()
        played = fed = 0
        judging = [0.0, 0.0]  # CPU, wall of judging so far

        def play() -> None:
            nonlocal fed
            rig.play_to_end(rig.open_round())
            wall, cpu = time.perf_counter(), time.process_time()
            fed += rig.judge_ended()
            judging[0] += time.process_time() - cpu
            judging[1] += time.perf_counter() - wall

        for size in sorted(sizes):
            start = max(played, size - window)
            while played < start:
                play()
                played += 1
            wall, cpu = time.perf_counter(), time.process_time()
            before = list(judging)
            while played < size:
                play()
                played += 1
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            cpu -= judging[0] - before[0]
            wall -= judging[1] - before[1]
            n = size - start
            observe = 0.0
            if how == "stream":
                if size == max(sizes):
                    jwall, jcpu = time.perf_counter(), time.process_time()
                    verdict = rig.verdict()
                    judging[0] += time.process_time() - jcpu
                    judging[1] += time.perf_counter() - jwall
                    fed = verdict.rounds_checked
                    outcome, bets = str(verdict.outcome), verdict.bets_checked
                else:
                    outcome, bets = "(not finished)", 0
                jcpu, jwall, judged = judging[0], judging[1], fed
            else:
                observe = time.process_time()
                obs = rig.observation()
                observe = time.process_time() - observe
                jwall, jcpu = time.perf_counter(), time.process_time()
                verdict = judge(obs)
                jcpu, jwall = time.process_time() - jcpu, time.perf_counter() - jwall
                outcome, bets, judged = str(verdict.outcome), verdict.bets_checked, size
            per = (jcpu / judged * 1e6, jwall / judged * 1e6) if judged else (0.0, 0.0)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            points.append(Point(size, cpu / n * 1e6, wall / n * 1e6, *per, observe, outcome, bets, judged, rss))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="run lengths, comma-separated")
    parser.add_argument("--window", type=int, default=100, help="rounds timed before each size")
    parser.add_argument("--ledger", choices=("sqlite", "memory"), default="sqlite", help="the in-process ledger")
    parser.add_argument("--every", type=int, default=None, help="stream: rounds between feeds (default: the rig's)")
    parser.add_argument(
        "--judge", choices=("stream", "whole"), default="stream", help="judge round by round or the whole run"
    )
    parser.add_argument(
        "--ramp", action="store_true", help="open each wallet's stream at its first bet (as run does), not all first"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    if not sizes or sizes[0] < 1 or args.window < 1:
        parser.error("--sizes and --window must be >= 1")
    bench = load_bench("in-process")
    bench = dataclasses.replace(
        bench, server=dataclasses.replace(bench.server, options={**bench.server.options, "ledger": args.ledger})
    )
    load = os.getloadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    points = measure(bench, sizes, args.window, args.judge, args.every, args.ramp)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    first, last = points[0], points[-1]
    rig_ratio = last.rig_cpu_us / first.rig_cpu_us
    judged = [p for p in points if p.rounds_judged]
    judge_ratio = judged[-1].judge_cpu_us / judged[0].judge_cpu_us if len(judged) > 1 else float("nan")
    if args.json:
        figures = {
            "points": [dataclasses.asdict(p) for p in points],
            "rig_last_over_first": rig_ratio,
            "judge_last_over_first": judge_ratio,
            "load": load[0],
        }
        print(json.dumps(figures))
        return
    print(
        f"in-process bench, {SEATS} seats, ledger {args.ledger}, judged {args.judge}, window {args.window} rounds "
        f"(load average {load[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; "
        f"{cpu:.1f} s CPU, {wall:.1f} s wall in all)"
    )
    print(
        "  rounds   rig CPU/round  rig wall/round  judge CPU/round  judge wall/round  judged  observe CPU  peak RSS"
        "  verdict"
    )
    for p in points:
        print(
            f"  {p.rounds:>6,}  {p.rig_cpu_us:10,.0f} us  {p.rig_wall_us:11,.0f} us  {p.judge_cpu_us:12,.1f} us"
            f"  {p.judge_wall_us:13,.1f} us  {p.rounds_judged:>6,}  {p.observe_cpu_s:8.2f} s  {p.peak_rss_mb:6,.0f} MB"
            f"  {p.outcome}, {p.bets:,} bets"
        )
    base = judged[0].rounds if judged else first.rounds
    if len(points) > 1:  # the memory a round adds once the run is long: between the last two sizes
        grown = (last.peak_rss_mb - points[-2].peak_rss_mb) * 1024 / (last.rounds - points[-2].rounds)
        print(f"  peak RSS from {points[-2].rounds:,} to {last.rounds:,} rounds: {grown:,.1f} KB a round")
    for name, ratio, at in (("rig", rig_ratio, first.rounds), ("judging", judge_ratio, base)):
        verdict = "ok" if ratio <= FLAT_TARGET else "ABOVE TARGET"
        print(
            f"  {name} per round at {last.rounds:,} / at {at:,}: {ratio:.2f}x "
            f"(CPU; target <= {FLAT_TARGET:.2f}: {verdict})"
        )


if __name__ == "__main__":
    main()
