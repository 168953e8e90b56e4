"""A step that fails outside a clause check (a harness error) is put to the judge: when the judge finds a root
cause in what the server did, that clause is the scenario's failed clause, not an error of the harness."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from harness.bench.adapters.rewriting import RewritingAdapter
from harness.bench.config import load_bench
from harness.cert import plugin
from harness.cert.steps.context import CertContext
from harness.records import BetRecordRow


def _request(context: CertContext) -> Any:
    node = SimpleNamespace(stash=pytest.Stash(), user_properties=[])
    node.stash[plugin._CERT_KEY] = context
    return SimpleNamespace(node=node)


def _pays_two_reds_on_big(row: BetRecordRow) -> BetRecordRow:
    if row.bet_type == "big" and row.round_status == "settled":
        return replace(row, result="win", returned=1960)  # two reds: PAY-9 returns the stake (a push)
    return row


@pytest.mark.parametrize(("records", "named"), [(_pays_two_reds_on_big, ["PAY-9"]), (None, [])])
def test_a_harness_error_behind_which_the_judge_finds_a_root_cause_fails_that_clause(
    records: Any, named: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("in-process")
    if records is not None:
        bench = RewritingAdapter.on(bench, records=records)
    context = CertContext(bench, players={"alice": 10_000}, script=[{"round": 1, "faces": "w w r r"}])
    with context.running() as rig:
        rid = rig.open_round()
        assert rig.bet("alice", "big", 1000).accepted
        rig.play_to_end(rid)
        request = _request(context)
        plugin.pytest_bdd_step_error(request, RuntimeError("the lamp cannot follow the server"))
    assert [v for k, v in request.node.user_properties if k == "xocdia_failed"] == named
    out = capsys.readouterr().out
    assert ("the judge's finding behind RuntimeError" in out) == bool(named)
    if named:
        assert "[PAY-9]" in out and "the step saw: RuntimeError: the lamp cannot follow the server" in out
