"""CSV readers on real files: both formats, format detection, and errors that name the line and column."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stats.readers import (
    OUTCOME_COLUMNS,
    RecordError,
    detect_format,
    read_bets,
    read_outcomes,
    rounds_from_bets,
    to_arrays,
)
from simulator.bets import BetType
from tests.stats.stats_helpers import WriteRows, csv_writer, faces_of, outcome_rows


def bet_row(bet_id: str, round_id: str, **over: object) -> list[object]:
    row: dict[str, object] = {
        "bet_id": bet_id,
        "round_id": round_id,
        "player_id": "p1",
        "placed_at": "2026-11-30T01:00:00+00:00",
        "settled_at": "2026-11-30T01:00:30+00:00",
        "bet_type": "big",
        "wagered": 100,
        "result": "win",
        "returned": 196,
        "round_status": "settled",
        "outcome": "RRRW",
        "reds": 3,
        "balance_before": 1000,
        "balance_after": 1096,
    }
    row.update(over)
    return list(row.values())


def test_outcomes_round_trip(write_outcomes: WriteRows) -> None:
    rows = [*outcome_rows([0b0111, 0b0000]), ["r3", "void", "", "", 2, "2026-11-30T01:02:03Z"]]
    path = write_outcomes("OUTCOMES.csv", rows)
    assert detect_format(path) == "outcomes"
    rounds = read_outcomes(path)
    assert [(r.status, r.faces, r.reds, r.reshakes) for r in rounds] == [
        ("settled", "RRRW", 3, 0),
        ("settled", "WWWW", 0, 0),
        ("void", None, None, 2),
    ]
    arrays = to_arrays(rounds)
    assert arrays.patterns.tolist() == [0b0111, 0, -1]
    assert arrays.identified


def test_settled_round_without_faces_is_not_identified(write_outcomes: WriteRows) -> None:
    path = write_outcomes("o.csv", [["r1", "settled", "", 2, 0, 1.0]])
    assert not to_arrays(read_outcomes(path)).identified


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            ["r1", "won", "RRRR", 4, 0, 1],
            "line 2, column status: expected one of settled|void|cancelled, got 'won'",
        ),
        (["r1", "settled", "RRXR", 3, 0, 1], "line 2, column faces: expected 4 characters of R/W"),
        (["r1", "settled", "RRRW", 2, 0, 1], "line 2, column reds: expected 3 (the R count of faces RRRW)"),
        (["r1", "settled", "", 7, 0, 1], "line 2, column reds: expected a whole number 0..4, got '7'"),
        (["r1", "void", "", 2, 0, 1], "line 2, column reds: expected empty unless settled"),
        (["r1", "settled", "RRRR", 4, -1, 1], "line 2, column reshakes: expected a whole number >= 0"),
        (
            ["r1", "settled", "RRRR", 4, 0, "yesterday"],
            "line 2, column ended_at: expected a number of seconds",
        ),
    ],
)
def test_bad_outcome_rows_are_named(write_outcomes: WriteRows, row: list[object], message: str) -> None:
    path = write_outcomes("bad.csv", [row])
    with pytest.raises(RecordError, match=message.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
        read_outcomes(path)


def test_missing_column_and_unknown_header(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("round_id,status,faces,reds,ended_at\n")
    with pytest.raises(RecordError, match=r"neither OUTCOMES\.csv"):
        detect_format(path)
    with pytest.raises(RecordError, match="missing column"):
        read_outcomes(path)


def test_empty_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(RecordError, match="empty file"):
        detect_format(tmp_path / "empty.csv")
    with pytest.raises(RecordError, match="cannot read"):
        detect_format(tmp_path / "nope.csv")


def test_bets_file_and_rounds_derived_from_it(write_bets: WriteRows) -> None:
    path = write_bets(
        "BETS.csv",
        [
            bet_row("b1", "r1"),
            bet_row("b2", "r1", bet_type="odd", result="win", returned=196),
            bet_row("b3", "r2", round_status="void", outcome="", reds="", result="refund", returned=100),
            bet_row("b4", "r3", round_status="in_progress", outcome="", reds="", result="pending", returned=0),
        ],
    )
    assert detect_format(path) == "bets"
    bets = read_bets(path)
    assert [b.bet_type for b in bets] == [BetType.BIG, BetType.ODD, BetType.BIG, BetType.BIG]
    rounds = rounds_from_bets(bets)
    assert [(r.round_id, r.status, r.reds) for r in rounds] == [("r1", "settled", 3), ("r2", "void", None)]


def test_bets_of_one_round_that_disagree_are_refused(write_bets: WriteRows) -> None:
    path = write_bets("BETS.csv", [bet_row("b1", "r1"), bet_row("b2", "r1", outcome="RRRR", reds=4)])
    with pytest.raises(RecordError, match="round r1: bet b2 disagrees"):
        rounds_from_bets(read_bets(path))


@pytest.mark.parametrize(
    ("over", "column"),
    [({"bet_type": "five_red"}, "bet_type"), ({"wagered": "1.5"}, "wagered"), ({"result": "won"}, "result")],
)
def test_bad_bet_rows_are_named(write_bets: WriteRows, over: dict[str, object], column: str) -> None:
    path = write_bets("BETS.csv", [bet_row("b1", "r1"), bet_row("b2", "r1", **over)])
    with pytest.raises(RecordError, match=f"line 3, column {column}"):
        read_bets(path)


def test_a_live_servers_in_progress_row_is_skipped(write_outcomes: WriteRows) -> None:
    path = write_outcomes("OUTCOMES.csv", [*outcome_rows([0b0011]), ["r2", "in_progress", "", "", 0, ""]])
    assert [r.round_id for r in read_outcomes(path)] == ["r1"]


round_strategy = st.tuples(st.sampled_from(["settled", "void", "cancelled"]), st.integers(0, 15), st.integers(0, 5))


@settings(max_examples=40, deadline=None)
@given(st.lists(round_strategy, max_size=30))
def test_outcome_rows_read_back_as_written(rounds: list[tuple[str, int, int]]) -> None:
    rows: list[list[object]] = []
    for i, (status, pattern, reshakes) in enumerate(rounds):
        settled = status == "settled"
        faces = faces_of(pattern) if settled else ""
        rows.append([f"r{i}", status, faces, pattern.bit_count() if settled else "", reshakes, i * 1.5])
    with tempfile.TemporaryDirectory() as tmp:
        path = csv_writer(Path(tmp), OUTCOME_COLUMNS)("OUTCOMES.csv", rows)
        back = read_outcomes(path)
    assert [(r.status, r.faces or "", r.reds, r.reshakes) for r in back] == [
        (status, faces_of(p) if status == "settled" else "", p.bit_count() if status == "settled" else None, k)
        for status, p, k in rounds
    ]
