"""Run manifests: everything needed to rerun a fault-injection run (``xocdia-hil inject --replay MANIFEST``).

A manifest is JSON: the seed, the bench (name and file), the schedule's canonical YAML and its SHA-256, the git
revision of this checkout, the versions of the packages that decide the run, the history hash and the verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.faults.result import RunResult
from harness.faults.schedule import ScheduleError, schedule_from_text
from harness.faults.schedule_model import Schedule
from harness.feed import loads_shallow

PACKAGES = ("xocdia-hil", "simpy", "numpy", "PyYAML", "pyserial", "hypothesis", "dask", "distributed")
REPO = Path(__file__).resolve().parents[2]


def git_revision() -> str:
    """The checkout's ``git rev-parse HEAD`` (with ``-dirty`` when files differ), or ``unknown``."""
    try:
        rev = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=False,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return rev + ("-dirty" if dirty else "")


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def manifest_data(result: RunResult, schedule: Schedule, bench_ref: str, dialect: str | None = None) -> dict[str, Any]:
    """The manifest of one run. ``bench_ref``: the bench as given on the command line (name or path); ``dialect``:
    the ``--dialect`` it ran with (None: the bench file's)."""
    return {
        "seed": result.seed,
        "bench": bench_ref,
        "dialect": dialect,
        "schedule": {"source": schedule.source, "sha256": schedule.digest(), "yaml": schedule.to_yaml()},
        "git_revision": git_revision(),
        "packages": package_versions(),
        "history_hash": result.history_hash,
        "rounds_played": result.rounds_played,
        "aborted": result.aborted,
        "passed": result.passed,
        "violations": [str(v) for v in result.report.violations],
    }


def check_writable_folder(folder: Path, what: str) -> None:
    """Raise InputError starting with ``what`` (the option and its value) unless manifests can be written under
    ``folder``: it is a writable directory, or its nearest existing ancestor is one. Called before a run, so that
    a bad path costs no work (the manifests are written when the run ends)."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(f"{what}: {probe} is not a directory")
    if not os.access(probe, os.W_OK):
        raise InputError(f"{what}: {probe} is not writable")


def write_manifest(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Replay:
    seed: int
    bench: str
    schedule: Schedule
    history_hash: str
    dialect: str | None = None  # the --dialect of the recorded run (None: the bench file's)


def read_manifest(path: str | Path) -> Replay:
    """Read a manifest for a replay.

    Raises:
        InputError: unreadable file, not JSON, a missing field, or a schedule whose hash does not match.
    """
    try:
        data = loads_shallow(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("schedule"), dict):
            raise ValueError("not a JSON object with a schedule object")
        text = data["schedule"]["yaml"]
        if not isinstance(text, str):
            raise ValueError("schedule.yaml must be a string")
        schedule = schedule_from_text(text, f"{Path(path).name}: schedule")
        seed, bench, digest = int(data["seed"]), str(data["bench"]), str(data["schedule"]["sha256"])
    except OSError as exc:
        raise InputError(f"cannot read manifest {path}: {exc.strerror}") from None
    except RecursionError:
        raise InputError(f"manifest {path}: schedule.yaml nested too deeply") from None
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, ScheduleError):
            raise
        raise InputError(f"manifest {path}: not a run manifest (missing or bad field: {exc})") from None
    if schedule.digest() != digest:
        raise InputError(f"manifest {path}: schedule.sha256 does not match its yaml (edited?)")
    dialect = data.get("dialect")
    return Replay(seed, bench, schedule, str(data.get("history_hash", "")), str(dialect) if dialect else None)
