"""harness.bench.forge: frames the table did not send, put on a rig's lines in the line's dialect, reach the real
server's end of the line (in-process: the reference server's own decoder and line guard) and the serial trace, on
every line whose device end can forge; a line whose end cannot is refused with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.bench import forge
from harness.bench.adapters.reference_inprocess import InProcessAdapter
from harness.bench.config import load_bench
from harness.bench.rig import Rig
from harness.wire.dialects.bus.codec import CODEC as BUS
from harness.wire.dialects.capabilities import NoiseKind
from harness.wire.messages import BowlOff, Frame, Result, Source
from tests.bench.plain_dialect import PlainDialect

ROOT = Path(__file__).resolve().parents[2]
PLAIN = f"{PlainDialect.__module__}:PlainDialect"
SPLIT_BUS = {"lines": {"reader": ["reader"], "panel": ["bowl", "shaker", "lamp", "console"]}}


def test_a_result_written_on_the_console_line_is_refused_and_traced() -> None:
    with Rig.build(load_bench("in-process"), {"alice": 1_000}) as rig:
        rig.run_for(0.2)  # every line has said HELLO
        adapter = rig.adapter
        assert isinstance(adapter, InProcessAdapter)
        before, logged = adapter.ignored_device_frames(), adapter.event_log_size()
        line = forge.line_of(rig, "CONSOLE")
        [seq] = forge.write_frames(rig, line, [Frame(0, Source.READER, Result("RRRR", False), round="7")])
        rig.run_for(0.1)
        assert adapter.ignored_device_frames() == before + 1
        assert adapter.event_log_size() == logged + 1  # the line's first refusal is a device_incident event
        sent = [r.readable() for r in rig.recorder.records if f"{seq} READER RESULT" in r.readable()]
        assert sent and "CONSOLE" in sent[0]  # traced on the console line, as the device end wrote it


def test_ascii_noise_reaches_the_server_as_refused_frames_and_changes_no_count_of_reports() -> None:
    with Rig.build(load_bench("in-process"), {"alice": 1_000}) as rig:
        rig.run_for(0.2)
        adapter = rig.adapter
        assert isinstance(adapter, InProcessAdapter)
        before = adapter.ignored_device_frames()
        line = forge.line_of(rig, "BOWL")
        assert forge.noise_kinds(rig, line) == frozenset(NoiseKind)
        seqs = forge.write_frames(rig, line, [forge.Noise(kind, Source.BOWL) for kind in NoiseKind])
        rig.run_for(0.1)
        assert adapter.ignored_device_frames() == before  # refused by the decoder (NAKed), never a report
        naks = [r.readable() for r in rig.recorder.records if "NAK" in r.readable()]
        assert all(any(f"of={s}" in n for n in naks) for s in seqs), naks  # each one answered


def _split_bus(tmp_path: Path) -> Path:
    """The in-process bench with its devices on two buses: the reader alone, the others on ``panel``."""
    text = (ROOT / "fixtures" / "benches" / "in-process.yaml").read_text("utf-8")
    devices = "devices:\n  transport: memory\n  dialect: xocdia-bus\n  options:\n    lines: " + json.dumps(
        SPLIT_BUS["lines"]
    )
    path = tmp_path / "split-bus.yaml"
    path.write_text(text.replace("devices:\n  transport: memory", devices), "utf-8")
    return path


def test_a_result_forged_on_a_bus_without_the_reader_goes_in_a_reply_and_the_server_refuses_it(
    tmp_path: Path,
) -> None:
    with Rig.build(load_bench(_split_bus(tmp_path)), {"alice": 1_000}) as rig:
        rig.run_for(0.3)  # every device has said HELLO
        line = forge.line_of(rig, "CONSOLE")
        assert (line, forge.spec_of(rig, line).roles) == (
            "panel",
            (Source.BOWL, Source.SHAKER, Source.LAMP, Source.CONSOLE),
        )
        forged = Frame(0, Source.READER, Result("RRRR", False), round="7")
        [seq] = forge.write_frames(rig, line, [forged])
        rig.run_for(0.2)
        replies = [r for r in rig.recorder.records if r.port == "PANEL" and r.dir == "tx"]
        frames = [f for r in replies for f in BUS.decoder().feed(r.data)]
        assert Frame(seq, Source.READER, forged.message, round="7") in frames  # in a reply on the panel bus
        assert rig.emulated.hub.pending() == 0  # sent


def test_a_bus_line_of_every_device_carries_the_reader() -> None:
    with Rig.build(load_bench("in-process", "xocdia-bus"), {"alice": 1_000}) as rig:
        line = forge.line_of(rig, "CONSOLE")
        assert line == forge.line_of(rig, "READER") == "bus"
        forge.forgeable(rig, line)  # the bus forges: the DEV-1 step is not applicable there for the topology
        assert forge.expressible(rig, line, Frame(0, Source.BOWL, BowlOff(False, None)))
        assert not forge.expressible(rig, line, Frame(0, Source.BOWL, Result("RRRR", False)))


def test_a_line_whose_device_end_cannot_forge_is_refused_naming_its_dialect_and_the_capability() -> None:
    with (
        Rig.build(load_bench("in-process", PLAIN), {"alice": 1_000}) as rig,
        pytest.raises(
            forge.CannotForge, match=r"the console line speaks test-plain, .*PlainEnd.*lacks the capability Forging"
        ),
    ):
        forge.write_frames(rig, forge.line_of(rig, "CONSOLE"), [Frame(0, Source.READER, Result("RRRR", False))])
    assert not forge.noise_kinds(rig, "console")
