"""``xocdia-hil rtp`` and ``xocdia-hil audit`` through the real CLI entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.audit import _verdict
from harness.stats.checks import FairnessCheck
from harness.stats.defects import defect
from harness.stats.fairness import judge
from harness.stats.settlement import draw_patterns, make_generator
from tests.stats.stats_helpers import WriteRows, outcome_rows


def test_rtp_json_gives_exact_decimal_strings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rtp", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    big = data["bets"]["big"]
    assert (big["rtp"], big["win"], big["push"], big["lose"]) == ("0.9875", "0.3125", "0.375", "0.3125")
    assert big["sigma"] == pytest.approx((19211 / 32000) ** 0.5)
    assert data["bets"]["four_red"]["rtp"] == "0.9375"
    assert data["max_rtp"] == {"rtp": "0.9875", "bets": ["big", "small"]}


def test_rtp_with_bias_and_simulation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rtp", "--json", "--p-red", "0.51", "--simulate", "200000", "--seed", "4"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert float(data["bets"]["big"]["rtp"]) == pytest.approx(1.016890, abs=1e-6)
    assert data["simulation"]["rounds"] == 200_000
    assert sum(data["simulation"]["red_counts"]) == 200_000


def test_rtp_text_names_rtp_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rtp"]) == 0
    assert "RTP-1: maximum RTP 98.7500 % (big, small)" in capsys.readouterr().out


def test_bad_p_red_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["rtp", "--p-red", "1.5"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--p-red" in err and "strictly between 0 and 1" in err


def test_audit_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(tmp_path / "none.csv")]) == 2
    assert capsys.readouterr().err.strip() == f"xocdia-hil: error: {tmp_path / 'none.csv'}: no such file"


def test_audit_plots_folder_that_cannot_be_made_is_one_line_exit_2(
    write_outcomes: WriteRows, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_outcomes("OUTCOMES.csv", outcome_rows([1, 2, 3]))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    assert main(["audit", str(path), "--plots", str(blocker / "plots")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"xocdia-hil: error: --plots {blocker / 'plots'}: cannot create the directory")
    assert "\n" not in err


def test_audit_bad_row_names_line_and_column(write_outcomes: WriteRows, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_outcomes("OUTCOMES.csv", [*outcome_rows([1, 2, 3]), ["r9", "settled", "RRRR", 9, 0, 1]])
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "line 5, column reds" in err and "\n" not in err


def test_audit_console_script_exit_status_and_json(write_outcomes: WriteRows, tmp_path: Path) -> None:
    pats = [int(x) for x in draw_patterns(make_generator(31), 3_000, [0.6] * 4)]
    path = write_outcomes("OUTCOMES.csv", outcome_rows(pats))
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "audit", str(path), "--json", "--plots", str(tmp_path / "p")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["passed"] is False and data["monitor"]["alarm"]["direction"] == "red"
    assert data["verdict"] == "FAIL" and data["exit_code"] == 1 and data["reason"].startswith("FAIL: ")
    tests = {t["name"]: t for t in data["tests"]}
    assert tests["token_bias"]["rejected"] and tests["token_bias"]["adjusted_p"] <= data["alpha"]
    assert tests["frequency_t2"]["tokens"] == [2] and tests["frequency_t2"]["weight"] == 5
    assert {"step", "threshold", "blocked_by", "looks_for"} <= set(tests["repeat"])
    assert (tmp_path / "p" / "monitor.png").is_file()


def test_audit_of_too_few_rounds_is_insufficient_with_its_own_exit_code(
    write_outcomes: WriteRows, capsys: pytest.CaptureFixture[str]
) -> None:
    pats = [int(x) for x in draw_patterns(make_generator(32), 500, [0.5] * 4)]
    path = write_outcomes("OUTCOMES.csv", outcome_rows(pats))
    assert main(["audit", str(path)]) == 3
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("INSUFFICIENT: 500 settled rounds, fewer than the 10,000 a certification needs")


def test_a_fail_names_the_test_token_and_p_value_on_the_last_line(
    write_outcomes: WriteRows, capsys: pytest.CaptureFixture[str]
) -> None:
    pats = [int(x) for x in defect("xor_0.10").generate(make_generator(33), 1, 10_000)[0]]
    path = write_outcomes("OUTCOMES.csv", outcome_rows(pats))
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out.rstrip().splitlines()
    assert out[-1].startswith("FAIL: serial_t3 (token 3: one token follows a rule of the previous round's pattern)")
    assert "Holm-adjusted p = " in out[-1] and "cannot be certified" in out[-1]
    assert any(line.startswith("rejected: serial_t3") for line in out)


def test_a_test_under_its_threshold_but_not_reached_says_why() -> None:
    judged = {
        t.name: t
        for t in judge(
            [FairnessCheck(n, 0.0, None, p, "", "pair") for n, p in (("x", 0.004), ("y", 0.0045), ("z", 0.5))]
        )
    }
    assert _verdict(judged["y"]) == "ok: p under its threshold, but the step-down stopped at x, so it is not tested"
    assert _verdict(judged["x"]) == "ok" and _verdict(judged["z"]) == "ok"
