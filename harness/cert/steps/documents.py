"""pytest-bdd steps for ``features/documents.feature``: the published rules documents, audited.

The steps run the rules-documents audit (:func:`harness.rules.audit.run_audit`) on the documents shipped in
``fixtures/rules/documents/`` and check its result, each check naming the clause it decides (the English against
the certified paytable: PAY-1..PAY-10; stated against implied maximum RTP: RTP-1; a translation against the
English: DOC-1; the number format: DOC-2); the audit's full text report is attached to the allure report (and
printed, so pytest shows it with ``-rA`` or on failure), allowed findings included.

The checks go to the scenario's ``clause_checks`` log through :attr:`RulesContext.checks` (the ``rules_context``
fixture hands it over), so the steps keep their one argument and can be called on an audit result directly. One step
checks how the harness itself writes amounts in its reports (DOC-2), on the scenario's own check log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from pytest_bdd import parsers, then, when

from harness.cert.steps.context import CertContext, format_money
from harness.cert.steps.params import MONEY, PERCENT, Percent, typed
from harness.files import shipped_path
from harness.judge.checks import CheckLog
from harness.rules.audit import ENGLISH, AuditResult, LanguageAudit, load_allow_list, run_audit
from harness.rules.compare import Difference, clause_of
from harness.rules.report import to_text
from simulator.bets import BetType

_MONEY = ("money", "missing")


@dataclass
class RulesContext:
    """What the steps of one scenario share: the audit's result, and the log their checks go to (the scenario's
    ``clause_checks``; a fresh one when the context is made by hand)."""

    result: AuditResult | None = None
    checks: CheckLog = field(default_factory=CheckLog)

    def audited(self) -> AuditResult:
        assert self.result is not None, "the rules documents have not been audited in this scenario"
        return self.result

    def language(self, name: str) -> LanguageAudit:
        for lang in self.audited().languages:
            if name in (lang.lang, lang.rules.reading.name):
                return lang
        raise AssertionError(f"no {name} document was audited")


@pytest.fixture
def rules_context(clause_checks: CheckLog) -> RulesContext:
    return RulesContext(checks=clause_checks)


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
    for bet in BetType:  # one check per paytable row, PAY-1 .. PAY-10
        clause = clause_of(bet)
        diffs = [d for d in en.differences if d.clause == clause and d.kind in _MONEY]
        listed = bet in en.rules.bets
        what = f"the English document's {bet.value} bet equals the certified paytable"
        if diffs or not listed:
            what = f"the English document contradicts the certified paytable: {_lines(diffs) or f'no {bet.value} bet'}"
        rules_context.checks.require(clause, listed and not diffs, what)


@then(
    parsers.parse("the English document's stated maximum RTP of {percent} % is the best RTP its paytable implies"),
    converters=typed(percent=PERCENT),
)
def english_max_rtp(rules_context: RulesContext, percent: Percent) -> None:
    """The English document states this maximum RTP, its own paytable implies it, and so does the harness's."""
    en = rules_context.language(ENGLISH)
    checks = rules_context.checks
    stated = en.rules.max_rtp
    what = f"the English document states a maximum RTP of {float(stated) * 100:g} %, expected {percent} %"
    checks.require("RTP-1", stated == percent.value, what)
    diffs = [d for d in en.differences if d.clause == "RTP-1"]
    checks.require("RTP-1", not diffs, _lines(diffs) or "the English document's RTP agrees with the rules")
    best = max(en.rtp_implied.values())
    what = (
        f"the English paytable implies at best {float(best) * 100:g} %, the document states {float(stated) * 100:g} %"
    )
    checks.require("RTP-1", best == stated, what)


@then("every translation's paytable equals the English")
def translations_paytable(rules_context: RulesContext) -> None:
    """No translation contradicts the English on money (odds, winning or push outcomes, the stated RTP), apart
    from the findings the allow-list accepts (shown in the attached report)."""
    result = rules_context.audited()
    diffs = [d for d in result.failing if d.lang != ENGLISH]
    what = "every translation's paytable equals the English, apart from the allowed findings"
    if diffs:
        what = f"translations contradict the English on money: {_lines(diffs)}"
    rules_context.checks.require("DOC-1", not diffs, what)


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
    what = _lines(diffs) or "every translation's stated maximum RTP is the best its paytable implies"
    rules_context.checks.require("RTP-1", not diffs, what)


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
    checks = rules_context.checks
    diffs = [d for d in lang.differences if d.kind == "number-format"]
    checks.require("DOC-2", len(diffs) == 1, f"{name}: number-format findings {diffs}, expected exactly one")
    d = diffs[0]
    what = f"{name}: expected a DOC-2 finding quoting a line with {sep!r}, got {d}"
    checks.require("DOC-2", d.clause == "DOC-2" and d.line is not None and sep in d.quote, what)
    what = (
        f"{name} reads decimals as {lang.rules.decimal!r} (expected {sep!r}), its clauses {sorted(lang.rules.clauses)}"
    )
    checks.require("DOC-2", lang.rules.decimal == sep and "DOC-2" in lang.rules.clauses, what)


@then(parsers.parse("the {name} document's paytable equals the English"))
def paytable_equals_english(rules_context: RulesContext, name: str) -> None:
    """This document's odds, winning and push outcomes are the English ones, read in its own number format."""
    lang = rules_context.language(name)
    checks = rules_context.checks
    diffs = [d for d in lang.differences if d.clause.startswith("PAY-") and d.kind in _MONEY]
    checks.require("DOC-1", not diffs, _lines(diffs) or f"the {name} paytable has no money finding")
    en = rules_context.audited().english
    got = {b: (t.odds, t.wins, t.pushes) for b, t in lang.rules.bets.items()}
    want = {b: (t.odds, t.wins, t.pushes) for b, t in en.bets.items()}
    wrong = {b.value: f"{got.get(b)} (English {want.get(b)})" for b in {*got, *want} if got.get(b) != want.get(b)}
    checks.require("DOC-1", not wrong, f"the {name} paytable differs from the English: {wrong}")


@then(parsers.re(r"(?P<minor>\d+) minor units are shown as (?P<text>[\d,.\-]+)"), converters=typed(minor=MONEY))
def shown_as(cert: CertContext, minor: int, text: str) -> None:
    """Amounts in reports are written in US format with two decimals, 100 minor units to the unit (DOC-2).

    Example: Then 123400 minor units are shown as 1,234.00
    """
    shown = format_money(minor)
    cert.checks.require("DOC-2", shown == text, f"{minor} is shown as {shown}, expected {text}")
