"""Scenarios on a bench whose dialect declares less: a step that needs an undeclared capability ends the scenario
not applicable with the reason, and the GP-1 step checks the tokens on the ground truth where the console's dialect
has no token sensor (on a real in-process bench speaking the polled vendor dialect)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness.bench.config import Bench, load_bench
from harness.cert.steps.context import NOT_APPLICABLE, CertContext, declares, needs
from harness.cert.steps.rounds import played_to_end, round_opens
from harness.cert.steps.table import round_lands, table_sequence
from harness.files import FIXTURES
from harness.judge.checks import ClauseFailure
from harness.wire.messages import Source
from simulator.events import TokensPlaced
from tests.wire.dialects.vendor_poll import VendorPollDialect

VENDOR = "tests.wire.dialects.vendor_poll:VendorPollDialect"


class SensingVendor(VendorPollDialect):
    """The vendor dialect claiming a token sensor it does not carry (its wire has no CONSOLE TOKENS)."""

    capabilities = replace(VendorPollDialect.capabilities, token_sensor=True)


def _bench(tmp_path: Path, dialect: str, options: dict[str, object] | None = None) -> Bench:
    data = yaml.safe_load((FIXTURES / "benches" / "in-process.yaml").read_text("utf-8"))
    data["devices"] = {"transport": "memory", "dialect": dialect, **({"options": options} if options else {})}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    return load_bench(path)


def test_a_step_needing_an_undeclared_capability_is_not_applicable_with_the_reason(tmp_path: Path) -> None:
    cert = CertContext(bench=_bench(tmp_path, VENDOR))
    with pytest.raises(pytest.skip.Exception) as skipped:
        needs(cert, "event_times", "late shaker reports count by their device time", Source.SHAKER)
    assert str(skipped.value.msg) == (
        NOT_APPLICABLE + "bench in-process speaks vendor-poll on the SHAKER line, which declares no event_times:"
        " late shaker reports count by their device time"
    )
    needs(cert, "positions", "which token dropped")  # declared: returns
    with pytest.raises(ValueError, match=r"capability: must be one of round_tags, event_times, .*; got 'colour'"):
        needs(cert, "colour", "no such capability")


def test_a_mixed_table_answers_per_line(tmp_path: Path) -> None:
    bench = _bench(tmp_path, "xocdia-jsonl")
    assert declares(bench, "token_sensor", Source.CONSOLE)  # the console speaks the ASCII companion
    assert not declares(bench, "token_sensor")  # the reader's line does not carry one
    assert declares(bench, "confidence", Source.READER) and not declares(bench, "confidence", Source.CONSOLE)
    assert declares(_bench(tmp_path, "xocdia-ascii"), "round_tags")


def _played(bench: Bench) -> CertContext:
    cert = CertContext(bench=bench)
    round_lands(cert, 1, "RWRR")
    round_opens(cert, 1)
    played_to_end(cert)
    return cert


def test_gp1_is_checked_on_the_ground_truth_where_the_console_has_no_token_sensor(tmp_path: Path) -> None:
    cert = _played(_bench(tmp_path, VENDOR))
    table_sequence(cert, 1)
    checked = [(c.clause, c.what) for c in cert.checks.checks if "tokens placed" in c.what]
    assert [clause for clause, _ in checked] == ["GP-1", "EQ-1"], checked
    # a ground truth without the tokens placed fails the step on the same run
    rig = cert.running()
    rig.truth[:] = [e for e in rig.truth if not isinstance(e, TokensPlaced)]
    with pytest.raises(ClauseFailure, match=r"round 1: the table did \['bowl_placed'"):
        table_sequence(cert, 1)


def test_a_dialect_declaring_a_token_sensor_it_lacks_fails_gp1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(globals(), "SensingVendor", SensingVendor)
    cert = _played(_bench(tmp_path, f"{__name__}:SensingVendor"))
    with pytest.raises(ClauseFailure, match=r"round 1: CONSOLE TOKENS frame on the device lines"):
        table_sequence(cert, 1)
