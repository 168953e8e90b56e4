"""The dialect seam from a lab's side: naming a dialect (errors that name the field and the allowed values), a lab's
dialect found by entry point outside the repository, and the conformance kit telling a broken dialect from a good
one."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.bench.config import BenchError, load_bench
from harness.wire.dialects import (
    ComposedCodec,
    DialectError,
    FrameCodec,
    dialect_class,
    load_dialect,
    plan_lines,
)
from harness.wire.dialects.ascii.dialect import AsciiBodyMap
from harness.wire.dialects.conformance import check_dialogue, check_fuzz, check_round_trip
from harness.wire.dialects.parts import DelimitedFramer, NoIntegrity
from harness.wire.dialects.push import PushDialect
from harness.wire.messages import DEVICES

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "acme_dialect"


def _cli(*args: str, env_path: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = None
    if env_path is not None:
        import os

        env = {**os.environ, "PYTHONPATH": str(env_path)}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO
    )


def test_the_default_dialect_puts_each_device_on_its_own_line() -> None:
    lines = plan_lines(load_dialect("xocdia-ascii"))
    assert [line.name for line in lines] == ["bowl", "shaker", "reader", "lamp", "console"]
    assert [line.roles for line in lines] == [(d,) for d in DEVICES]


def test_an_unknown_dialect_is_one_line_naming_the_field_and_the_known_ones() -> None:
    with pytest.raises(DialectError, match=r"devices.dialect: unknown dialect 'nope'; known: xocdia-ascii"):
        load_dialect("nope")
    proc = _cli("run", "--bench", "in-process", "--dialect", "nope", "--rounds", "1")
    assert proc.returncode == 2
    assert (
        proc.stderr.strip().splitlines() == [proc.stderr.strip().splitlines()[0]]
        and "--dialect: unknown dialect 'nope'" in proc.stderr
    )


def test_a_dialect_class_missing_a_part_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "half_dialect.py").write_text(
        textwrap.dedent(
            """
            from harness.wire.dialects.push import PushDialect

            class Half(PushDialect):
                name = "half"
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DialectError, match=r"half_dialect:Half is missing part\(s\): codec"):
        dialect_class("half_dialect:Half")
    with pytest.raises(DialectError, match=r"cannot import module 'no_such_module'"):
        dialect_class("no_such_module:X")


def test_bench_options_the_dialect_does_not_know_are_refused(tmp_path: Path) -> None:
    bench = tmp_path / "b.yaml"
    bench.write_text("server: {kind: in-process}\ndevices: {transport: memory, options: {baud: 9600}}\n", "utf-8")
    with pytest.raises(BenchError, match=r"b.yaml: devices.options: unknown option 'baud' for dialect 'xocdia-ascii'"):
        load_bench(bench)
    bench.write_text("server: {kind: in-process}\ndevices: {transport: memory, dialect: [x]}\n", "utf-8")
    with pytest.raises(BenchError, match=r"devices.dialect: must be a dialect name"):
        load_bench(bench)


class _EatsLastByte(PushDialect):
    """A broken dialect: its framer loses the last byte of every frame body."""

    name = "broken"

    def codec(self) -> FrameCodec:
        return ComposedCodec(_LossyFramer, NoIntegrity(), AsciiBodyMap())


class _LossyFramer(DelimitedFramer):
    def __init__(self) -> None:
        super().__init__(b"\n")

    def feed(self, data: bytes) -> list[object]:  # type: ignore[override]
        return [item[:-1] if isinstance(item, bytes) and len(item) > 1 else item for item in super().feed(data)]


def test_the_conformance_kit_fails_a_broken_dialect_and_passes_the_shipped_one() -> None:
    broken = _EatsLastByte()
    assert not check_round_trip(broken, count=200).passed
    assert not check_dialogue(broken).passed
    good = load_dialect("xocdia-ascii")
    for result in (check_round_trip(good, count=300), check_fuzz(good, streams=40), check_dialogue(good)):
        assert result.passed, (result.name, result.failures)
        assert result.cases > 0


@pytest.fixture(scope="module")
def acme_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs' worked example installed as a lab would have it: a module plus its distribution's metadata with the
    ``xocdia_hil.dialects`` entry point, on a path outside the repository."""
    site = tmp_path_factory.mktemp("site")
    (site / "acme_dialect.py").write_text((EXAMPLE / "acme_dialect.py").read_text("utf-8"), "utf-8")
    info = site / "acme_xocdia_dialect-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-xocdia-dialect\nVersion: 0.1.0\n", "utf-8")
    (info / "entry_points.txt").write_text("[xocdia_hil.dialects]\nacme = acme_dialect:AcmeDialect\n", "utf-8")
    return site


def test_a_lab_dialect_is_found_by_entry_point_and_passes_the_kit(acme_site: Path) -> None:
    listed = _cli("dialects", "--json", env_path=acme_site)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["acme"]["origin"] == "entry point of acme-xocdia-dialect 0.1.0"
    assert rows["acme"]["dialogue"] == "push"
    check = _cli("dialects", "check", "acme", "--no-certify", "--frames", "300", env_path=acme_site)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip().endswith("conformance: PASS")


def test_a_lab_dialect_plays_rounds_in_process_through_the_bridge(acme_site: Path) -> None:
    run = _cli(
        "run", "--bench", "in-process", "--dialect", "acme", "--rounds", "8", "--players", "4", env_path=acme_site
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "oracle: PASS" in run.stdout
