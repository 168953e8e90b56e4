"""The forge asks each line what it can carry (harness.bench.forge.expressible, inexpressible): on a dialect whose
lines speak different formats the answer is the line's, not the dialect's one codec's; and the DEV-1 step that
forges a reader's result on another device's line (harness.cert.steps.devices.forged_result) ends the scenario not
applicable, naming the dialect and what it cannot carry, where that line cannot carry it (real in-process benches:
the reference server, the emulated table, in-memory lines)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.bench import forge
from harness.bench.config import Bench, load_bench
from harness.bench.rig import Rig
from harness.cert.steps.context import NOT_APPLICABLE, CertContext
from harness.cert.steps.devices import forged_result
from harness.cert.steps.rounds import played_to_end, round_opens
from harness.cert.steps.table import round_lands
from harness.files import FIXTURES
from harness.lab import EncodeError, ForgeEncoding
from harness.wire.messages import Frame, Problem, ProblemReason, Result, Source

ROOT = Path(__file__).resolve().parents[2]
OWN_LINE = "tests.bench.own_line_dialect:OwnLineDialect"
FOREIGN = ROOT / "examples" / "foreign"


def _bench(tmp_path: Path, dialect: str) -> Bench:
    data = yaml.safe_load((FIXTURES / "benches" / "in-process.yaml").read_text("utf-8"))
    data["devices"] = {"transport": "memory", "dialect": dialect}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    return load_bench(path)


READ = Frame(1, Source.READER, Result("RRRR", False), round="1", at=5)


def test_each_line_answers_for_its_own_format_not_the_dialects_one_codec(tmp_path: Path) -> None:
    with Rig.build(_bench(tmp_path, OWN_LINE), {}) as rig:
        console, reader = forge.line_of(rig, "console"), forge.line_of(rig, "reader")
        forge.spec_of(rig, console).dialect.codec().encode(READ)  # the dialect's one codec takes the read
        assert isinstance(rig.emulated.hub.ports[console].end, ForgeEncoding)
        assert not forge.expressible(rig, console, READ)
        assert forge.inexpressible(rig, console, READ) == (
            "the console line speaks test-own-line, which cannot carry a READER Result on it: "
            "src: the console line's format carries no READER report"
        )
        assert forge.expressible(rig, reader, READ)
        assert forge.inexpressible(rig, reader, READ) == ""
        assert forge.expressible(rig, console, Frame(0, Source.CONSOLE, Problem(ProblemReason.EQUIPMENT), round="1"))
        with pytest.raises(EncodeError):  # what expressible said: the end refuses to forge it
            forge.write_frames(rig, console, [READ])


def test_the_polled_lotus_controller_forges_a_read_in_the_cameras_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # lotus-bin's codec is the binary controller's, which has no reader read; its controller end forges a read as
    # the camera's JSON line (examples/foreign/lotus_bin_dialect.py), and the camera line is the companion's
    monkeypatch.syspath_prepend(str(FOREIGN))
    monkeypatch.delitem(sys.modules, "lotus_dialect", raising=False)
    monkeypatch.delitem(sys.modules, "lotus_bin_dialect", raising=False)
    untagged = Frame(1, Source.READER, Result("RRRR", False))
    with Rig.build(_bench(tmp_path, "lotus_bin_dialect:LotusBinDialect"), {}) as rig:
        controller, camera = forge.line_of(rig, "bowl"), forge.line_of(rig, "reader")
        assert (controller, camera) == ("controller", "camera")
        with pytest.raises(EncodeError):
            forge.spec_of(rig, controller).dialect.codec().encode(untagged)  # one codec: "no"
        assert forge.expressible(rig, controller, untagged)
        assert forge.expressible(rig, camera, untagged)
        bowl_off = Frame(1, Source.BOWL, Problem(ProblemReason.EQUIPMENT))  # the controller carries no BOWL PROBLEM
        assert "the controller line speaks lotus-bin, which cannot carry a BOWL Problem on it" in (
            forge.inexpressible(rig, controller, bowl_off)
        )


@pytest.fixture
def closing() -> Iterator[list[CertContext]]:
    """Scenario contexts whose rigs are closed after the test."""
    made: list[CertContext] = []
    yield made
    for cert in made:
        if cert.rig is not None:
            cert.rig.close()


def test_a_result_the_line_cannot_carry_makes_dev1_not_applicable_naming_the_dialect(
    tmp_path: Path, closing: list[CertContext]
) -> None:
    cert = CertContext(bench=_bench(tmp_path, OWN_LINE))
    closing.append(cert)
    round_lands(cert, 1, "WWRR")
    round_opens(cert, 1)
    with pytest.raises(pytest.skip.Exception) as skipped:
        forged_result(cert, "RRRR", "console")
    assert str(skipped.value.msg) == (
        NOT_APPLICABLE + "the console line speaks test-own-line, which cannot carry a READER Result on it: "
        "src: the console line's format carries no READER report"
    )
    played_to_end(cert)  # nothing was armed: the round ends as the table played it
    assert not [a for a in cert.running().actions if a.what == "forged frames"]


def test_a_result_the_line_can_carry_is_forged_at_the_close_and_the_lift(
    tmp_path: Path, closing: list[CertContext]
) -> None:
    cert = CertContext(bench=_bench(tmp_path, "xocdia-ascii"))
    closing.append(cert)
    round_lands(cert, 1, "WWRR")
    round_opens(cert, 1)
    forged_result(cert, "RRRR", "console")
    played_to_end(cert)
    forged = [a for a in cert.running().actions if a.what == "forged frames"]
    assert [a.detail for a in forged] == ["1 on the console line", "1 on the console line"]
