"""``verify_pack``: every file's digest, files added after the run, the chain, the signature and the amended
versions, each mismatch named (on packs sealed by the pack writer's own ``seal``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.evidence.digest import sha256_file
from harness.evidence.manifest import PackError
from harness.evidence.pack import previous_version
from harness.evidence.signing import keygen
from harness.evidence.verify import summary, verify_pack
from tests.evidence.packs import make_pack


def _flip(path: Path, at: int = 5) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_an_untouched_signed_pack_verifies_against_its_key(tmp_path: Path, key_pair: tuple[Path, Path]) -> None:
    pack = make_pack(tmp_path / "p", key_pair[0])
    result = verify_pack(pack, key_pair[1])
    assert result.ok, result.problems
    assert result.feed_lines == 3 and result.checked_files == 5
    assert "matches --key" in result.signature
    text = "\n".join(summary(result))
    assert "VERIFIED" in text and "report id: r-1" in text and "xocdia-server 0.1.0" in text


@pytest.mark.parametrize(
    "name", ["feed.jsonl", "verdicts.json", "results/trace.txt", "identification/start.json", "identification/end.json"]
)
def test_one_byte_changed_in_any_listed_file_is_named(tmp_path: Path, key_pair: tuple[Path, Path], name: str) -> None:
    pack = make_pack(tmp_path / "p", key_pair[0])
    _flip(pack / name)
    result = verify_pack(pack, key_pair[1])
    if name == "feed.jsonl":  # the chain names the line
        assert result.problems[0].startswith("feed.jsonl line 1: "), result.problems
        assert result.problems[0].endswith("; the file's SHA-256 does not match the manifest")
    else:
        assert result.problems == (f"{name}: SHA-256 does not match the manifest",)


def test_a_deleted_file_and_an_added_one_are_named(tmp_path: Path, key_pair: tuple[Path, Path]) -> None:
    pack = make_pack(tmp_path / "p", key_pair[0])
    (pack / "results" / "trace.txt").unlink()
    (pack / "notes.txt").write_text("added later", encoding="utf-8")
    problems = verify_pack(pack, key_pair[1]).problems
    assert "results/trace.txt: missing (listed in the manifest)" in problems
    assert "notes.txt: not listed in the manifest (added after the run)" in problems


def test_an_edited_manifest_breaks_the_signature(tmp_path: Path, key_pair: tuple[Path, Path]) -> None:
    pack = make_pack(tmp_path / "p", key_pair[0])
    manifest = pack / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"PASS"', b'"FAIL"', 1))
    assert verify_pack(pack, key_pair[1]).problems == ("manifest.json: the signature does not match its bytes",)
    assert not verify_pack(pack).ok  # without --key the embedded key still checks the bytes


def test_a_pack_signed_by_another_key_fails_against_the_labs(tmp_path: Path, key_pair: tuple[Path, Path]) -> None:
    other = tmp_path / "other.key"
    keygen(other)
    pack = make_pack(tmp_path / "p", other)
    result = verify_pack(pack, key_pair[1])
    assert len(result.problems) == 1 and "not by the key given (--key)" in result.problems[0]
    assert verify_pack(pack).ok and "not checked against a trusted key" in verify_pack(pack).signature


def test_an_unsigned_pack_verifies_its_digests_but_not_against_a_key(
    tmp_path: Path, key_pair: tuple[Path, Path]
) -> None:
    pack = make_pack(tmp_path / "p", None)
    assert verify_pack(pack).ok and verify_pack(pack).signature == "unsigned"
    assert verify_pack(pack, key_pair[1]).problems == (
        "manifest.sig: missing; the pack is not signed (--key was given)",
    )


def test_a_feed_line_changed_and_resealed_without_the_key_is_caught(
    tmp_path: Path, key_pair: tuple[Path, Path]
) -> None:
    """Someone who edits a feed line and fixes the manifest's file digest still breaks the chain head and the
    signature."""
    pack = make_pack(tmp_path / "p", key_pair[0])
    feed = pack / "feed.jsonl"
    feed.write_bytes(feed.read_bytes().replace(b"step one", b"step 0ne"))
    manifest = json.loads((pack / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["feed.jsonl"] = sha256_file(feed)
    (pack / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    problems = verify_pack(pack, key_pair[1]).problems
    assert problems[0] == "manifest.json: the signature does not match its bytes"
    assert problems[1].startswith("feed.jsonl line 2: its digest does not match the next line's prev"), problems
    assert len(problems) == 2


def test_the_amended_version_is_followed_when_it_lies_beside(tmp_path: Path, key_pair: tuple[Path, Path]) -> None:
    old = make_pack(tmp_path / "v1", key_pair[0], "r-1")
    new = make_pack(tmp_path / "v2", key_pair[0], "r-2", amends=previous_version(old))
    result = verify_pack(new, key_pair[1])
    assert result.ok and result.previous == "amends r-1 (version 1): v1, verified"
    _flip(old / "verdicts.json")
    assert verify_pack(new, key_pair[1]).problems == (
        "v1 (the amended version): verdicts.json: SHA-256 does not match the manifest",
    )
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(new, moved / "v2")
    result = verify_pack(moved / "v2", key_pair[1])
    assert result.ok and "not found beside this pack, not verified" in result.previous


def test_a_folder_without_a_manifest_is_not_a_pack(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="not an evidence pack"):
        verify_pack(tmp_path)


def test_a_manifest_that_no_longer_parses_is_a_mismatch_not_a_crash(
    tmp_path: Path, key_pair: tuple[Path, Path]
) -> None:
    """Signed, the changed bytes are named first as the signature's mismatch (the cause), then the parse error;
    unsigned, the parse error alone."""
    signed = make_pack(tmp_path / "p", key_pair[0])
    unsigned = make_pack(tmp_path / "u", None)
    for pack in (signed, unsigned):
        (pack / "manifest.json").write_bytes((pack / "manifest.json").read_bytes()[:-20])
    result = verify_pack(signed, key_pair[1])
    assert not result.ok and result.problems[0] == "manifest.json: the signature does not match its bytes"
    assert result.problems[1].startswith(f"{signed / 'manifest.json'}: not JSON")
    assert "NOT VERIFIED" in summary(result)[0] and result.signature.startswith("signature INVALID")
    alone = verify_pack(unsigned)
    assert len(alone.problems) == 1 and alone.problems[0].startswith(f"{unsigned / 'manifest.json'}: not JSON")


def test_an_amended_version_whose_manifest_was_replaced_is_named(tmp_path: Path) -> None:
    """An unsigned previous version still verifies alone after its manifest is edited; the version that amends it
    recorded the digest of the manifest it amended."""
    old = make_pack(tmp_path / "v1", None, "r-1")
    new = make_pack(tmp_path / "v2", None, "r-2", amends=previous_version(old))
    manifest = old / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"PASS"', b'"FAIL"', 1))
    assert verify_pack(old).ok
    assert verify_pack(new).problems == ("v1/manifest.json: its digest is not the one this pack's amends records",)
