"""The bet record's optional balances: an adapter declares which its server serves (``bet_record_fields``), and the
bet record's check (REC-1) compares those and only those, saying in its recorded check which it left out; every
other column is still compared, so a wrong amount returned still fails. Run on the in-process reference server
with its balances blanked (tests/cert/record_adapters.py), through the step itself and through ``certify``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness.bench.adapters.reference_http import HttpAdapter
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.config import load_bench
from harness.cert.steps.context import CertContext
from harness.cert.steps.money import record_row
from harness.judge.checks import ClauseFailure
from harness.records import OPTIONAL_RECORD_FIELDS, RoundStatus, served_record_fields
from tests.cert import record_adapters

REPO = Path(__file__).resolve().parents[2]
HERE = "tests.cert.record_adapters"
NOT_SERVED = "not checked, as the server does not serve them: balance before, balance after"


@contextmanager
def _played(adapter: str) -> Iterator[CertContext]:
    """alice's 1,000 on big in round 1, played to the end on r r r w (a win: 1,960 returned), on the in-process
    bench with ``adapter``; the rig is closed on the way out."""
    bench = load_bench("in-process")
    bench = replace(bench, server=replace(bench.server, adapter=adapter))
    cert = CertContext(bench, players={"alice": 10_000}, script=[{"round": 1, "faces": "r r r w"}])
    with cert.running() as rig:
        rid = rig.open_round()
        assert rig.bet("alice", "big", 1000).accepted
        rig.play_to_end(rid)
        yield cert


def _reads(cert: CertContext, returned: int, before: int, after: int) -> None:
    record_row(cert, "alice", "big", 1, 1000, "win", returned, RoundStatus.SETTLED, "RRRW", 3, before, after)


def test_the_reference_adapters_declare_both_balances_served() -> None:
    for adapter in (InProcessAdapter, HttpAdapter):
        assert served_record_fields(adapter.bet_record_fields) == {"balance_before", "balance_after"}
    assert set(OPTIONAL_RECORD_FIELDS) == {"balance_before", "balance_after"}


@pytest.mark.parametrize(
    ("declared", "named"),
    [("balance_before", "a set of field names"), ({"balance"}, "['balance']"), (None, "a set of field names")],
)
def test_a_bad_declaration_names_the_field_and_the_allowed_values(declared: object, named: str) -> None:
    with pytest.raises(ValueError, match="bet_record_fields") as raised:
        served_record_fields(declared, "LabAdapter")
    assert named in str(raised.value) and "allowed: balance_before, balance_after" in str(raised.value)
    assert str(raised.value).startswith("LabAdapter: ")


def test_without_balances_served_rec1_checks_every_other_column_and_says_the_balances_were_not() -> None:
    with _played(f"{HERE}:NoBalances") as cert:
        assert [r.balance_before for r in cert.running().adapter.bet_record("alice")] == [None]
        _reads(cert, 1960, 0, 0)  # balances nobody served: whatever the scenario says, they are not compared
    rec = [c for c in cert.checks.checks if c.clause == "REC-1"]
    assert len(rec) == 1 and rec[0].passed
    assert rec[0].what == f"alice's big bet in the bet record: every column as expected; {NOT_SERVED}"


def test_served_balances_are_still_compared() -> None:
    with _played("harness.bench.adapters.reference_inprocess:InProcessAdapter") as cert:
        _reads(cert, 1960, 10_000, 10_960)
        with pytest.raises(ClauseFailure, match=r"\[REC-1\].*'balance before': '10000 \(expected 0\)'"):
            _reads(cert, 1960, 0, 10_960)
    passed = [c for c in cert.checks.checks if c.clause == "REC-1" and c.passed]
    assert [c.what for c in passed] == ["alice's big bet in the bet record: every column as expected"]


def test_balances_left_out_but_declared_served_fail_rec1() -> None:
    with (
        _played(f"{HERE}:UndeclaredNoBalances") as cert,
        pytest.raises(ClauseFailure, match=r"'balance before': 'None"),
    ):
        _reads(cert, 1960, 10_000, 10_960)


def test_without_balances_served_a_wrong_amount_returned_still_fails() -> None:
    with _played(f"{HERE}:NoBalancesWrongReturned") as cert, pytest.raises(ClauseFailure) as failed:
        _reads(cert, 1960, 10_000, 10_960)
    text = str(failed.value)  # the judge's root (the paytable's row), then what the REC-1 step saw
    assert text.startswith("[PAY-9] ") and "'returned': '1961 (expected 1960)'" in text
    assert "'balance before'" not in text and NOT_SERVED in text


def _certify(tmp_path: Path, adapter: str) -> dict[str, object]:
    """``certify`` of the REC-1 scenarios on the in-process bench with ``adapter`` (a class of a module in the
    working folder, as a lab's is found); its JSON summary, with ``rc`` the exit status."""
    (tmp_path / "nobal_adapter.py").write_text(record_adapters.MODULE, encoding="utf-8")
    bench = yaml.safe_load((REPO / "fixtures" / "benches" / "in-process.yaml").read_text(encoding="utf-8"))
    bench["server"]["adapter"] = f"nobal_adapter:{adapter}"
    (tmp_path / "bench.yaml").write_text(yaml.safe_dump(bench), encoding="utf-8")
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", "bench.yaml", "--tags", "clause:REC-1"]
    cmd += ["--no-bench-check", "--report", "report", "--json"]
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    matrix = json.loads((tmp_path / "report" / "clause-matrix.json").read_text(encoding="utf-8"))
    return {"rc": done.returncode, "out": done.stdout + done.stderr, "matrix": matrix}


def test_certify_passes_rec1_on_the_reference_server_serving_no_balances(tmp_path: Path) -> None:
    run = _certify(tmp_path, "NoBalances")
    matrix = run["matrix"]
    assert run["rc"] == 0, run["out"]
    assert isinstance(matrix, dict) and matrix["results"]["REC-1"] == {"result": "PASS"}
    assert matrix["failed"] == 0 and matrix["passed"] == 3


def test_certify_fails_rec1_on_a_wrong_amount_returned_without_balances(tmp_path: Path) -> None:
    run = _certify(tmp_path, "NoBalancesWrongReturned")
    matrix = run["matrix"]
    assert run["rc"] == 1, run["out"]
    assert isinstance(matrix, dict)
    outcomes = {e["scenario"]: e["outcome"] for e in matrix["clauses"]["REC-1"]}
    assert outcomes == {
        "A correction re-settles every bet of the round on the corrected faces": "failed",
        "Each column of the bet record, while the round is open and once it is settled": "failed",
        "Each column of the bet record of a void round": "passed",  # nothing won: nothing planted
    }
    # the failure names the judge's root clause (the paytable row of the wrong amount), the REC-1 step's finding
    # under it
    failed = {f["scenario"]: f["failed_clauses"] for f in matrix["failures"]}
    assert failed["Each column of the bet record, while the round is open and once it is settled"] == ["PAY-9"]
    assert "'returned': '1961 (expected 1960)'" in str(run["out"])
