"""The rig refuses bad scripts and adapters with messages naming what is wrong, before opening any port."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from harness.bench.config import load_bench
from harness.bench.rig import Rig
from simulator.script import ScriptError


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_bad_script_step_is_named_and_nothing_stays_open() -> None:
    before = _open_fds()
    with pytest.raises(ScriptError, match=r"scenario script\[0\]\.standing: expected a list of token numbers 0-3"):
        Rig.build(load_bench("local-hil"), {"alice": 100}, [{"round": 1, "standing": [7]}])
    assert _open_fds() == before


def test_a_bad_adapter_path_is_named() -> None:
    bench = load_bench("in-process")
    bench = replace(bench, server=replace(bench.server, adapter="harness.bench.adapters.base:AdapterError"))
    with pytest.raises(ValueError, match="AdapterError is not a GameServerAdapter subclass"):
        Rig.build(bench, {"alice": 100})


def test_rounds_are_numbered_in_the_order_the_server_opens_them() -> None:
    with Rig.build(load_bench("in-process"), {"alice": 1_000}, [{"round": 2, "faces": "r r r r"}]) as rig:
        first = rig.open_round()
        rig.play_to_end(first)
        second = rig.open_round()
        end = rig.play_to_end(second)
        assert (rig.round_id(1), rig.round_id(2)) == (first, second)
        assert (end.kind, end.faces) == ("settled", "RRRR")  # the script for "round 2" hit the second round
        with pytest.raises(KeyError, match="round 3 has not been opened"):
            rig.round_id(3)


def test_a_rig_is_a_context_manager_that_closes_even_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError, match="boom"), Rig.build(load_bench("in-process"), {"alice": 100}) as rig:
        assert rig.adapter.balance("alice") == 100
        raise RuntimeError("boom")
    assert not rig.workdir.exists()  # closed: the temp folder is gone, the device lines closed
    assert not any(line.connected for line in rig.lines.values())
