"""The ``devices.line`` field of bench files: the line speed, validated like every other field, and where it
applies (pty and URL lines always; in-memory lines only when the file sets it)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.bench.config import BENCH_DIR, BenchError, load_bench
from harness.bench.rig import Rig
from harness.wire.transports.line import DEFAULT_LINE, LineSettings

BASE: dict[str, Any] = {"server": {"kind": "in-process"}, "devices": {"transport": "memory"}}
HIL: dict[str, Any] = {"server": {"kind": "command"}, "devices": {"transport": "pty"}}


def _load(tmp_path: Path, doc: dict[str, Any], line: object = None) -> Any:
    doc = copy.deepcopy(doc)
    if line is not None:
        doc["devices"]["line"] = line
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return load_bench(path)


def test_shipped_benches_local_hil_at_115200_and_in_process_unpaced() -> None:
    hil, inproc = load_bench("local-hil"), load_bench("in-process")
    assert hil.line == LineSettings(115200) and hil.paced_line == DEFAULT_LINE
    assert inproc.line is None and inproc.paced_line is None  # virtual time stays unpaced (golden digests)


def test_every_field_is_read(tmp_path: Path) -> None:
    line = {"baud": 9600, "bytesize": 7, "parity": "E", "stopbits": 1.5, "inter_byte_gap_s": 0.0002}
    bench = _load(tmp_path, BASE, line)
    assert bench.line == LineSettings(9600, 7, "E", 1.5, 0.0002)
    assert bench.paced_line == bench.line  # set on an in-memory bench: paced there too
    assert _load(tmp_path, BASE, {}).paced_line == DEFAULT_LINE  # an empty mapping: the defaults, paced


def test_real_time_lines_default_to_115200_8n1(tmp_path: Path) -> None:
    bench = _load(tmp_path, HIL)
    assert bench.line is None and bench.paced_line == LineSettings(115200, 8, "N", 1, 0.0)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"baud": 0}, "bench.yaml: devices.line.baud: must be a whole number of bits per second in [50, 12000000]"),
        ({"baud": "fast"}, "bench.yaml: devices.line.baud: must be a whole number"),
        ({"bytesize": 9}, "bench.yaml: devices.line.bytesize: must be one of 5, 6, 7, 8; got 9"),
        ({"parity": "even"}, "bench.yaml: devices.line.parity: must be one of N (none), E (even), O (odd), M (mark)"),
        ({"stopbits": 3}, "bench.yaml: devices.line.stopbits: must be one of 1, 1.5, 2; got 3"),
        ({"inter_byte_gap_s": -1}, "bench.yaml: devices.line.inter_byte_gap_s: must be a number of seconds in [0, 1]"),
        ({"baudrate": 9600}, "bench.yaml: devices.line.baudrate: unknown field; allowed: baud, bytesize, parity"),
        (9600, "bench.yaml: devices.line: must be a mapping; got 9600"),
    ],
)
def test_a_bad_line_names_the_file_the_field_and_the_allowed_values(tmp_path: Path, line: object, message: str) -> None:
    with pytest.raises(BenchError) as info:
        _load(tmp_path, HIL, line)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("name", ["in-process", "local-hil"])
def test_at_9600_baud_each_traced_frame_is_spread_over_the_line_time(tmp_path: Path, name: str) -> None:
    doc = yaml.safe_load((BENCH_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    bench = _load(tmp_path, doc, {"baud": 9600})
    with Rig.build(bench, {"alice": 10_000}) as rig:
        rid = rig.open_round()
        rig.play_to_end(rid)
        assert not rig.verdict().differences
        records = rig.recorder.records
    tx = [r for r in records if r.dir == "tx"]
    assert len(tx) >= 10 and all(r.first is not None and r.last is not None for r in records)
    for r in tx:
        assert r.first is not None and r.last is not None
        needed = len(r.data) * 10 / 9600  # 8N1: 10 bits a byte
        assert r.last - r.first == pytest.approx(needed, rel=0.10), r.readable()
        assert r.first >= r.t - 1e-9  # a frame never goes on the line before it was written
