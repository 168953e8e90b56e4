"""Bench files: the shipped ones load; every kind of mistake is an error naming the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.bench.config import BENCH_DIR, BenchError, load_bench


@pytest.mark.parametrize("name", ["in-process", "local-hil", "staging.example"])
def test_shipped_benches_load(name: str) -> None:
    bench = load_bench(BENCH_DIR / f"{name}.yaml")
    assert bench.path.name == f"{name}.yaml"


def test_shipped_bench_values() -> None:
    inproc, hil = load_bench("in-process"), load_bench("local-hil")
    assert (inproc.server.kind, inproc.transport, inproc.realtime) == ("in-process", "memory", False)
    assert (hil.server.kind, hil.transport, hil.realtime, hil.server.command) == (
        "command",
        "pty",
        True,
        ("xocdia-server",),
    )
    assert hil.server.adapter == "harness.bench.adapters.reference_http:HttpAdapter"
    staging = load_bench(BENCH_DIR / "staging.example.yaml")
    assert (staging.faults_allowed, staging.device_urls["console"]) == (False, "/dev/ttyUSB4")


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


BASE: dict[str, Any] = {"server": {"kind": "in-process"}, "devices": {"transport": "memory"}}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"server": {"kind": "cloud"}},
            "bench.yaml: server.kind: must be one of in-process, command, url; got 'cloud'",
        ),
        (
            {"devices": {"transport": "tty"}},
            "bench.yaml: devices.transport: must be one of memory, pty, url; got 'tty'",
        ),
        ({"seeed": 3}, "bench.yaml: seeed: unknown field; allowed: name, server, devices"),
        ({"timing": {"betting_s": -1}}, "bench.yaml: timing.betting_s: must be a number of seconds in [0.001, 3600.0]"),
        ({"faults_allowed": "yes"}, "bench.yaml: faults_allowed: must be true or false; got 'yes'"),
        ({"server": {"kind": "url", "url": "ftp://x"}}, "bench.yaml: server.url: must be an http:// or https:// URL"),
        ({"server": {"kind": "in-process", "adapter": "nodots"}}, "bench.yaml: server.adapter: must be a dotted path"),
        (
            {"devices": {"transport": "pty"}},
            "bench.yaml: devices.transport: must be memory when server.kind is in-process",
        ),
        ({"devices": {"transport": "memory", "urls": {"bell": "x"}}}, "bench.yaml: devices.urls: must be one of bowl"),
        (
            {"server": {"kind": "command"}},
            "bench.yaml: devices.transport: must be one of pty, url when server.kind is command; got 'memory'",
        ),
        (
            {"server": {"kind": "url", "url": "http://127.0.0.1:1"}},
            "bench.yaml: devices.transport: must be one of pty, url when server.kind is url; got 'memory'",
        ),
    ],
)
def test_mistakes_name_the_field(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchError) as err:
        load_bench(_write(tmp_path, {**BASE, **change}))
    assert str(err.value).startswith(message)


def test_a_missing_bench_lists_the_shipped_ones() -> None:
    with pytest.raises(BenchError, match=r"cannot read bench nowhere: .*shipped benches: in-process, local-hil"):
        load_bench("nowhere")


def test_an_empty_bench_file_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    with pytest.raises(BenchError) as info:
        load_bench(path)
    assert str(info.value) == "empty.yaml: the document: must be a mapping; got None"


def test_yaml_that_does_not_parse(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("server: [unclosed\n", encoding="utf-8")
    with pytest.raises(BenchError, match=r"^broken.yaml: not valid YAML") as info:
        load_bench(path)
    # one line; the unclosed "[" runs into the end of the file, the start of line 2
    assert "\n" not in str(info.value) and str(info.value).endswith("at line 2, column 1")
