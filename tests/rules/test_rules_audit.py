"""The rules-documents audit on the shipped documents, on mutated copies, and against a mutated harness paytable."""

from __future__ import annotations

import hashlib
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from harness.cert.steps import documents as steps
from harness.cert.steps.params import PERCENT
from harness.judge.paytable import PAYTABLE, PayRule
from harness.rules.audit import (
    ALLOWED_FINDINGS,
    AuditResult,
    LanguageAudit,
    load_allow_list,
    run_audit,
    shipped_documents,
)
from harness.rules.compare import Difference
from harness.rules.reading import DOCUMENTS_DIR, READINGS_DIR
from simulator.bets import BetType

EN, ES, FA, BN, TE = (
    "002_09b45934c135c856.txt",
    "000_cc6ddf1757fd4a27.txt",
    "001_9d421ee251aace97.txt",
    "003_0bbbd212ded4045c.txt",
    "004_b2cde86b0e962e49.txt",
)
SHA256 = {
    EN: "e63b58210aa9465b75fba07751f997207cecf97715bce98d8aa3078c13f0b0ef",
    ES: "d07257828471fc67915c12f60dbb39b95a9687920aa78a882c4dd7b6ec84021a",
    FA: "5e92b4847379e58ae31591b87a7f66fe31d2e1c46f5169dd4e99c8e84e768d61",
    BN: "d9e8058adae3aa8025b5c59e8db8655323f13815816fb70fde007fb6c726e08f",
    TE: "694c21ac15b4b88fa5647fe08747b85ee310a88ece3a27f39010a6cf41aa4947",
}


@pytest.fixture(scope="module")
def shipped() -> AuditResult:
    return run_audit()


def lang(result: AuditResult, code: str) -> LanguageAudit:
    return next(la for la in result.languages if la.lang == code)


def diffs(result: AuditResult, code: str, kind: str) -> dict[str, Difference]:
    return {d.clause: d for d in lang(result, code).differences if d.kind == kind}


def copy_documents(tmp_path: Path) -> Path:
    folder = tmp_path / "documents"
    folder.mkdir()
    for path in shipped_documents():
        shutil.copyfile(path, folder / path.name)
    return folder


def edit(path: Path, line: int, old: str, new: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    assert old in lines[line - 1], lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    path.write_text("\n".join(lines), encoding="utf-8")


def test_the_shipped_documents_are_the_published_bytes() -> None:
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in shipped_documents()} == SHA256
    assert sorted(p.name for p in READINGS_DIR.glob("*.yaml")) == [
        "bn.yaml",
        "en.yaml",
        "es.yaml",
        "fa.yaml",
        "te.yaml",
    ]


def test_five_languages_the_english_first_and_no_difference_from_the_certified_rules(shipped: AuditResult) -> None:
    assert [la.lang for la in shipped.languages] == ["en", "es", "fa", "bn", "te"]
    en = lang(shipped, "en")
    assert en.differences == ()
    assert {b: (t.odds, t.wins, t.pushes) for b, t in en.rules.bets.items()} == {
        b: (r.odds, r.wins, r.pushes) for b, r in PAYTABLE.items()
    }
    assert en.rules.max_rtp == Fraction(79, 80) == max(en.rtp_implied.values())


def test_bengali_big_and_small_lose_on_two_reds_quoted_with_their_lines(shipped: AuditResult) -> None:
    money = diffs(shipped, "bn", "money")
    assert set(money) == {"PAY-9", "PAY-10"}
    big, small = money["PAY-9"], money["PAY-10"]
    assert (big.line, small.line) == (37, 39) and big.failing and small.failing
    assert "ফলাফল w w r r" in big.quote and "Bets are returned when the outcome is w w r r" in big.english
    assert "no push" in big.detail and "returned on 2 red" in big.detail
    bn = lang(shipped, "bn")
    assert bn.rules.bets[BetType.BIG].pushes == frozenset()
    assert bn.rtp_implied[BetType.BIG] == bn.rtp_implied[BetType.SMALL] == Fraction(49, 80)  # 61.25 %
    assert diffs(shipped, "bn", "rtp")["RTP-1"].detail.endswith("implies at best 98 % (odd, even)")
    assert set(diffs(shipped, "bn", "missing")) == {"DOC-1"}
    assert diffs(shipped, "bn", "wording")["ERR-2"].line == 44


def test_telugu_even_missing_clauses_and_the_network_clause(shipped: AuditResult) -> None:
    even = diffs(shipped, "te", "money")["PAY-8"]
    assert set(diffs(shipped, "te", "money")) == {"PAY-8"}
    assert even.line == 35 and "సమాన సంఖ్యలో" in even.quote and even.failing
    assert lang(shipped, "te").rtp_implied[BetType.EVEN] == Fraction(147, 200)  # 73.5 %
    assert diffs(shipped, "te", "inconsistent")["PAY-8"].detail.endswith("which its description does not make win")
    missing = diffs(shipped, "te", "missing")
    assert set(missing) == {"DC-1", "DC-2", "DC-3", "ERR-1", "ERR-2", "ERR-3", "DOC-1"}
    assert missing["DOC-1"].line is None and missing["DOC-1"].english_line == 47
    net = diffs(shipped, "te", "extra")["NET-1"]
    assert net.line == 42 and "వీడియో" in net.quote
    assert diffs(shipped, "te", "wording")["PAY-8"].english == "Even"


def test_spanish_decimal_commas_are_a_number_format_difference_not_a_money_one(shipped: AuditResult) -> None:
    fmt = diffs(shipped, "es", "number-format")["DOC-2"]
    assert (fmt.line, fmt.english_line) == (20, 20) and "2,8:1" in fmt.quote and "2.8:1" in fmt.english
    assert "US format (line 47)" in fmt.detail and not fmt.failing
    assert {d.kind for d in lang(shipped, "es").differences} == {"number-format", "extra"}
    es = lang(shipped, "es")
    assert es.rules.bets[BetType.THREE_RED].odds == Fraction(14, 5) and es.rules.max_rtp == Fraction(79, 80)


def test_persian_has_only_wording_notes(shipped: AuditResult) -> None:
    assert set(diffs(shipped, "fa", "wording")) == {"ERR-1", "SH-3", "SH-5"}
    assert {d.kind for d in lang(shipped, "fa").differences} == {"wording"}


def test_the_verdict_fails_on_the_money_differences_and_the_allow_list_accepts_them(shipped: AuditResult) -> None:
    assert shipped.verdict == "FAIL"
    assert {(d.lang, d.clause) for d in shipped.failing} == {("bn", "PAY-9"), ("bn", "PAY-10"), ("te", "PAY-8")}
    allowed = run_audit(allow=load_allow_list(ALLOWED_FINDINGS))
    assert allowed.verdict == "PASS" and allowed.unused == ()
    assert {(d.lang, d.clause, d.kind) for d in allowed.allowed} >= {("bn", "PAY-9", "money"), ("te", "PAY-8", "money")}


@pytest.mark.parametrize(
    ("line", "old", "new", "clause"),
    [(17, "14:1", "15:1", "PAY-1"), (38, "0.96:1", "0.95:1", "PAY-9"), (46, "98.75%", "97.75%", "RTP-1")],
)
def test_a_number_edited_in_the_english_fails_the_audit_naming_the_clause(
    tmp_path: Path, line: int, old: str, new: str, clause: str
) -> None:
    folder = copy_documents(tmp_path)
    edit(folder / EN, line, old, new)
    result = run_audit(sorted(folder.glob("*.txt")), allow=load_allow_list(ALLOWED_FINDINGS))
    assert result.verdict == "FAIL"
    english = [d for d in result.failing if d.lang == "en"]
    assert (english[0].clause, english[0].kind, english[0].line) == (clause, "money", line)
    assert new in english[0].quote
    # the RTP the edited paytable implies no longer matches the stated one (or the stated one moved)
    assert {d.clause for d in english} <= {clause, "RTP-1"}
    with pytest.raises(AssertionError, match=clause):
        ctx = steps.RulesContext(result)
        steps.english_paytable(ctx) if clause != "RTP-1" else steps.english_max_rtp(ctx, PERCENT("98.75"))


def test_a_mutant_harness_paytable_fails_the_audit_and_doc_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PAYTABLE, BetType.BIG, PayRule("PAY-9", Fraction(24, 25), frozenset({2, 3, 4})))
    result = run_audit([DOCUMENTS_DIR / EN])
    assert result.verdict == "FAIL"
    assert [(d.clause, d.kind) for d in result.failing] == [("PAY-9", "money"), ("RTP-1", "money")]
    ctx = steps.RulesContext(result)
    with pytest.raises(AssertionError, match="en PAY-9 money"):
        steps.english_paytable(ctx)
    with pytest.raises(AssertionError, match="RTP-1"):
        steps.english_max_rtp(ctx, PERCENT("98.75"))


def test_a_translation_mutant_fails_the_translations_scenario(tmp_path: Path) -> None:
    folder = copy_documents(tmp_path)
    edit(folder / FA, 20, "2.8 به 1", "3.8 به 1")
    result = run_audit(sorted(folder.glob("*.txt")), allow=load_allow_list(ALLOWED_FINDINGS))
    assert [(d.lang, d.clause, d.kind, d.line) for d in result.failing] == [("fa", "PAY-2", "money", 20)]
    with pytest.raises(AssertionError, match="fa PAY-2 money"):
        steps.translations_paytable(steps.RulesContext(result))
    without_allow_list = run_audit()
    with pytest.raises(AssertionError, match="bn PAY-9 money"):
        steps.translations_paytable(steps.RulesContext(without_allow_list))


def test_spanish_written_with_points_is_not_reported_by_the_doc_2_scenario(tmp_path: Path) -> None:
    folder = copy_documents(tmp_path)
    readings = tmp_path / "readings"
    shutil.copytree(READINGS_DIR, readings)
    es = folder / ES
    es.write_text(
        es.read_text(encoding="utf-8")
        .replace(",8:1", ".8:1")
        .replace(",5:1", ".5:1")
        .replace("0,96", "0.96")
        .replace("98,75", "98.75"),
        encoding="utf-8",
    )
    reading = readings / "es.yaml"
    reading.write_text(reading.read_text(encoding="utf-8").replace('decimal: ","', 'decimal: "."'), encoding="utf-8")
    result = run_audit([es], readings)
    assert diffs(result, "es", "number-format") == {}
    ctx = steps.RulesContext(result)
    steps.paytable_equals_english(ctx, "Spanish")
    with pytest.raises(AssertionError, match="number-format findings"):
        steps.reported_number_format(ctx, "Spanish", ",")
    steps.reported_number_format(steps.RulesContext(run_audit()), "Spanish", ",")


def test_an_english_reading_without_a_bet_fails_naming_its_clause(tmp_path: Path) -> None:
    readings = tmp_path / "readings"
    shutil.copytree(READINGS_DIR, readings)
    en = readings / "en.yaml"
    text = en.read_text(encoding="utf-8")
    start, end = text.index("  four_red:\n"), text.index("  three_red:\n")
    en.write_text(text[:start] + text[end:], encoding="utf-8")
    result = run_audit([DOCUMENTS_DIR / EN], readings)
    assert [(d.clause, d.kind) for d in result.failing] == [("PAY-1", "missing")]
    with pytest.raises(AssertionError, match="en PAY-1 missing"):
        steps.english_paytable(steps.RulesContext(result))
