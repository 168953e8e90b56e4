"""One rules document read through its reading: what it says, in the game's terms.

:func:`read_document` checks every citation of the reading against the document (the line exists and says the
cited phrase; an odds or RTP line holds exactly one number in the declared format) and derives the document's
rules: per bet the odds, the red counts that win and those that return the stake, the examples it gives; the
clauses it states with their effects; the stated maximum RTP; the decimal separator its numbers use. A citation
that does not hold is a :class:`~harness.rules.reading.ReadingError`, one line naming the reading's field, the
document and the line.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from harness.files import read_text
from harness.rules.reading import BetReading, Cited, CitedReds, Reading, ReadingError
from simulator.bets import BetType

_PATTERN = re.compile(r"(?<![A-Za-z])[rw](?: [rw]){3}(?![A-Za-z])")
_NUMBER = r"(\d+(?:[.,]\d+)?)"


@dataclass(frozen=True, slots=True)
class Quote:
    """A line of the document, as written (surrounding spaces removed)."""

    line: int
    text: str


@dataclass(frozen=True, slots=True)
class BetTerms:
    """What the document says of one bet. ``examples`` are the red counts of the patterns it gives as examples
    (empty when it gives none)."""

    bet: BetType
    odds: Fraction
    odds_text: str
    wins: frozenset[int]
    pushes: frozenset[int]
    examples: frozenset[int]
    wins_quote: Quote
    odds_quote: Quote
    label: str


@dataclass(frozen=True, slots=True)
class ClauseTerms:
    clause: str
    effect: str
    quote: Quote


@dataclass(frozen=True, slots=True)
class DocumentRules:
    """The rules one document states, read through ``reading``."""

    reading: Reading
    path: Path
    lines: tuple[str, ...]
    bets: dict[BetType, BetTerms]
    clauses: dict[str, ClauseTerms]
    max_rtp: Fraction
    max_rtp_quote: Quote
    decimal: str
    decimal_quote: Quote | None  # the first line whose numbers show the decimal separator


def document_script(text: str) -> str:
    """The writing system most of the document's letters are in (``LATIN``, ``BENGALI``, ...), from Unicode
    character names; ``UNKNOWN`` for a text without letters."""
    counts: Counter[str] = Counter()
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "UNKNOWN")
            counts["CJK" if name.startswith("CJK") else name.split(" ", 1)[0]] += 1
    return counts.most_common(1)[0][0] if counts else "UNKNOWN"


def read_lines(path: Path) -> list[str]:
    """The document's lines (1-based line ``n`` is item ``n - 1``).

    Raises:
        ReadingError: ``cannot read rules document PATH: REASON``.
    """
    return read_text(path, "rules document", ReadingError).splitlines()


def read_document(path: Path, reading: Reading) -> DocumentRules:
    """The rules ``path`` states, read through ``reading``.

    Raises:
        ReadingError: the document cannot be read, is not in the reading's script, or a citation does not hold.
    """
    lines = read_lines(path)
    reader = _Reader(reading, path, lines)
    script = document_script("\n".join(lines))
    if script != reading.script:
        raise reader.error("script", f"the document is written in {script} letters, not {reading.script}")
    for cited in reading.sections:
        reader.check(cited)
    for w in reading.wording:
        reader.check(w.cited)
    clauses = {c.clause: ClauseTerms(c.clause, c.effect, reader.check(c.cited)) for c in reading.clauses}
    bets = {b.bet: reader.bet(b) for b in reading.bets}
    max_rtp, max_quote = reader.number(reading.max_rtp_line, reading.percent_format, "max_rtp")
    return DocumentRules(
        reading=reading,
        path=path,
        lines=tuple(lines),
        bets=bets,
        clauses=clauses,
        max_rtp=max_rtp / 100,
        max_rtp_quote=max_quote,
        decimal=reading.decimal,
        decimal_quote=reader.decimal_quote,
    )


def patterns_reds(text: str) -> frozenset[int]:
    """The red counts of the token patterns (four of ``r``/``w``) written in ``text``."""
    return frozenset(m.group(0).count("r") for m in _PATTERN.finditer(text))


def _shorten(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Reader:
    """Checks one reading's citations against one document's lines."""

    def __init__(self, reading: Reading, path: Path, lines: list[str]) -> None:
        self.reading = reading
        self.path = path
        self.lines = lines
        self.decimal_quote: Quote | None = None

    def error(self, where: str, what: str) -> ReadingError:
        return ReadingError(f"{self.reading.source}: {where}: {what} ({self.path.name})")

    def line(self, n: int, where: str) -> str:
        if n > len(self.lines):
            raise self.error(where, f"line {n} is past the end of the document ({len(self.lines)} lines)")
        return self.lines[n - 1]

    def check(self, cited: Cited) -> Quote:
        text = self.line(cited.line, cited.field)
        if cited.text not in text:
            raise self.error(
                cited.field, f"line {cited.line} does not say {cited.text!r}; it reads {_shorten(text.strip())!r}"
            )
        return Quote(cited.line, text.strip())

    def reds(self, cited: CitedReds) -> frozenset[int]:
        self.check(cited.cited)
        shown = patterns_reds(cited.cited.text)
        if cited.reds is None:
            if not shown:
                raise self.error(
                    f"{cited.cited.field}.reds", f"{cited.cited.text!r} shows no token pattern: write the reds it names"
                )
            return shown
        if shown and shown != cited.reds:
            raise self.error(
                f"{cited.cited.field}.reds",
                f"the phrase shows patterns of {sorted(shown)} reds, the reading says {sorted(cited.reds)}",
            )
        return cited.reds

    def number(self, n: int, template: str, where: str) -> tuple[Fraction, Quote]:
        text = self.line(n, f"{where}.line")
        head, tail = (re.escape(part).replace(r"\ ", r"\s*") for part in template.split("{n}"))
        found = re.findall(head + _NUMBER + tail, text)
        if len(found) != 1:
            how = "no number" if not found else f"{len(found)} numbers"
            raise self.error(f"{where}.line", f"line {n} has {how} written as {template!r}: {_shorten(text.strip())!r}")
        digits = found[0]
        other = "," if self.reading.decimal == "." else "."
        if other in digits:
            raise self.error(
                "numbers.decimal",
                f"line {n} writes {digits}, but the reading says decimals are written with {self.reading.decimal!r}",
            )
        if self.reading.decimal in digits and self.decimal_quote is None:
            self.decimal_quote = Quote(n, text.strip())
        return Fraction(digits.replace(",", ".")), Quote(n, text.strip())

    def bet(self, b: BetReading) -> BetTerms:
        where = f"bets.{b.bet.value}"
        self.check(b.label)
        wins = self.reds(b.wins)
        pushes = self.reds(b.pushes) if b.pushes is not None else frozenset()
        examples: frozenset[int] = frozenset()
        if b.examples is not None:
            self.check(b.examples)
            examples = patterns_reds(b.examples.text)
            if not examples:
                raise self.error(f"{where}.examples", f"{b.examples.text!r} shows no token pattern")
        odds, odds_quote = self.number(b.odds_line, self.reading.odds_format, f"{where}.odds")
        return BetTerms(
            bet=b.bet,
            odds=odds,
            odds_text=odds_quote.text,
            wins=wins,
            pushes=pushes,
            examples=examples,
            wins_quote=Quote(b.wins.cited.line, self.lines[b.wins.cited.line - 1].strip()),
            odds_quote=odds_quote,
            label=b.label.text,
        )
