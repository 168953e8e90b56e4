"""The pack writer on a real bench file: the performer and approver from the bench file's ``evidence`` section,
a system that does not identify itself recorded as such, a change of identification during the run flagged in
the manifest, and a pack folder that is not empty refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.bench.config import Bench, load_bench
from harness.evidence.identity import NOT_IDENTIFIED, Component, Identification
from harness.evidence.manifest import PackError
from harness.evidence.pack import PackOptions, PackWriter, RunFacts
from harness.evidence.people import PeopleError
from harness.evidence.verify import summary, verify_pack
from harness.files import FIXTURES

SHIPPED = FIXTURES / "benches" / "in-process.yaml"


def _bench_file(tmp_path: Path, section: str) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(SHIPPED.read_text(encoding="utf-8") + section, encoding="utf-8")
    return path


def _sequence(*idents: Identification) -> Callable[[Bench], Identification]:
    """The identifications given, one a call (what the system reported at the start, then at the end)."""
    it: Iterator[Identification] = iter(idents)
    return lambda _bench: next(it)


def _component(digit: str) -> Component:
    return Component("gameserver/engine.py", "sha256:" + digit * 64, "system")


def test_a_system_without_identify_and_the_bench_files_people_go_into_the_pack(
    tmp_path: Path, key_pair: tuple[Path, Path]
) -> None:
    bench_path = _bench_file(tmp_path, '\nevidence:\n  performer: "A. Tester"\n  approver: "B. Head"\n')
    bench: Bench = load_bench(bench_path)
    none = Identification(False, note=f"{NOT_IDENTIFIED} (adapter VendorX has no identify())")
    options = PackOptions(tmp_path / "pack", key_pair[0], approver="C. Override")
    writer = PackWriter(options, bench_path, identify=_sequence(none, none))
    writer.start(RunFacts(bench, [], "clause:EQ-1", 0))
    result = writer.finish(tmp_path / "no-report", None, 1)
    assert (result.verdict, result.identified, result.changes) == ("FAIL", False, ())
    manifest = json.loads((tmp_path / "pack" / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["performer"], manifest["approver"]) == ("A. Tester", "C. Override")
    assert manifest["identification"]["identified"] is False
    assert manifest["bench"]["file"] == "bench/bench.yaml"
    assert (tmp_path / "pack" / "bench" / "bench.yaml").read_bytes() == bench_path.read_bytes()
    checked = verify_pack(tmp_path / "pack", key_pair[1])
    assert checked.ok, checked.problems
    assert "system under test: not identified by the system (adapter VendorX has no identify())" in "\n".join(
        summary(checked)
    )


def test_a_change_of_identification_during_the_run_is_flagged(tmp_path: Path) -> None:
    bench = load_bench(SHIPPED)
    before = Identification(True, "xocdia-server", "0.1.0", "sha256:" + "a" * 64, (_component("1"),))
    after = Identification(True, "xocdia-server", "0.1.0", "sha256:" + "a" * 64, (_component("2"),))
    writer = PackWriter(PackOptions(tmp_path / "pack"), identify=_sequence(before, after))
    writer.start(RunFacts(bench, []))
    result = writer.finish(tmp_path / "no-report", None, 0)
    assert len(result.changes) == 1 and result.changes[0].startswith("changed gameserver/engine.py (system)")
    manifest = json.loads((tmp_path / "pack" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["identification"]["changed"] is True
    assert manifest["identification"]["changes"] == list(result.changes)
    assert not (tmp_path / "pack" / "manifest.sig").exists()  # unsigned without a key
    assert verify_pack(tmp_path / "pack").ok
    text = "\n".join(summary(verify_pack(tmp_path / "pack")))
    assert "identification during the run: CHANGED (1 differences)" in text and "signature: unsigned" in text


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ("\nevidence:\n  reviewer: X\n", "evidence.reviewer: unknown field (allowed: performer, approver)"),
        ('\nevidence:\n  performer: ""\n', "evidence.performer: must be one line of text"),
        ("\nevidence: [a]\n", "evidence: must be a mapping"),
    ],
)
def test_a_bad_evidence_section_names_the_field(tmp_path: Path, section: str, named: str) -> None:
    bench_path = _bench_file(tmp_path, section)
    with pytest.raises(PeopleError, match=named.replace("(", r"\(").replace(")", r"\)")):
        PackWriter(PackOptions(tmp_path / "pack"), bench_path)


def test_a_pack_is_never_written_into_a_folder_with_anything_in_it(tmp_path: Path) -> None:
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "x").write_text("", encoding="utf-8")
    with pytest.raises(PackError, match="exists and is not empty"):
        PackWriter(PackOptions(tmp_path / "pack"))


def test_a_run_that_amends_a_pack_is_a_new_version_naming_it(tmp_path: Path, key_pair: tuple[Path, Path]) -> None:
    bench = load_bench(SHIPPED)
    ident = Identification(True, "xocdia-server", "0.1.0", "sha256:" + "a" * 64, (_component("1"),))
    first = PackWriter(PackOptions(tmp_path / "v1", key_pair[0]), identify=_sequence(ident, ident))
    first.start(RunFacts(bench, []))
    old = first.finish(tmp_path / "no-report", None, 0)
    second = PackWriter(
        PackOptions(tmp_path / "v2", key_pair[0], amends=tmp_path / "v1"), identify=_sequence(ident, ident)
    )
    second.start(RunFacts(bench, []))
    new = second.finish(tmp_path / "no-report", None, 0)
    manifest = json.loads((tmp_path / "v2" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] == 2 and manifest["amends"]["report_id"] == old.report_id != new.report_id
    checked = verify_pack(tmp_path / "v2", key_pair[1])
    assert checked.ok and checked.previous == f"amends {old.report_id} (version 1): v1, verified"
    with pytest.raises(PackError, match="not an evidence pack"):
        PackWriter(PackOptions(tmp_path / "v3", amends=tmp_path / "nowhere"))


def test_gli_references_are_counted_apart_from_the_rule_clauses() -> None:
    from harness.evidence.verdicts import counts

    doc = {
        "scenarios": {"a": {"outcome": "passed"}},
        "clauses": {"PAY-2": {"result": "PASS"}, "EQ-1": {"result": "UNCOVERED"}, "GLI 2.8.2": {"result": "PASS"}},
    }
    assert counts(doc) == {
        "scenarios": {"passed": 1},
        "clauses": {"PASS": 1, "UNCOVERED": 1},
        "gli_references": {"PASS": 1},
    }
