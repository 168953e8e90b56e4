"""Comparing what rules documents say: a translation with the English, the English with the certified rules.

Every finding is a :class:`Difference` naming the clause, its kind, the document's line (quoted as written) and
what the reference says. Kinds:

- ``money``: odds, winning or push outcomes, or the stated maximum RTP differ from the reference;
- ``rtp``: the stated maximum RTP is not the best RTP the document's own paytable implies;
- ``inconsistent``: a bet's examples name outcomes its description does not make win;
- ``effect``: a clause makes something else happen (a void becomes a re-shake, ...);
- ``missing`` / ``extra``: a clause the reference states and the document does not, or the reverse;
- ``number-format``: the document writes decimals with another separator than the English;
- ``wording``: a reviewer's note from the reading (a different word that changes no money).

A difference *fails* the audit when a translation contradicts the English on money, or when the English
contradicts the certified rules on money (a bet left out included) or on its own RTP; the rest are findings shown
to the reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from harness.judge.paytable import PAYTABLE, PayRule
from harness.rules.document import BetTerms, DocumentRules, Quote
from harness.rules.reading import CLAUSES
from harness.stats.exact import bet_math, exact_decimal, max_rtp
from simulator.bets import BetType

#: The clauses the English document must state (the catalogue restates them from it).
ENGLISH_CLAUSES: tuple[str, ...] = tuple(c for c in CLAUSES if c not in ("NET-1", "DOC-2"))
CERTIFIED = "the certified rules (RULES.md, harness paytable)"
#: Every kind of difference, in the order the module docstring explains them.
KINDS: tuple[str, ...] = ("money", "rtp", "inconsistent", "effect", "missing", "extra", "number-format", "wording")


@dataclass(frozen=True, slots=True)
class Difference:
    """One finding for one document. ``line``/``quote`` are the document's (``None``/``""`` for a missing
    clause); ``english_line``/``english`` the reference's."""

    lang: str
    clause: str
    kind: str
    detail: str
    line: int | None
    quote: str
    english_line: int | None
    english: str
    failing: bool


@dataclass(frozen=True, slots=True)
class Terms:
    """A paytable row in comparable form."""

    odds: Fraction
    wins: frozenset[int]
    pushes: frozenset[int]


def clause_of(bet: BetType) -> str:
    """The catalogue clause of ``bet``'s paytable row (``PAY-1`` .. ``PAY-10``)."""
    return f"PAY-{list(BetType).index(bet) + 1}"


def rtp_implied(rules: DocumentRules) -> dict[BetType, Fraction]:
    """The exact RTP (fair tokens, pushes counted as returns) of every bet the document lists, settled with the
    document's own odds, winning and push outcomes."""
    return {
        bet: bet_math(bet, rule=PayRule(clause_of(bet), t.odds, t.wins, t.pushes)).rtp for bet, t in rules.bets.items()
    }


def describe(t: Terms) -> str:
    """``odds 0.96, wins on 3, 4 reds, returned on 2``."""
    text = f"odds {exact_decimal(t.odds)}, wins on {_counts(t.wins)}"
    return text + (f", returned on {_counts(t.pushes)}" if t.pushes else ", no push")


def _counts(reds: frozenset[int]) -> str:
    return ", ".join(str(r) for r in sorted(reds)) + " red" if reds else "nothing"


def percent(value: Fraction) -> str:
    return f"{exact_decimal(value * 100, 4)} %"


def compare_english(doc: DocumentRules) -> list[Difference]:
    """The English document against the certified rules: the harness paytable (PAY-1..PAY-10), its maximum RTP
    (RTP-1) and the clauses the catalogue restates from it."""
    lang = doc.reading.language
    out: list[Difference] = []
    for bet, rule in PAYTABLE.items():
        want = Terms(rule.odds, rule.wins, rule.pushes)
        if bet not in doc.bets:
            detail = f"{bet}: not in the document; the certified rules: {describe(want)}"
            out.append(_diff(lang, rule.clause, "missing", detail, None, None, CERTIFIED, True))
            continue
        t = doc.bets[bet]
        got = Terms(t.odds, t.wins, t.pushes)
        if got != want:
            detail = f"{bet}: the document says {describe(got)}; the certified rules: {describe(want)}"
            quote = _money_quote(got, want, t)
            out.append(_diff(lang, rule.clause, "money", detail, quote, None, describe(want), True))
    best, _ = max_rtp()
    if doc.max_rtp != best:
        detail = (
            f"the document states a maximum RTP of {percent(doc.max_rtp)}; the certified maximum is {percent(best)}"
        )
        out.append(_diff(lang, "RTP-1", "money", detail, doc.max_rtp_quote, None, percent(best), True))
    out += _own_rtp(doc, failing=True)
    out += _examples(doc)
    for clause in ENGLISH_CLAUSES:
        if clause not in doc.clauses:
            out.append(_diff(lang, clause, "missing", f"{clause}: not stated", None, None, CERTIFIED))
    return out


def compare_translation(doc: DocumentRules, en: DocumentRules) -> list[Difference]:
    """A translation against the English document, clause by clause."""
    lang = doc.reading.language
    out: list[Difference] = []
    for bet, e in en.bets.items():
        clause = clause_of(bet)
        want = Terms(e.odds, e.wins, e.pushes)
        if bet not in doc.bets:
            out.append(_diff(lang, clause, "missing", f"{bet}: not in the document", None, e.wins_quote, ""))
            continue
        t = doc.bets[bet]
        got = Terms(t.odds, t.wins, t.pushes)
        if got != want:
            detail = f"{bet}: the document says {describe(got)}; the English: {describe(want)}"
            quote, eq = _money_quote(got, want, t), _money_quote(got, want, e)
            out.append(_diff(lang, clause, "money", detail, quote, eq, "", True))
    if doc.max_rtp != en.max_rtp:
        detail = f"the document states a maximum RTP of {percent(doc.max_rtp)}; the English {percent(en.max_rtp)}"
        out.append(_diff(lang, "RTP-1", "money", detail, doc.max_rtp_quote, en.max_rtp_quote, "", True))
    out += _own_rtp(doc, failing=False)
    out += _examples(doc)
    out += _clauses(doc, en)
    if doc.decimal != en.decimal:
        note = doc.clauses.get("DOC-2")
        says = f", although it says numbers in the game are in US format (line {note.quote.line})" if note else ""
        detail = f"the document writes decimals with {doc.decimal!r}, the English with {en.decimal!r}{says}"
        out.append(_diff(lang, "DOC-2", "number-format", detail, doc.decimal_quote, en.decimal_quote, ""))
    for w in doc.reading.wording:
        detail = f"{w.cited.text!r}: {w.note}"
        out.append(
            _diff(
                lang,
                w.clause,
                "wording",
                detail,
                Quote(w.cited.line, doc.lines[w.cited.line - 1].strip()),
                None,
                w.english,
            )
        )
    return out


def _clauses(doc: DocumentRules, en: DocumentRules) -> list[Difference]:
    lang = doc.reading.language
    out: list[Difference] = []
    for clause, e in en.clauses.items():
        got = doc.clauses.get(clause)
        if got is None:
            out.append(_diff(lang, clause, "missing", f"{clause}: not stated", None, e.quote, ""))
        elif got.effect != e.effect:
            detail = f"{clause}: the document says {got.effect}, the English {e.effect}"
            out.append(_diff(lang, clause, "effect", detail, got.quote, e.quote, ""))
    for clause, got in doc.clauses.items():
        if clause not in en.clauses:
            detail = f"{clause}: stated here ({got.effect}), not in the English"
            out.append(_diff(lang, clause, "extra", detail, got.quote, None, "not in the English document"))
    return out


def _own_rtp(doc: DocumentRules, *, failing: bool) -> list[Difference]:
    implied = rtp_implied(doc)
    if not implied:
        return []
    best = max(implied.values())
    if best == doc.max_rtp:
        return []
    bets = ", ".join(b.value for b, r in implied.items() if r == best)
    detail = f"the document states {percent(doc.max_rtp)}; its own paytable implies at best {percent(best)} ({bets})"
    return [_diff(doc.reading.language, "RTP-1", "rtp", detail, doc.max_rtp_quote, None, percent(doc.max_rtp), failing)]


def _examples(doc: DocumentRules) -> list[Difference]:
    out: list[Difference] = []
    for bet, t in doc.bets.items():
        stray = t.examples - t.wins
        if stray:
            detail = f"{bet}: its examples show {_counts(stray)}, which its description does not make win"
            q = t.wins_quote
            out.append(_diff(doc.reading.language, clause_of(bet), "inconsistent", detail, q, None, ""))
    return out


def _money_quote(got: Terms, want: Terms, t: BetTerms) -> Quote:
    """The odds line when only the odds differ, else the line that says what wins."""
    only_odds = got.odds != want.odds and (got.wins, got.pushes) == (want.wins, want.pushes)
    return t.odds_quote if only_odds else t.wins_quote


def _diff(
    lang: str,
    clause: str,
    kind: str,
    detail: str,
    quote: Quote | None,
    english: Quote | None,
    english_text: str,
    failing: bool = False,
) -> Difference:
    return Difference(
        lang=lang,
        clause=clause,
        kind=kind,
        detail=detail,
        line=quote.line if quote else None,
        quote=quote.text if quote else "",
        english_line=english.line if english else None,
        english=english.text if english else english_text,
        failing=failing,
    )
