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
    ("chaotic", "xocdia-ascii", 7): "ddd07d2787cbb541f7eb0e8662da9c9c1d2aee43e371c79a516cd9d0ebd5764a",
    ("standard", "xocdia-ascii", 3): "eb5ebee86f083b621f728c7a2c354e3abf4c9e4d6780eafc0e1183457e5f63f9",
    ("", "xocdia-bus", 5): "2d8eafc435dd2f26eb0311cefe7c655140cfda9333b2f65c0cfa5c8f627a1a9d",
    ("", "xocdia-jsonl", 5): "fed372306a7113682399e8d27d329351d42ec882cd5be9bd112776bc29b674bd",
}


@pytest.mark.parametrize(("profile", "dialect", "seed"), sorted(GOLDEN))
def test_seeded_run_feed_is_pinned(profile: str, dialect: str, seed: int, tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    args = ["run", "--bench", BENCH, "--dialect", dialect, "--seed", str(seed)] + (
        ["--profile", profile] if profile else []
    )
    assert main([*args, "--rounds", "30", "--players", "6", "--record", str(feed)]) == 0
    assert hashlib.sha256(feed.read_bytes()).hexdigest() == GOLDEN[(profile, dialect, seed)]
