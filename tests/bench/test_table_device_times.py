"""The table configuration's ``device_times`` (harness/table_config.py, docs/table-configuration.md): a server that
dates device reports by their arrival declares ``ignored``; the scenarios whose verdict rests on a report's device
time declare ``used`` and are not applicable on such a bench, with the reason; the reference server, which uses
them, is refused the other choice; the Lotus example declares it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness.bench.config import load_bench
from harness.cert.steps.configuration import table_declares
from harness.cert.steps.context import NOT_APPLICABLE, CertContext
from harness.files import FIXTURES
from harness.table_config import TableConfig, TableConfigError, parse_table_config, reference_refusal

ROOT = Path(__file__).resolve().parents[2]
#: The steps that hold a shaker's reports back and send them late with the device time of the shake.
LATE_BY_DEVICE_TIME = re.compile(r"the shaker's reports of this round reach the server only")
DECLARED = "the table's device_times is used"


def test_device_times_is_parsed_and_a_bad_value_is_refused_naming_the_field() -> None:
    assert TableConfig().device_times == "used"
    assert parse_table_config({"device_times": "ignored"}, "bench.yaml").device_times == "ignored"
    with pytest.raises(TableConfigError) as refused:
        parse_table_config({"device_times": "arrival"}, "bench.yaml")
    assert str(refused.value) == "bench.yaml: table.device_times: must be one of used, ignored; got 'arrival'"


def test_the_reference_server_uses_device_times_and_is_refused_the_other_choice() -> None:
    assert reference_refusal(TableConfig()) == ""
    assert reference_refusal(TableConfig(device_times="ignored")) == (
        "table.device_times: the reference server supports only used; got 'ignored'"
    )


def _bench(tmp_path: Path, table: dict[str, object]) -> CertContext:
    data = yaml.safe_load((FIXTURES / "benches" / "in-process.yaml").read_text("utf-8"))
    data["server"] = {"kind": "url", "url": "http://127.0.0.1:1"}  # a server the kit does not start: any choice
    data["devices"] = {"transport": "pty"}
    data["table"] = table
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    return CertContext(bench=load_bench(path))


def test_a_scenario_written_for_device_times_is_not_applicable_where_they_are_ignored(tmp_path: Path) -> None:
    table_declares(_bench(tmp_path, {}), "device_times", "used")  # the default: the scenario runs
    with pytest.raises(pytest.skip.Exception) as skipped:
        table_declares(_bench(tmp_path, {"device_times": "ignored"}), "device_times", "used")
    assert str(skipped.value.msg) == (
        NOT_APPLICABLE + "the scenario is written for table.device_times used; this bench's is ignored"
    )


def _scenarios(text: str) -> list[tuple[str, list[str]]]:
    """Each scenario of a feature file: its title and its steps (the Background's excluded)."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("Scenario:", "Scenario Outline:")):
            out.append((stripped.split(":", 1)[1].strip(), []))
        elif stripped.startswith("Background:"):
            out.append(("", []))
        elif out and stripped.split(" ", 1)[0] in ("Given", "When", "Then", "And", "But"):
            out[-1][1].append(stripped.split(" ", 1)[1])
    return [s for s in out if s[0]]


def test_every_scenario_that_counts_a_late_report_by_its_device_time_declares_it() -> None:
    found = {}
    for feature in sorted((ROOT / "features").glob("*.feature")):
        for title, steps in _scenarios(feature.read_text("utf-8")):
            if any(LATE_BY_DEVICE_TIME.search(step) for step in steps):
                found[title] = DECLARED in steps
    assert found == {
        "A shake made during betting whose reports reach the server after the close still counts": True,
        "A shake reported late still counts when a problem pauses the round before its reports arrive": True,
    }


@pytest.mark.parametrize("bench", ["lotus.yaml", "lotus-bin.yaml"])
def test_the_lotus_benches_declare_that_their_server_ignores_device_times(bench: str) -> None:
    raw = yaml.safe_load((ROOT / "examples" / "foreign" / bench).read_text("utf-8"))
    table = parse_table_config(raw["table"], bench, raw["timing"]["result_timeout_s"])
    assert table.device_times == "ignored"
