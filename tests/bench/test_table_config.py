"""The table configuration (harness/table_config.py): every field parsed and refused with a message naming it, the
defaults equal to the choices the suite hard-coded before, the bench's ``table:`` key, the reference server's
refusals, the generated docs table, and a certify run whose limit scenarios follow a bench's own chip unit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import simpy

from harness.bench.adapters.base import ServerSetup
from harness.bench.adapters.server_process import server_config
from harness.bench.config import BenchError, load_bench, parse_bench
from harness.errors import AdapterError
from harness.files import load_profile
from harness.records import PlayerSpec
from harness.table_config import (
    DOC,
    FIELDS,
    TableConfig,
    TableConfigError,
    main,
    markdown_table,
    non_default,
    parse_table_config,
    reference_refusal,
    table_profile,
)

REPO = Path(__file__).resolve().parents[2]
#: The limits scenario that names its stakes by the bench's table configuration (features/limits.feature).
OWN_LIMITS = (
    "The table's own chip unit and limits decide: off the chip, below the minimum or above the maximum is refused"
)


def _bench(table: object, kind: str = "in-process", **top: Any) -> Any:
    transport = {"in-process": "memory", "command": "pty", "url": "pty"}[kind]
    server: dict[str, Any] = {"kind": kind}
    if kind == "url":
        server["url"] = "http://127.0.0.1:1"
    raw = {"server": server, "devices": {"transport": transport}, "table": table, **top}
    return parse_bench(raw, Path("bench.yaml"))


def test_the_defaults_are_the_choices_the_suite_hard_coded_before() -> None:
    # bets.py had CHIP_UNIT=100, MIN_STAKE=100, MAX_STAKE=1_000_000; the rig took the cap (3, counted since the
    # round opened or last resumed) and the pause timeout from the profile, the result timeout from timing
    default = TableConfig()
    assert (default.chip_unit, default.min_stake, default.max_stake) == (100, 100, 1_000_000)
    assert (default.max_reshakes, default.reshake_count) == (3, "since_resume")
    assert (default.shakes_during_pause, default.shake_after_close) == ("count", "void")
    bench = load_bench("in-process")
    assert bench.table == TableConfig(result_timeout_s=bench.timing.result_timeout_s)
    profile = load_profile(bench.profile)
    assert table_profile(profile, bench.table) == profile  # the shipped benches' table is the profile's
    assert non_default(bench.table) == {}
    assert reference_refusal(bench.table) == ""


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("x", "bench.yaml: table: must be a mapping of chip_unit, min_stake"),
        ({"chip": 1}, "bench.yaml: table.chip: unknown key; allowed: chip_unit, min_stake, max_stake, max_reshakes"),
        (
            {"chip_unit": "x"},
            "bench.yaml: table.chip_unit: must be a positive whole number of minor units or null; got 'x'",
        ),
        (
            {"chip_unit": 0},
            "bench.yaml: table.chip_unit: must be a positive whole number of minor units or null; got 0",
        ),
        ({"chip_unit": True}, "table.chip_unit: must be a positive whole number of minor units or null; got True"),
        ({"chip_unit": 1}, "table.chip_unit: must be a multiple of 50: with 1 a stake of 1 on three_red returns 3.8"),
        ({"chip_unit": None}, "table.chip_unit: must be a multiple of 50: with null (any whole number of minor units)"),
        (
            {"chip_unit": 75},
            "table.chip_unit: must be a multiple of 50: with 75 a stake of 75 on two_red returns 187.5",
        ),
        ({"min_stake": -5}, "table.min_stake: must be a positive whole number of minor units; got -5"),
        ({"min_stake": 150}, "table.min_stake: must be a multiple of chip_unit (100)"),
        ({"min_stake": 500, "max_stake": 400}, "table.max_stake: must be at least min_stake (500); got 400"),
        ({"max_stake": 1.5}, "table.max_stake: must be a positive whole number of minor units; got 1.5"),
        ({"max_reshakes": -1}, "table.max_reshakes: must be a whole number >= 0; got -1"),
        ({"reshake_count": "ever"}, "table.reshake_count: must be one of since_resume, since_open; got 'ever'"),
        ({"pause_timeout_s": 0}, "table.pause_timeout_s: must be a number of seconds in (0, 86400] or null; got 0"),
        ({"result_timeout_s": "5"}, "table.result_timeout_s: must be a number of seconds in (0, 86400] or null"),
        ({"shakes_during_pause": "maybe"}, "table.shakes_during_pause: must be one of count, ignored; got 'maybe'"),
        ({"shake_after_close": "counts"}, "table.shake_after_close: must be void: GP-2 has the dealer shake during"),
        ({"shake_after_close": "later"}, "table.shake_after_close: must be one of void; got 'later'"),
    ],
)
def test_every_bad_field_is_refused_naming_it_and_what_is_allowed(table: object, message: str) -> None:
    with pytest.raises(TableConfigError) as exc:
        parse_table_config(table, "bench.yaml")
    assert message in str(exc.value)
    with pytest.raises(BenchError) as bench_exc:  # the same message, as the bench file's error
        _bench(table, kind="url")
    assert str(bench_exc.value) == str(exc.value)


def test_a_valid_table_is_parsed_field_by_field() -> None:
    raw = {
        "chip_unit": 50,
        "min_stake": 50,
        "max_stake": 500_000,
        "max_reshakes": 4,
        "reshake_count": "since_open",
        "pause_timeout_s": 30,
        "result_timeout_s": None,
        "shakes_during_pause": "ignored",
    }
    table = parse_table_config(raw, "bench.yaml")
    assert table == TableConfig(50, 50, 500_000, 4, "since_open", 30.0, None, "ignored", "void")
    assert list(non_default(table)) == [k for k in (f.name for f in FIELDS) if k in raw]
    assert table.stake_problem(75) == ("LIM-2", "not a whole number of chips of 50")
    assert table.stake_problem(500_050) == ("LIM-3", "outside the table limits 50 to 500000")
    assert table.stake_problem(500_000) is None
    assert _bench(raw, kind="url").table == table  # a server attached by URL: any allowed choice


def test_the_result_timeout_defaults_to_the_benchs_timing_and_is_set_in_one_place_only() -> None:
    assert _bench({}, timing={"result_timeout_s": 7}).table.result_timeout_s == 7.0
    assert _bench({"result_timeout_s": 9}).table.result_timeout_s == 9.0
    with pytest.raises(BenchError, match=r"table\.result_timeout_s: set it here or in timing\.result_timeout_s"):
        _bench({"result_timeout_s": 9}, timing={"result_timeout_s": 7})


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"reshake_count": "since_open"}, "table.reshake_count: the reference server supports only since_resume"),
        ({"result_timeout_s": None}, "table.result_timeout_s: the reference server needs a number of seconds"),
        ({"shakes_during_pause": "ignored"}, "table.shakes_during_pause: the reference server supports only count"),
    ],
)
@pytest.mark.parametrize("kind", ["in-process", "command"])
def test_a_choice_the_reference_server_cannot_make_is_refused_on_the_benches_that_start_it(
    table: dict[str, object], message: str, kind: str
) -> None:
    with pytest.raises(BenchError) as exc:
        _bench(table, kind=kind)
    assert str(exc.value).startswith(f"bench.yaml: {message}")
    assert f"(server.kind {kind} starts the reference server)" in str(exc.value)
    lab = _bench(table, kind=kind, server={"kind": kind, "adapter": "lab.module:Adapter"})  # a lab's own adapter
    assert lab.table == parse_table_config(table, "x")


def test_the_profile_follows_the_table() -> None:
    profile = load_profile("certification")
    changed = table_profile(profile, TableConfig(max_reshakes=4, reshake_count="since_open", pause_timeout_s=2.5))
    assert (changed.table.max_reshakes, changed.table.reshake_count, changed.table.pause_timeout) == (
        4,
        "since_open",
        2.5,
    )
    assert table_profile(profile, TableConfig()).table.pause_timeout == profile.table.pause_timeout


def test_the_docs_table_is_generated_from_the_catalogue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == markdown_table() + "\n"
    assert main(["--check"]) == 0, "docs/table-configuration.md is stale: run python -m harness.table_config --write"
    rows = markdown_table().splitlines()[2:]
    assert [row.split("|")[1].strip().strip("`") for row in rows] == [f.name for f in FIELDS]
    stale = tmp_path / "doc.md"
    stale.write_text(DOC.read_text(encoding="utf-8").replace("| `max_reshakes` | int | `3` |", "| x |"), "utf-8")
    assert main(["--check", "--doc", str(stale)]) == 1
    assert main(["--write", "--doc", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")


def test_certify_follows_the_benchs_chip_unit_and_lists_the_configuration(tmp_path: Path) -> None:
    bench = tmp_path / "chip50.yaml"
    text = (REPO / "fixtures" / "benches" / "in-process.yaml").read_text(encoding="utf-8")
    bench.write_text(text + "table: {chip_unit: 50, min_stake: 50}\n", encoding="utf-8")
    report = tmp_path / "report"
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", str(bench), "--tags", "clause:LIM-2"]
    done = subprocess.run(
        [*cmd, "--workers", "0", "--report", str(report), "--no-bench-check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    assert (
        "scenarios passed 1, failed 0; table configuration not the default: chip_unit=50, min_stake=50" in done.stdout
    )
    matrix = json.loads((report / "clause-matrix.json").read_text(encoding="utf-8"))
    # the scenario written with stakes of the default table (150 refused) is not applicable here; the one naming its
    # stakes by the table's own chip unit (75 = one and a half chips of 50) is refused as LIM-2 and passes
    (skipped,) = matrix["not_applicable"]
    assert "a stake of 150 refused (not a whole number of chips of 100 of the default table)" in skipped["reason"]
    outcomes = {r["scenario"]: r["outcome"] for r in matrix["clauses"]["LIM-2"]}
    assert outcomes[OWN_LIMITS] == "passed"
    assert {r["field"]: (r["value"], r["default"]) for r in matrix["table"]}["chip_unit"] == (50, False)
    md = (report / "clause-matrix.md").read_text(encoding="utf-8")
    assert "## Table configuration" in md and "| chip_unit | 50 | no |" in md and "| max_reshakes | 3 | yes |" in md


def _setup(table: TableConfig, result_timeout_s: float | None = 5.0) -> ServerSetup:
    players = (PlayerSpec("alice", 1_000),)
    return ServerSetup(
        players, {}, simpy.Environment(), Path("."), 1.0, 0.05, 1.0, 4, result_timeout_s, 3.0, table=table
    )


def test_the_reference_server_is_started_with_the_table_configuration() -> None:
    table = TableConfig(chip_unit=50, min_stake=50, max_stake=500_000, max_reshakes=4)
    engine = server_config(_setup(table), {"alice": "alice-secret"}, "boss", "boss-secret")["engine"]
    assert (engine["chip_unit"], engine["min_stake"], engine["max_stake"], engine["reshake_cap"]) == (
        50,
        50,
        500_000,
        4,
    )
    assert (engine["pause_timeout_s"], engine["result_timeout_s"]) == (1.0, 5.0)
    with pytest.raises(AdapterError, match=r"table\.reshake_count: the reference server supports only since_resume"):
        _setup(TableConfig(reshake_count="since_open")).reference_engine()
    with pytest.raises(AdapterError, match="the reference server cannot wait for ever"):
        _setup(TableConfig(), result_timeout_s=None).reference_engine()
