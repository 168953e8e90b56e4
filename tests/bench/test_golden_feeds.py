"""Seeded in-process runs are pinned byte for byte: the SHA-256 of the bench event feed (``run --record``: every
frame on every line, every server event, bet and note, with its bench time) of a few seeded runs. The bench's
speed work must change none of them (docs/performance.md); a change to the bench's timing or event order that
moves one is a deliberate, reviewed change of these pins (as tests/faults/test_golden_histories.py for faults)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from harness.cli import main

BENCH = str(Path(__file__).resolve().parents[2] / "fixtures" / "benches" / "in-process.yaml")
# (profile: "" for the bench's own, dialect, seed): SHA-256 of the feed of 30 rounds with 6 seats
GOLDEN = {
    ("chaotic", "xocdia-ascii", 7): "19917d486f5eeeb646e876fd0cb268411d14af562e4fc80bd21fc933ee4c30a0",
    ("standard", "xocdia-ascii", 3): "2da467f422ffec4940ac33ae48a228ddc944b63610b1a0417a43bf0a7cfa3358",
    ("", "xocdia-bus", 5): "ccf2d5ac14ca4d4346fc1926a2e12b206926f7d73da52be511f01ffd16769612",
    ("", "xocdia-jsonl", 5): "afaa308dbe8744f0d41bdc4c2da3c4d2ef6f5538cef43ea0e79db6fb032d90f7",
}


@pytest.mark.parametrize(("profile", "dialect", "seed"), sorted(GOLDEN))
def test_seeded_run_feed_is_pinned(profile: str, dialect: str, seed: int, tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    args = ["run", "--bench", BENCH, "--dialect", dialect, "--seed", str(seed)] + (
        ["--profile", profile] if profile else []
    )
    assert main([*args, "--rounds", "30", "--players", "6", "--record", str(feed)]) == 0
    assert hashlib.sha256(feed.read_bytes()).hexdigest() == GOLDEN[(profile, dialect, seed)]
