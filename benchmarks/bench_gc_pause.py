"""What one short ``gc_paused()`` costs with a long run's heap frozen, against the same pause with nothing frozen,
measured in the same run: the target is a ratio of at most 2 (the pause must not cost what the frozen heap holds).

A rig freezes its heap every 1,000 rounds (``Rig.open_round``), and ``rig.truth`` pauses the collector each time it
types the records the table appended, so a pause's cost is paid every round of a long run.

    .venv/bin/python benchmarks/bench_gc_pause.py [--frozen 2000000] [--pauses 200]
"""

from __future__ import annotations

import argparse
import gc
import os
import time

from simulator.gcpause import gc_paused

TARGET = 2.0


def _pauses(n: int) -> tuple[float, float]:
    """CPU and wall seconds of one short pause (50 small objects made inside), over ``n`` pauses."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        with gc_paused():
            made = [(i,) for i in range(50)]
    del made
    return (time.process_time() - cpu) / n, (time.perf_counter() - wall) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--frozen", type=int, default=2_000_000, help="objects frozen, as a long run's heap")
    parser.add_argument("--pauses", type=int, default=200)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    gc.enable()
    bare_cpu, bare_wall = _pauses(args.pauses)
    heap = [[i] for i in range(args.frozen)]
    gc.freeze()
    try:
        cpu, wall = _pauses(args.pauses)
    finally:
        gc.unfreeze()
    ratio = cpu / bare_cpu if bare_cpu else float("inf")
    verdict = "ok" if ratio <= TARGET else "ABOVE TARGET"
    print(f"gc_paused(), {args.pauses} short pauses (load average {load:.2f}, {len(heap):,} objects frozen)")
    print(f"  nothing frozen   {bare_cpu * 1e6:10.1f} us CPU  {bare_wall * 1e6:10.1f} us wall")
    print(f"  heap frozen      {cpu * 1e6:10.1f} us CPU  {wall * 1e6:10.1f} us wall")
    print(f"  frozen / bare    {ratio:10.2f}x (CPU; target <= {TARGET:.1f}: {verdict})")


if __name__ == "__main__":
    main()
