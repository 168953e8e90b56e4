"""Certification suite wall time on the shipped benches, printed as ratios against the acceptance limits.

Limits: the full suite on the in-process bench in under 30 s, on the local HIL bench (reference server process,
ptys, HTTP/WS) in under 3 minutes, with the default 2 xdist workers. Target: each ratio
<= 1.0. The local HIL run covers the rule-area features (``features/*.feature``); ``features/faults`` has its own
benchmark (bench_campaign).

    .venv/bin/python benchmarks/bench_certify.py [--only in-process|local-hil]

Each run is printed next to pytest's own start-up and collection time for the same suite and workers, measured
in the same run (``--collect-only``): the part of the wall time no scenario can save. Beside each wall time: the CPU
time of the run's processes (``resource.getrusage(RUSAGE_CHILDREN)``: the command, its workers and every process
they waited for) and the load average. A run that outlives three times its limit is stopped, its whole process
group killed (the xdist workers too, so nothing writes into the work folder after), and reported as timed out.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.cli.certify import QUIET_PLUGINS

FEATURES = Path(__file__).resolve().parents[1] / "features"
LIMITS = {"in-process": 30.0, "local-hil": 180.0}


def children_cpu() -> float:
    """CPU seconds (user + system) of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_group(cmd: list[str], timeout: float) -> tuple[float, float, bool]:
    """Run ``cmd`` in a process group of its own; past ``timeout`` seconds, kill the whole group and wait for it.
    Returns (wall seconds, CPU seconds of the group's waited-for processes, whether it timed out)."""
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return time.perf_counter() - start, children_cpu() - cpu, timed_out


def timed_certify(bench: str, work: Path) -> tuple[float, float, int, int, bool]:
    """Run ``xocdia-hil certify`` once; returns (wall seconds, CPU seconds, scenarios passed, failed, timed out;
    a run that timed out or left no clause matrix counts no scenario)."""
    report = work / bench
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", bench, "--report", str(report)]
    if bench == "local-hil":
        features = work / "features"
        features.mkdir(exist_ok=True)
        for path in FEATURES.glob("*.feature"):
            shutil.copy(path, features / path.name)
        cmd += ["--features", str(features)]
    wall, cpu, timed_out = run_group(cmd, LIMITS[bench] * 3)
    matrix_file = report / "clause-matrix.json"
    if timed_out or not matrix_file.exists():
        return wall, cpu, 0, 0, timed_out
    matrix = json.loads(matrix_file.read_text(encoding="utf-8"))
    return wall, cpu, int(matrix["passed"]), int(matrix["failed"]), False


def startup_and_collection(bench: str, workers: int = 2) -> float:
    """Wall seconds for pytest to start its workers and collect the suite with nothing run (``--collect-only``,
    the same suite module, plugin and worker count as ``certify``): the floor under any certify run."""
    suite = Path(__file__).resolve().parents[1] / "harness" / "cert" / "steps" / "suite.py"
    cmd = [sys.executable, "-m", "pytest", str(suite), "-q", *QUIET_PLUGINS, "--bench", bench]
    cmd += ["--collect-only", "-n", str(workers)]
    return run_group(cmd, 300)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(LIMITS), default=None)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-certify-", ignore_cleanup_errors=True) as tmp:
        for bench in [args.only] if args.only else list(LIMITS):
            load = os.getloadavg()[0]
            wall, cpu, passed, failed, timed_out = timed_certify(bench, Path(tmp))
            floor = startup_and_collection(bench)
            ratio = wall / LIMITS[bench]
            ok &= ratio <= 1.0 and failed == 0 and not timed_out
            stopped = f"TIMED OUT after {wall:.0f} s (3x the limit), stopped; " if timed_out else ""
            print(
                f"certify {bench:<10} {wall:6.1f} s wall, {cpu:6.1f} s CPU (load average {load:.2f}) for "
                f"{passed} passed / {failed} failed scenarios; {stopped}"
                f"ratio to the {LIMITS[bench]:.0f} s limit: {ratio:.2f} (target <= 1.0)"
            )
            print(
                f"  pytest start-up + collection alone {floor:5.1f} s ({floor / wall:.2f} of the run); "
                f"the scenarios' own work {wall - floor:5.1f} s"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
