"""The decoder fuzz of ``benchmarks/fuzz_dialects.py`` at a small count: every shipped dialect's decoders (the
harness's and the reference server's own, where it has one) fed split, paired, bit-flipped, cut and garbage-laden
frames never raise and never yield a message that was not sent. The script runs the same cases 10^6 times per
dialect (docs/performance.md, "Device dialects")."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz_dialects.py"
SHIPPED = ("xocdia-ascii", "xocdia-bus", "xocdia-jsonl")


@functools.cache
def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_dialects", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_dialects"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SHIPPED)
def test_each_shipped_decoder_survives_the_fuzz(name: str) -> None:
    report = _script().fuzz(name, 6_000, seed=1)
    assert report.cases == 6_000
    assert (report.exceptions, report.false_messages, report.sides_disagree) == (0, 0, 0), report.first_problem
    assert report.ok


def test_the_script_exits_0_and_prints_a_line_per_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    assert _script().main(["--frames", "600", *(f"--dialect={n}" for n in SHIPPED)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 + len(SHIPPED) and all(line.endswith("PASS") for line in lines[1:])
