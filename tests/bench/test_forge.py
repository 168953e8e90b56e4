"""harness.bench.forge: frames the table did not send, put on a rig's lines in the line's dialect, reach the real
server's end of the line (in-process: the reference server's own decoder and line guard) and the serial trace."""

from __future__ import annotations

import pytest

from harness.bench import forge
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.wire.messages import Frame, Result, Source


def test_an_ascii_frame_carries_the_crc_of_its_body() -> None:
    # docs/protocol.md §3, worked example: body "1 0 BOWL HB" -> CRC 6E17
    assert forge.ascii_frame(0, "BOWL HB") == b"$1 0 BOWL HB*6E17\r\n"


def test_a_result_written_on_the_console_line_is_refused_and_traced() -> None:
    with Rig.build(load_bench("in-process"), {"alice": 1_000}) as rig:
        rig.run_for(0.2)  # every line has said HELLO
        adapter = rig.adapter
        assert isinstance(adapter, InProcessAdapter)
        before, logged = adapter.ignored_device_frames(), adapter.event_log_size()
        line = forge.line_of(rig, "CONSOLE")
        nxt = forge.write_frames(rig, line, [Frame(0, Source.READER, Result("RRRR", False), round="7")])
        rig.run_for(0.1)
        assert nxt == forge.FORGED_SEQ + 1
        assert adapter.ignored_device_frames() == before + 1
        assert adapter.event_log_size() == logged + 1  # the line's first refusal is a device_incident event
        sent = [r.readable() for r in rig.recorder.records if "60000 READER RESULT" in r.readable()]
        assert sent and "CONSOLE" in sent[0]  # traced on the console line, as the device end wrote it


def test_a_polled_bus_takes_no_pushed_frame() -> None:
    bench = load_bench("in-process", "xocdia-bus")
    with Rig.build(bench, {"alice": 1_000}) as rig, pytest.raises(forge.CannotForge, match="polls"):
        forge.pushable(rig, forge.line_of(rig, "READER"))
