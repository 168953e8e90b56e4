"""``xocdia-hil rules-audit``: its JSON and text on the shipped documents, exit statuses, and one line with exit
status 2 for each kind of bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.rules.audit import ALLOWED_FINDINGS
from harness.rules.reading import DOCUMENTS_DIR, READINGS_DIR

EN = DOCUMENTS_DIR / "002_09b45934c135c856.txt"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["rules-audit", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_json_on_the_shipped_documents(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--json")
    data = json.loads(out)
    assert status == 1 and data["verdict"] == "FAIL"
    langs = {la["lang"]: la for la in data["languages"]}
    assert list(langs) == ["en", "es", "fa", "bn", "te"]
    en, bn, te, es = langs["en"], langs["bn"], langs["te"], langs["es"]
    assert en["differences"] == [] and en["file"] == EN.name
    assert en["paytable"]["big"] == {"odds": "0.96", "wins": [3, 4], "pushes": [2]}
    assert en["max_rtp_stated"] == "79/80" and en["rtp_implied"]["big"] == "79/80"
    assert bn["paytable"]["big"]["pushes"] == [] and bn["rtp_implied"]["small"] == "49/80"
    money = [(d["clause"], d["line"]) for d in bn["differences"] if d["kind"] == "money"]
    assert money == [("PAY-9", 37), ("PAY-10", 39)]
    assert all(d["quote"] and d["english"] for d in bn["differences"] if d["kind"] == "money")
    assert te["rtp_implied"]["even"] == "147/200"
    te_kinds = {(d["clause"], d["kind"]) for d in te["differences"]}
    assert {("PAY-8", "money"), ("NET-1", "extra"), ("DC-1", "missing"), ("ERR-1", "missing")} <= te_kinds
    assert ("DOC-1", "missing") in te_kinds and "NET-1" in te["clauses_present"] and "DC-1" not in te["clauses_present"]
    fmt = [d for d in es["differences"] if d["kind"] == "number-format"]
    assert [(d["clause"], d["line"]) for d in fmt] == [("DOC-2", 20)] and "2,8:1" in fmt[0]["quote"]
    assert es["number_format"] == {"decimal": ","}
    assert {(f["lang"], f["clause"]) for f in data["failing"]} == {("bn", "PAY-9"), ("bn", "PAY-10"), ("te", "PAY-8")}


def test_text_table_and_the_allow_list(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys)
    assert status == 1
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line[:4] in ("PAY-", "NET-", "DOC-")}
    assert rows["PAY-9"] == ["same", "same", "same", "differs", "same"]
    assert rows["PAY-8"] == ["same", "same", "same", "same", "differs"]
    assert rows["NET-1"] == ["—", "—", "—", "—", "extra"] and rows["DOC-1"][3:] == ["missing", "missing"]
    assert rows["DOC-2"][1] == "differs"
    assert "003_0bbbd212ded4045c.txt line 37: | বড় |" in out
    assert out.rstrip().endswith("verdict: FAIL: bn PAY-9 money, bn PAY-10 money, te PAY-8 money")
    status, out, _ = run(capsys, "--allow", str(ALLOWED_FINDINGS))
    assert status == 0 and "bn PAY-9 money [allowed]" in out and "verdict: PASS" in out


def test_one_document_is_compared_with_the_shipped_english(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--json", str(DOCUMENTS_DIR / "001_9d421ee251aace97.txt"))
    data = json.loads(out)
    assert status == 0 and [la["lang"] for la in data["languages"]] == ["fa"] and data["english"] == EN.name


def readings_copy(tmp_path: Path, lang: str, old: str, new: str) -> Path:
    folder = tmp_path / "readings"
    shutil.copytree(READINGS_DIR, folder)
    path = folder / f"{lang}.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return folder


def bad(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status, out, err = run(capsys, *args)
    assert status == 2 and out == "" and err.count("\n") == 1, (status, out, err)
    assert err.startswith("xocdia-hil: error: ")
    return err


def test_a_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    err = bad(capsys, str(tmp_path / "gone.txt"))
    assert f"cannot read rules document {tmp_path / 'gone.txt'}: No such file or directory" in err


def test_a_document_in_an_unknown_language(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = tmp_path / "rules-el.txt"
    doc.write_text("Κανόνες του παιχνιδιού Xoc Dia\nΤο παιχνίδι παίζεται με τέσσερα πούλια.\n", encoding="utf-8")
    assert "rules-el.txt: unknown language: its letters are Greek, no reading is" in bad(capsys, str(doc))


def test_a_document_with_no_reading(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = tmp_path / "rules-2027.txt"
    shutil.copyfile(EN, doc)
    err = bad(capsys, str(doc))
    assert "rules-2027.txt: no reading for this document (its letters are Latin, like the English and Spanish" in err


@pytest.mark.parametrize(
    ("lang", "old", "new", "message"),
    [
        (
            "en",
            'wins: {line: 17, text: "four red’s"',
            'wins: {line: 18, text: "four red’s"',
            "en.yaml: bets.four_red.wins: line 18 does not say 'four red’s'; it reads '|'",
        ),
        ("en", "odds: {line: 20}", "odds: {line: 19}", "bets.three_red.odds.line: line 19 has no number written as"),
        ("en", "max_rtp: {line: 46}", "max_rtp: {line: 99}", "max_rtp.line: line 99 is past the end of the document"),
        (
            "en",
            'pushes: {line: 37, text: "Bets are returned when the outcome is w w r r"}',
            'pushes: {line: 37, text: "Bets are returned when the outcome is w w r r", reds: [3]}',
            "bets.big.pushes.reds: the phrase shows patterns of [2] reds, the reading says [3]",
        ),
        ("es", 'decimal: ","', 'decimal: "."', "numbers.decimal: line 20 writes 2,8, but the reading says decimals"),
        ("bn", "script: BENGALI", "script: TELUGU", "bn.yaml: script: the document is written in BENGALI letters"),
        ("te", "effect: continue", "effect: carry_on", "clauses.NET-1.effect: must be one of rearrange"),
    ],
    ids=["wrong-line", "no-odds", "past-the-end", "wrong-reds", "wrong-decimal", "wrong-script", "bad-effect"],
)
def test_a_reading_that_does_not_say_what_the_document_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lang: str, old: str, new: str, message: str
) -> None:
    folder = readings_copy(tmp_path, lang, old, new)
    assert message in bad(capsys, "--readings", str(folder))


def test_an_allow_list_may_not_allow_the_english(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    allow = tmp_path / "allow.yaml"
    allow.write_text("allowed:\n  - {language: en, clause: PAY-9, kind: money, reason: x}\n", encoding="utf-8")
    assert "allowed[0].language: the English document prevails" in bad(capsys, "--allow", str(allow))
    allow.write_text("allowed:\n  - {language: bn, clause: PAY-9, kind: mony, reason: x}\n", encoding="utf-8")
    assert "allowed[0].kind: must be one of money, rtp" in bad(capsys, "--allow", str(allow))
