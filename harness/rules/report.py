"""The audit's result as JSON and as text: a table (clause × language: same / differs / missing / extra), the
RTP each document implies per bet, and every difference quoting the document's line.

Cells: ``same`` (stated, no difference), ``differs`` (money, RTP, effect, number format or an inconsistency),
``wording`` (only a reviewer's wording note), ``missing``, ``extra``, ``—`` (stated by neither). The English
column compares the English document with the certified rules; the others compare each document with the English.
"""

from __future__ import annotations

from typing import Any

from harness.rules.audit import AuditResult, LanguageAudit
from harness.rules.compare import Difference, clause_of, percent
from harness.rules.reading import CLAUSES
from harness.stats.exact import exact_decimal
from simulator.bets import BetType

ROWS: tuple[str, ...] = (*(clause_of(b) for b in BetType), "RTP-1", *CLAUSES)
_DIFFERS = ("money", "rtp", "inconsistent", "effect", "number-format")


def cell(lang: LanguageAudit, clause: str) -> str:
    """What the table shows for ``clause`` in ``lang``'s column."""
    kinds = {d.kind for d in lang.differences if d.clause == clause}
    if kinds & set(_DIFFERS):
        return "differs"
    for kind in ("missing", "extra", "wording"):
        if kind in kinds:
            return kind
    stated = clause in lang.rules.clauses or clause == "RTP-1"
    stated = stated or any(clause_of(b) == clause for b in lang.rules.bets)
    return "same" if stated else "—"


def difference_json(d: Difference) -> dict[str, Any]:
    return {
        "clause": d.clause,
        "kind": d.kind,
        "detail": d.detail,
        "quote": d.quote,
        "line": d.line,
        "english": d.english,
        "english_line": d.english_line,
        "failing": d.failing,
    }


def to_json(result: AuditResult) -> dict[str, Any]:
    """The JSON-ready result: ``languages`` (one object per document), ``verdict``, ``failing``, ``allowed``."""
    languages = []
    for lang in result.languages:
        rules = lang.rules
        languages.append(
            {
                "lang": lang.lang,
                "name": rules.reading.name,
                "file": rules.path.name,
                "reading": rules.reading.source,
                "compared_with": lang.reference,
                "paytable": {
                    bet.value: {"odds": exact_decimal(t.odds), "wins": sorted(t.wins), "pushes": sorted(t.pushes)}
                    for bet, t in rules.bets.items()
                },
                "max_rtp_stated": str(rules.max_rtp),
                "rtp_implied": {bet.value: str(rtp) for bet, rtp in lang.rtp_implied.items()},
                "number_format": {"decimal": rules.decimal},
                "clauses_present": [c for c in ROWS if cell(lang, c) not in ("missing", "—")],
                "differences": [difference_json(d) for d in lang.differences],
            }
        )
    return {
        "english": result.english.path.name,
        "languages": languages,
        "verdict": result.verdict,
        "failing": [{"lang": d.lang, "clause": d.clause, "kind": d.kind} for d in result.failing],
        "allowed": [{"lang": d.lang, "clause": d.clause, "kind": d.kind} for d in result.allowed],
        "unused_allowances": [{"lang": a.lang, "clause": a.clause, "kind": a.kind} for a in result.unused],
    }


def to_text(result: AuditResult) -> str:
    """The human report: header, clause table, implied RTP table, differences, verdict."""
    langs = result.languages
    lines = [
        f"Rules documents audit: {len(langs)} document(s); the English ({result.english.path.name}) prevails",
        "en: compared with the certified rules (RULES.md, harness paytable); others: with the English",
        "",
        f"{'clause':<8}" + "".join(f"{lang.lang:<10}" for lang in langs),
    ]
    for clause in ROWS:
        cells = [cell(lang, clause) for lang in langs]
        if any(c != "—" for c in cells):
            lines.append(f"{clause:<8}" + "".join(f"{c:<10}" for c in cells))
    lines += ["", "RTP each document implies (fair tokens, pushes returned):"]
    lines.append(f"{'bet':<16}" + "".join(f"{lang.lang:>10}" for lang in langs))
    for bet in BetType:
        row = [percent(lang.rtp_implied[bet]) if bet in lang.rtp_implied else "—" for lang in langs]
        lines.append(f"{bet.value:<16}" + "".join(f"{r:>10}" for r in row))
    lines.append(f"{'stated maximum':<16}" + "".join(f"{percent(lang.rules.max_rtp):>10}" for lang in langs))
    lines += ["", "Differences:"]
    allowed = set(result.allowed)
    for lang in langs:
        for d in lang.differences:
            mark = " [FAILS]" if d in result.failing else " [allowed]" if d in allowed else ""
            lines.append(f"  {d.lang} {d.clause} {d.kind}{mark}: {d.detail}")
            if d.line is not None:
                lines.append(f"    {lang.rules.path.name} line {d.line}: {d.quote}")
            if d.english_line is not None:
                lines.append(f"    {result.english.path.name} line {d.english_line}: {d.english}")
            elif d.english:
                lines.append(f"    reference: {d.english}")
    for a in result.unused:
        lines.append(f"  allowance {a.lang} {a.clause} {a.kind} matched nothing (the finding is gone)")
    summary = ", ".join(f"{d.lang} {d.clause} {d.kind}" for d in result.failing)
    lines += ["", f"verdict: {result.verdict}" + (f": {summary}" if summary else "")]
    if result.allowed:
        lines[-1] += f" ({len(result.allowed)} finding(s) allowed)"
    return "\n".join(lines)
