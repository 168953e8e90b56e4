"""pytest-bdd steps for ``features/documents.feature``: the published rules documents, audited.

The steps run the rules-documents audit (:func:`harness.rules.audit.run_audit`) on the documents shipped in
``fixtures/rules/documents/`` and assert on its result; the audit's full text report is attached to the allure
report (and printed, so pytest shows it with ``-rA`` or on failure), allowed findings included.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import pytest
from pytest_bdd import parsers, then, when

from harness.files import shipped_path
from harness.rules.audit import ENGLISH, AuditResult, LanguageAudit, load_allow_list, run_audit
from harness.rules.compare import Difference
from harness.rules.report import to_text

_MONEY = ("money", "missing")


@dataclass
class RulesContext:
    """What the steps of one scenario share: the audit's result."""

    result: AuditResult | None = None

    def audited(self) -> AuditResult:
        assert self.result is not None, "the rules documents have not been audited in this scenario"
        return self.result

    def language(self, name: str) -> LanguageAudit:
        for lang in self.audited().languages:
            if name in (lang.lang, lang.rules.reading.name):
                return lang
        raise AssertionError(f"no {name} document was audited")


@pytest.fixture
def rules_context() -> RulesContext:
    return RulesContext()


def _audit(ctx: RulesContext, allow_list: str | None) -> None:
    allow = load_allow_list(shipped_path(allow_list)) if allow_list else ()
    ctx.result = result = run_audit(allow=allow)
    text = to_text(result)
    print(text)
    try:
        import allure
    except ImportError:  # pragma: no cover - allure-pytest is a test dependency
        return
    allure.attach(text, name="rules-audit", attachment_type=allure.attachment_type.TEXT)


@when("the shipped rules documents are audited")
def audited(rules_context: RulesContext) -> None:
    """Run the rules-documents audit on the five shipped documents; its report is attached."""
    _audit(rules_context, None)


@when(parsers.parse("the shipped rules documents are audited with the allow-list {path}"))
def audited_with_allow_list(rules_context: RulesContext, path: str) -> None:
    """Run the audit with an allow-list (a path from the repository root): the findings it names are
    reported as allowed and do not fail."""
    _audit(rules_context, path)


def _lines(diffs: list[Difference]) -> str:
    return "; ".join(f"{d.lang} {d.clause} {d.kind}: {d.detail} (line {d.line}: {d.quote!r})" for d in diffs)


@then("the English document's paytable equals the certified paytable")
def english_paytable(rules_context: RulesContext) -> None:
    """Every bet of the English document has the odds, winning and push outcomes of the harness paytable."""
    en = rules_context.language(ENGLISH)
    diffs = [d for d in en.differences if d.clause.startswith("PAY-") and d.kind in _MONEY]
    assert not diffs, f"the English document contradicts the certified paytable: {_lines(diffs)}"
    assert len(en.rules.bets) == 10, f"the English document lists {len(en.rules.bets)} bets"


@then(parsers.parse("the English document's stated maximum RTP of {percent} % is the best RTP its paytable implies"))
def english_max_rtp(rules_context: RulesContext, percent: str) -> None:
    """The English document states this maximum RTP, its own paytable implies it, and so does the harness's."""
    en = rules_context.language(ENGLISH)
    stated = en.rules.max_rtp
    assert stated == Fraction(percent) / 100, f"RTP-1: the English document states {float(stated) * 100:g} %"
    diffs = [d for d in en.differences if d.clause == "RTP-1"]
    assert not diffs, _lines(diffs)
    assert max(en.rtp_implied.values()) == stated


@then("every translation's paytable equals the English")
def translations_paytable(rules_context: RulesContext) -> None:
    """No translation contradicts the English on money (odds, winning or push outcomes, the stated RTP), apart
    from the findings the allow-list accepts (shown in the attached report)."""
    result = rules_context.audited()
    diffs = [d for d in result.failing if d.lang != ENGLISH]
    assert not diffs, f"translations contradict the English on money: {_lines(diffs)}"


@then("every translation's stated maximum RTP is the best RTP its paytable implies")
def translations_max_rtp(rules_context: RulesContext) -> None:
    """Each translation's stated maximum RTP (RTP-1) is the best its own paytable implies, apart from the
    findings the allow-list accepts."""
    result = rules_context.audited()
    allowed = set(result.allowed)
    diffs = [
        d
        for lang in result.languages
        for d in lang.differences
        if lang.lang != ENGLISH and d.clause == "RTP-1" and d not in allowed
    ]
    assert not diffs, _lines(diffs)


@then(
    parsers.parse(
        'the {name} document is reported for writing decimals with "{sep}" although it says numbers are shown in'
        " US format"
    )
)
def reported_number_format(rules_context: RulesContext, name: str, sep: str) -> None:
    """The audit reports this document's decimal separator (DOC-2), quoting a line that shows it and the note
    that promises the US format."""
    lang = rules_context.language(name)
    diffs = [d for d in lang.differences if d.kind == "number-format"]
    assert len(diffs) == 1, f"{name}: number-format findings {diffs}"
    d = diffs[0]
    assert d.clause == "DOC-2" and d.line is not None and sep in d.quote, d
    assert lang.rules.decimal == sep and "DOC-2" in lang.rules.clauses, f"{name} reads decimals as {lang.rules.decimal}"


@then(parsers.parse("the {name} document's paytable equals the English"))
def paytable_equals_english(rules_context: RulesContext, name: str) -> None:
    """This document's odds, winning and push outcomes are the English ones, read in its own number format."""
    lang = rules_context.language(name)
    diffs = [d for d in lang.differences if d.clause.startswith("PAY-") and d.kind in _MONEY]
    assert not diffs, _lines(diffs)
    en = rules_context.audited().english
    got = {b: (t.odds, t.wins, t.pushes) for b, t in lang.rules.bets.items()}
    assert got == {b: (t.odds, t.wins, t.pushes) for b, t in en.bets.items()}
