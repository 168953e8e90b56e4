"""Helpers shared by the statistics tests: CSV rows built from token patterns."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

WriteRows = Callable[[str, Sequence[Sequence[object]]], Path]


def csv_writer(directory: Path, header: Sequence[str]) -> WriteRows:
    """A function that writes ``header`` + rows to ``directory/name`` and returns the path."""

    def write(name: str, rows: Sequence[Sequence[object]]) -> Path:
        path = directory / name
        with path.open("w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(header)
            out.writerows(rows)
        return path

    return write


def faces_of(pattern: int) -> str:
    """The faces string of a token pattern (bit j = token j red), token 0 first."""
    return "".join("R" if pattern >> j & 1 else "W" for j in range(4))


def outcome_rows(patterns: Sequence[int], start: int = 1) -> list[list[object]]:
    """Settled OUTCOMES.csv rows for the given patterns, ended_at one second apart."""
    return [
        [f"r{start + i}", "settled", faces_of(p), p.bit_count(), 0, float(start + i)] for i, p in enumerate(patterns)
    ]


def audit_follow(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``xocdia-hil audit --follow ARGS`` in a subprocess, its output captured; never raises on its exit status."""
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "audit", "--follow", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
