"""``xocdia-hil run`` counts every crowd bet (sent = accepted + refused + failed) and does not PASS a run whose
bets failed, whatever the oracle says of the bets that reached the server."""

from __future__ import annotations

import json

import pytest

from harness.cli import main, run


def _run(capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    status = main(["run", "--bench", "in-process", "--rounds", "4", "--players", "2", "--seed", "1", "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_a_run_counts_its_bets_and_passes(capsys: pytest.CaptureFixture[str]) -> None:
    status, summary = _run(capsys)
    bets = summary["bets"]
    assert isinstance(bets, dict)
    assert bets["sent"] > 0 and bets["sent"] == bets["accepted"] and bets["failed"] == {}
    assert (status, summary["outcome"], summary["problems"]) == (0, "PASS", [])


def test_failed_bets_make_the_run_fail(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run, "VISITS", 0)  # no wallet opened: every crowd bet fails unknown_player
    status, summary = _run(capsys)
    bets = summary["bets"]
    assert isinstance(bets, dict)
    assert bets["sent"] > 0 and bets["failed"] == {"unknown_player": bets["sent"]} and bets["accepted"] == 0
    oracle = summary["oracle"]
    assert isinstance(oracle, dict) and oracle["passed"]  # nothing reached the server to judge
    assert (status, summary["outcome"]) == (1, "FAIL")
    assert summary["problems"] == [f"{bets['sent']} crowd bets failed (unknown_player: {bets['sent']})"]
