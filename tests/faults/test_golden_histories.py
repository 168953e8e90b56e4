"""The fault histories of the shipped schedules are pinned: the history hash of each schedule run with seed 3 on the
in-process bench. Manifests recorded by labs replay against these hashes, so a change to the bench's timing, the
event order or the history's wording that moves one is a deliberate, reviewed change of these pins."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench.config import load_bench
from harness.faults.injector import run_schedule
from harness.faults.schedule import load_schedule

FAULTS = Path(__file__).resolve().parents[2] / "fixtures" / "faults"
GOLDEN = {
    "chaos-heavy": "9ae12fb12068172f9909db6d76e42f84a13dbd2a7cca097ea0e4e0a8b2b44963",
    "chaos": "8323e4304a2e0cbbb0dbbc5aa85bc7abb6722f0f7711d0b64c833bccf82296e5",
    "disconnect-storm": "2af58bd688fda4390e612594fb9c999f92323bdb6c14be812324350ae7b8a441",
    "finding-stale-result": "cb7402857fab00208ae60ba13bdeb26ab63b040f6a371ad93f29f5410081fb74",
    "restart-every-phase": "db629b059af8690f4d54405c23b951934c8bd464920b9aefff5a950958ed401d",
    "serial-noise": "112580918ddf801211bfc5606d2be1700dfdd9c323bea3675902f4be0526cd1e",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_shipped_schedule_history_hash_is_pinned(name: str) -> None:
    result = run_schedule(load_bench("in-process"), load_schedule(FAULTS / f"{name}.yaml"), 3)
    assert result.history_hash == GOLDEN[name]
