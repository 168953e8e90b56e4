"""The evidence pack end to end through the command line: ``certify --evidence --sign-key`` on the in-process
bench (a few clauses), then ``verify`` (exit 0; 1 naming a changed byte in any file, a changed feed line, a deleted
file, a wrong key), ``evidence junit``, ``evidence diff``, ``evidence amend``, and the options refused before
anything runs."""

from __future__ import annotations

import importlib.util
import json
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from harness.evidence.signing import keygen

TAGS = "clause:EQ-1 or clause:DEV-1"


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, str]:
    """One signed pack of a small certify run: (the pack, the private key, the public key, certify's output)."""
    root = tmp_path_factory.mktemp("certified")
    key = root / "lab.key"
    keygen(key)
    pack = root / "pack"
    cmd = [sys.executable, "-m", "harness.cli", "certify", "--bench", "in-process", "--tags", TAGS, "--workers", "2"]
    cmd += ["--report", str(root / "report"), "--evidence", str(pack), "--sign-key", str(key)]
    cmd += ["--performer", "A. Tester", "--approver", "B. Head"]
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return pack, key, root / "lab.key.pub", done.stdout


def _verify(pack: Path, *extra: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "verify", str(pack), *extra], capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout + done.stderr


def _copy(pack: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(pack, copy)
    return copy


def test_certify_writes_a_signed_pack_that_verifies(certified: tuple[Path, Path, Path, str]) -> None:
    pack, _key, public, out = certified
    manifest = json.loads((pack / "manifest.json").read_text(encoding="utf-8"))
    assert f"evidence: {pack}: report {manifest['report_id']}, PASS, signed" in out
    code, text = _verify(pack, "--key", str(public))
    assert code == 0, text
    assert f"report id: {manifest['report_id']} (version 1)" in text
    assert "system under test: xocdia-server" in text and "verdict: PASS (exit status 0)" in text
    assert "performed by: A. Tester; approved by: B. Head" in text
    assert len(text.splitlines()) <= 24  # one screen
    assert manifest["performer"] == "A. Tester" and manifest["selection"]["tags"] == TAGS
    assert manifest["suite"]["features"] and all(
        d.startswith("sha256:") for d in manifest["suite"]["features"].values()
    )
    scenarios = json.loads((pack / "verdicts.json").read_text(encoding="utf-8"))["scenarios"]
    assert scenarios and all(s["outcome"] == "passed" for s in scenarios.values())
    assert {"EQ-1", "DEV-1"} <= {c for s in scenarios.values() for c in s["clauses"]}


def test_the_feed_is_chained_and_holds_every_scenarios_verdict(certified: tuple[Path, Path, Path, str]) -> None:
    pack = certified[0]
    lines = [json.loads(line) for line in (pack / "feed.jsonl").read_text(encoding="utf-8").splitlines()]
    verdict_events = [line["event"]["data"] for line in lines if line["event"]["kind"] == "verdict"]
    scenarios = json.loads((pack / "verdicts.json").read_text(encoding="utf-8"))["scenarios"]
    assert len([v for v in verdict_events if "scenario" in v and "clauses" in v]) == len(scenarios)
    first, last = lines[0]["event"]["data"], lines[-1]["event"]["data"]
    assert (first["who"], first["what"], last["who"], last["what"]) == (
        "evidence",
        "identification",
        "evidence",
        "identification",
    )


@pytest.mark.parametrize(
    "name", ["manifest.json", "feed.jsonl", "verdicts.json", "clause-matrix.json", "junit.xml", "bench/in-process.yaml"]
)
def test_one_byte_changed_in_a_file_of_the_pack_fails_verify_naming_it(
    certified: tuple[Path, Path, Path, str], tmp_path: Path, name: str
) -> None:
    pack = _copy(certified[0], tmp_path)
    path = pack / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    code, text = _verify(pack, "--key", str(certified[2]))
    assert code == 1, text
    expected = {"manifest.json": "manifest.json: the signature", "feed.jsonl": "feed.jsonl line "}.get(
        name, f"{name}: SHA-256 does not match"
    )
    assert f"first mismatch: {expected}" in text


def test_every_file_of_the_pack_is_covered(certified: tuple[Path, Path, Path, str], tmp_path: Path) -> None:
    """Each file but the manifest and its signature is listed, so a change to any of them is named."""
    pack = certified[0]
    listed = json.loads((pack / "manifest.json").read_text(encoding="utf-8"))["files"]
    on_disk = {p.relative_to(pack).as_posix() for p in pack.rglob("*") if p.is_file()}
    assert on_disk - set(listed) == {"manifest.json", "manifest.sig"}
    traces = [n for n in listed if n.startswith("results/") and n.endswith("-attachment.txt")]
    assert traces, "the scenarios' serial traces ship in the pack"


def test_a_changed_feed_line_a_deleted_file_and_a_wrong_key_fail_verify(
    certified: tuple[Path, Path, Path, str], tmp_path: Path
) -> None:
    pack = _copy(certified[0], tmp_path)
    feed = pack / "feed.jsonl"
    lines = feed.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"t":', b'"t": ', 1)
    feed.write_bytes(b"\n".join(lines))
    code, text = _verify(pack, "--key", str(certified[2]))
    assert code == 1 and "first mismatch: feed.jsonl line 4: its digest does not match the next line's prev" in text
    shutil.rmtree(pack)
    pack = _copy(certified[0], tmp_path)
    (pack / "identification" / "end.json").unlink()
    code, text = _verify(pack)
    assert code == 1 and "first mismatch: identification/end.json: missing (listed in the manifest)" in text
    other = tmp_path / "other.key"
    keygen(other)
    code, text = _verify(certified[0], "--key", f"{other}.pub")
    assert code == 1 and "not by the key given (--key)" in text


def test_junit_export_has_each_scenario_with_its_clauses(
    certified: tuple[Path, Path, Path, str], tmp_path: Path
) -> None:
    pack = certified[0]
    assert main(["evidence", "junit", str(pack), str(tmp_path / "out.xml")]) == 0
    assert (tmp_path / "out.xml").read_bytes() == (pack / "junit.xml").read_bytes()
    root = ET.parse(tmp_path / "out.xml").getroot()
    scenarios = json.loads((pack / "verdicts.json").read_text(encoding="utf-8"))["scenarios"]
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == len(scenarios) and root.get("failures") == "0"
    for case in cases:
        clauses = [p.get("value") for p in case.findall("./properties/property[@name='clause']")]
        entry = next(s for s in scenarios.values() if s["scenario"] == case.get("name"))
        assert clauses == list(entry["clauses"])


def test_amend_makes_a_new_signed_version_that_verify_follows(
    certified: tuple[Path, Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack, key, public, _out = certified
    old = tmp_path / "v1"
    shutil.copytree(pack, old)
    before = {p: p.read_bytes() for p in old.rglob("*") if p.is_file()}
    new = tmp_path / "v2"
    args = ["evidence", "amend", str(old), str(new), "--reason", "approver named", "--approver", "C. Lead"]
    assert main([*args, "--sign-key", str(key)]) == 0
    assert before == {p: p.read_bytes() for p in old.rglob("*") if p.is_file()}  # never an edit
    m_old = json.loads((old / "manifest.json").read_text(encoding="utf-8"))
    m_new = json.loads((new / "manifest.json").read_text(encoding="utf-8"))
    assert m_new["version"] == 2 and m_new["amends"]["report_id"] == m_old["report_id"]
    assert m_new["report_id"] != m_old["report_id"] and m_new["approver"] == "C. Lead"
    capsys.readouterr()
    assert main(["verify", str(new), "--key", str(public)]) == 0
    assert f"amends {m_old['report_id']} (version 1): v1, verified" in capsys.readouterr().out
    assert main([*args]) == 2  # into a non-empty folder: refused
    assert "never edited in place" in capsys.readouterr().err


def test_diff_of_a_pack_with_itself_is_empty_and_names_a_changed_component(
    certified: tuple[Path, Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = certified[0]
    assert main(["evidence", "diff", str(pack), str(pack)]) == 0
    other = tmp_path / "b"
    shutil.copytree(pack, other)
    start = json.loads((other / "identification" / "start.json").read_text(encoding="utf-8"))
    engine = next(c for c in start["components"] if c["name"] == "gameserver/engine.py")
    engine["digest"] = "sha256:" + "1" * 64
    (other / "identification" / "start.json").write_text(json.dumps(start), encoding="utf-8")
    verdicts = json.loads((other / "verdicts.json").read_text(encoding="utf-8"))
    first = next(iter(verdicts["scenarios"].values()))
    first["outcome"] = "failed"
    verdicts["clauses"]["EQ-1"]["result"] = "FAIL"
    (other / "verdicts.json").write_text(json.dumps(verdicts), encoding="utf-8")
    capsys.readouterr()
    assert main(["evidence", "diff", str(pack), str(other)]) == 1
    out = capsys.readouterr().out
    assert "changed gameserver/engine.py (system)" in out
    assert f"scenario {first['scenario']}: passed -> failed" in out and "clause EQ-1: PASS -> FAIL" in out


def test_a_non_empty_pack_folder_and_options_without_evidence_are_refused_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key_pair: tuple[Path, Path]
) -> None:
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "old.txt").write_text("x", encoding="utf-8")
    assert main(["certify", "--tags", TAGS, "--evidence", str(tmp_path / "e"), "--report", str(tmp_path / "r")]) == 2
    assert "exists and is not empty; a pack is never edited in place" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
    assert main(["certify", "--tags", TAGS, "--sign-key", str(key_pair[0])]) == 2
    assert "--sign-key: only with --evidence DIR" in capsys.readouterr().err
    assert main(["certify", "--evidence", str(tmp_path / "f"), "--sign-key", str(tmp_path / "nokey")]) == 2
    assert "cannot read the private key" in capsys.readouterr().err


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evidence", "keygen", str(tmp_path / "k")]) == 0
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600
    assert (tmp_path / "k.pub").read_text(encoding="ascii").startswith("-----BEGIN PUBLIC KEY-----")
    before = (tmp_path / "k").read_bytes()
    assert main(["evidence", "keygen", str(tmp_path / "k")]) == 2
    assert "exists already" in capsys.readouterr().err and (tmp_path / "k").read_bytes() == before


def test_without_the_extra_signing_says_which_extra_and_an_unsigned_pack_still_verifies(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests.evidence.packs import make_pack

    unsigned = make_pack(tmp_path / "unsigned", None)
    signed = tmp_path / "signed"
    key = tmp_path / "k"
    keygen(key)
    make_pack(signed, key)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "cryptography" else real(name, *a)
    )
    assert main(["verify", str(unsigned)]) == 0
    capsys.readouterr()
    assert main(["verify", str(signed)]) == 2
    assert "needs cryptography, not installed: pip install 'xocdia-hil[evidence]'" in capsys.readouterr().err
    assert main(["evidence", "keygen", str(tmp_path / "k2")]) == 2
    assert main(["certify", "--evidence", str(tmp_path / "e"), "--sign-key", str(key)]) == 2
    assert "pip install 'xocdia-hil[evidence]'" in capsys.readouterr().err


def test_the_command_line_starts_without_importing_cryptography() -> None:
    code = (
        "import sys; from harness.cli import build_parser; build_parser(); "
        "import harness.cli.certify, harness.cli.evidence, harness.cli.verify; "
        "sys.exit(1 if 'cryptography' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0
