"""Certification suite wall time on the shipped benches, printed as ratios against the acceptance limits.

Limits: the full suite on the in-process bench in under 30 s, on the local HIL bench (reference server process,
ptys, HTTP/WS) in under 3 minutes, with the default 2 xdist workers. Target: each ratio
<= 1.0. The local HIL run covers the rule-area features (``features/*.feature``); ``features/faults`` has its own
benchmark (bench_campaign).

    .venv/bin/python benchmarks/bench_certify.py [--only in-process|local-hil]

Each run is printed next to pytest's own start-up and collection time for the same suite and workers, measured
in the same run (``--collect-only``): the part of the wall time no scenario can save.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.cli.certify import QUIET_PLUGINS

FEATURES = Path(__file__).resolve().parents[1] / "features"
LIMITS = {"in-process": 30.0, "local-hil": 180.0}


def timed_certify(bench: str, work: Path) -> tuple[float, int, int]:
    """Run ``xocdia-hil certify`` once; returns (wall seconds, scenarios passed, failed)."""
    report = work / bench
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", bench, "--report", str(report)]
    if bench == "local-hil":
        features = work / "features"
        features.mkdir(exist_ok=True)
        for path in FEATURES.glob("*.feature"):
            shutil.copy(path, features / path.name)
        cmd += ["--features", str(features)]
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, text=True, timeout=LIMITS[bench] * 3, check=False)
    wall = time.perf_counter() - start
    matrix = json.loads((report / "clause-matrix.json").read_text(encoding="utf-8"))
    return wall, int(matrix["passed"]), int(matrix["failed"])


def startup_and_collection(bench: str, workers: int = 2) -> float:
    """Wall seconds for pytest to start its workers and collect the suite with nothing run (``--collect-only``,
    the same suite module, plugin and worker count as ``certify``): the floor under any certify run."""
    suite = Path(__file__).resolve().parents[1] / "harness" / "cert" / "steps" / "suite.py"
    cmd = [sys.executable, "-m", "pytest", str(suite), "-q", *QUIET_PLUGINS, "--bench", bench]
    cmd += ["--collect-only", "-n", str(workers)]
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(LIMITS), default=None)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-certify-") as tmp:
        for bench in [args.only] if args.only else list(LIMITS):
            wall, passed, failed = timed_certify(bench, Path(tmp))
            floor = startup_and_collection(bench)
            ratio = wall / LIMITS[bench]
            ok &= ratio <= 1.0 and failed == 0
            print(
                f"certify {bench:<10} {wall:6.1f} s for {passed} passed / {failed} failed scenarios; "
                f"ratio to the {LIMITS[bench]:.0f} s limit: {ratio:.2f} (target <= 1.0)"
            )
            print(
                f"  pytest start-up + collection alone {floor:5.1f} s ({floor / wall:.2f} of the run); "
                f"the scenarios' own work {wall - floor:5.1f} s"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
