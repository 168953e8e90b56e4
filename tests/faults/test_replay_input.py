"""Replay tools never destroy their input and refuse input of the wrong shape with one line: ``inject --replay``
writes its manifest beside the one it reads; manifests, feeds and traces nested too deeply are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

CHAOS = str(Path(__file__).resolve().parents[2] / "fixtures" / "faults" / "chaos.yaml")
DEEP = "[" * 100_000 + "]" * 100_000


def test_a_replay_never_writes_over_the_manifest_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["inject", "--bench", "in-process", "--schedule", CHAOS, "--seed", "4"]) == 0
    manifest = tmp_path / "faults-manifest-4.json"  # the default name, where a replay of seed 4 used to write
    data = json.loads(manifest.read_text())
    data["history_hash"] = "0" * 64  # a hash the rerun will not match: what a replay is for
    manifest.write_text(json.dumps(data))
    original = manifest.read_bytes()
    capsys.readouterr()
    assert main(["inject", "--replay", str(manifest)]) == 1
    out = capsys.readouterr().out
    assert "replay: history hash DIFFERS from the manifest's (0000000000000000)" in out
    assert f"manifest: {tmp_path / 'faults-manifest-4.replay.json'}" in out
    assert manifest.read_bytes() == original
    again = json.loads((tmp_path / "faults-manifest-4.replay.json").read_text())
    assert again["seed"] == 4 and again["history_hash"] != "0" * 64
    assert main(["inject", "--replay", str(manifest), "--manifest", str(manifest)]) == 2
    assert capsys.readouterr().err == (
        f"xocdia-hil: error: --manifest {manifest}: is the manifest being replayed; name another file\n"
    )
    assert manifest.read_bytes() == original


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DEEP, "not a run manifest (missing or bad field: JSON nested more than 64 arrays/objects deep)"),
        ('{"schedule": [1]}', "not a run manifest (missing or bad field: not a JSON object with a schedule object)"),
        ('{"schedule": {"yaml": 7}}', "not a run manifest (missing or bad field: schedule.yaml must be a string)"),
        (
            json.dumps({"seed": 1, "bench": "in-process", "schedule": {"yaml": DEEP[:20_000], "sha256": ""}}),
            "schedule.yaml nested too deeply",
        ),
    ],
    ids=["deep-json", "schedule-not-object", "yaml-not-string", "deep-yaml"],
)
def test_a_bad_manifest_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(text)
    assert main(["inject", "--replay", str(manifest)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"xocdia-hil: error: manifest {manifest}: ") and message in err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"seq": 0, "t": 0, "kind": "note", "data": {"x": ' + DEEP + "}}", "nested more than 64"),
        ("[1, 2]", "not a JSON object"),
        ('{"t": 0, "port": "BOWL", "dir": "tx", "hex": "00", "x": ' + DEEP + "}", "nested more than 64"),
        ('["hex"]', "not a JSON object"),
    ],
    ids=["deep-feed", "feed-not-object", "deep-trace", "trace-not-object"],
)
def test_replay_refuses_a_deep_or_misshapen_file_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(line + "\n")
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("xocdia-hil: error: ") and message in err
