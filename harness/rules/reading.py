"""Readings: the reviewed, declarative maps from one rules document to the game's terms.

A reading is a YAML file (``fixtures/rules/documents/readings/LANG.yaml``) that names its document and cites,
for every field, the line of the document it comes from and the phrase on that line that carries the meaning.
It holds no code: the document's numbers (odds, the stated RTP) are parsed from the cited lines with the number
format the reading declares, and the red counts a bet wins or pushes on are either the token patterns in the
cited phrase (``w r r r``: three reds) or, for a phrase without patterns ("an even number"), the ``reds`` the
reviewer wrote beside it.

:func:`load_reading` checks the file's shape only (fields, types, allowed values); whether each cited line says
what the reading claims is checked against the document by :mod:`harness.rules.document`. Every problem is a
:class:`ReadingError` (an :class:`~harness.errors.InputError`): one line naming the file and the dotted field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import InputError
from harness.files import FIXTURES, Fields, parse_yaml, read_text, shipped_names
from simulator.bets import BetType

DOCUMENTS_DIR = FIXTURES / "rules" / "documents"
READINGS_DIR = DOCUMENTS_DIR / "readings"
#: What a clause of the rules makes happen; a translation must give each clause the English effect.
EFFECTS: tuple[str, ...] = (
    "rearrange",  # SH-1: tokens spread, outcome unchanged
    "reshake",  # SH-2, SH-3
    "void_refund",  # SH-4a, SH-4b, SH-5: round void, bets returned
    "continue",  # DC-1, NET-1: the round runs to completion
    "settle",  # DC-2: confirmed bets stay valid and are settled
    "review",  # DC-3: bets can be reviewed in the Bet Record
    "pause",  # ERR-1: paused while the dealer informs the supervisor
    "resume",  # ERR-2
    "cancel_refund",  # ERR-3
    "english_prevails",  # DOC-1
    "us_format",  # DOC-2
)
#: The clauses a reading may cite, in the order the audit reports them.
CLAUSES: tuple[str, ...] = (
    "SH-1",
    "SH-2",
    "SH-3",
    "SH-4a",
    "SH-4b",
    "SH-5",
    "DC-1",
    "DC-2",
    "DC-3",
    "ERR-1",
    "ERR-2",
    "ERR-3",
    "NET-1",
    "DOC-1",
    "DOC-2",
)
SCRIPTS: tuple[str, ...] = ("LATIN", "ARABIC", "BENGALI", "TELUGU", "DEVANAGARI", "CJK", "HANGUL", "THAI", "GREEK")
_TOP = ("language", "name", "document", "script", "numbers", "sections", "clauses", "bets", "max_rtp", "wording")
_BET = ("label", "wins", "examples", "pushes", "odds")


class ReadingError(InputError):
    """A reading file that cannot be used: unreadable, malformed, or citing a line that does not say what the
    reading claims."""


@dataclass(frozen=True, slots=True)
class Cited:
    """A phrase of the document: ``text`` must appear on line ``line`` (1-based). ``field`` is the reading's
    dotted field name, for messages."""

    field: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class CitedReds:
    """A phrase that names red counts: the token patterns in ``cited.text``, or ``reds`` when the reviewer wrote
    them beside a phrase without patterns (``None`` then means: read the patterns)."""

    cited: Cited
    reds: frozenset[int] | None


@dataclass(frozen=True, slots=True)
class ClauseReading:
    clause: str
    cited: Cited
    effect: str


@dataclass(frozen=True, slots=True)
class BetReading:
    bet: BetType
    label: Cited
    wins: CitedReds
    examples: Cited | None
    pushes: CitedReds | None
    odds_line: int


@dataclass(frozen=True, slots=True)
class Wording:
    """A reviewer's note on a wording difference that changes no money (``english`` is what the English says)."""

    clause: str
    cited: Cited
    english: str
    note: str


@dataclass(frozen=True, slots=True)
class Reading:
    """One document's reading. ``decimal`` is the decimal separator its numbers use; ``odds_format`` and
    ``percent_format`` are how it writes odds and percentages, ``{n}`` standing for the number."""

    source: str
    language: str
    name: str
    document: str
    script: str
    decimal: str
    odds_format: str
    percent_format: str
    sections: tuple[Cited, ...]
    clauses: tuple[ClauseReading, ...]
    bets: tuple[BetReading, ...]
    max_rtp_line: int
    wording: tuple[Wording, ...]


def shown(path: Path) -> str:
    """``path`` as messages and reports write it: ``fixtures/...`` for a shipped file (wherever the package is
    installed), else the path as given."""
    try:
        return str(Path("fixtures") / path.resolve().relative_to(FIXTURES.resolve()))
    except ValueError:
        return str(path)


def available_readings(folder: Path = READINGS_DIR) -> list[Path]:
    """The reading files shipped in ``folder``, sorted by name."""
    return [folder / f"{name}.yaml" for name in shipped_names(folder)]


def load_reading(path: Path) -> Reading:
    """Read and shape-check one reading file.

    Raises:
        ReadingError: ``cannot read reading PATH: REASON``, invalid YAML, or ``PATH: FIELD: ALLOWED; got VALUE``.
    """
    source = shown(path)
    data = parse_yaml(read_text(path, "reading", ReadingError), source, ReadingError)
    f = Fields(source, ReadingError, "the reading")
    top = f.mapping(data, "", _TOP)
    for key in _TOP[:-1]:  # all but wording
        if key not in top:
            raise f.fail(key, "is required", None)
    numbers = f.mapping(top["numbers"], "numbers", ("decimal", "odds", "percent"))
    decimal = f.choice(numbers.get("decimal"), "numbers.decimal", (".", ","))
    odds_format = _template(f, numbers.get("odds"), "numbers.odds")
    percent_format = _template(f, numbers.get("percent"), "numbers.percent")
    sections = f.mapping(top["sections"], "sections", ("special_handling", "payouts", "disconnection", "errors"))
    clauses = f.mapping(top["clauses"], "clauses", CLAUSES)
    bets = f.mapping(top["bets"], "bets", tuple(b.value for b in BetType))
    wording = top.get("wording") or []
    if not isinstance(wording, list):
        raise f.fail("wording", "must be a list", wording)
    return Reading(
        source=source,
        language=_word(f, top["language"], "language"),
        name=_word(f, top["name"], "name"),
        document=_word(f, top["document"], "document"),
        script=f.choice(top["script"], "script", SCRIPTS),
        decimal=decimal,
        odds_format=odds_format,
        percent_format=percent_format,
        sections=tuple(_cited(f, v, f"sections.{k}") for k, v in sections.items()),
        clauses=tuple(_clause(f, clauses[c], c) for c in CLAUSES if c in clauses),
        bets=tuple(_bet(f, bets[b.value], BetType(b)) for b in BetType if b.value in bets),
        max_rtp_line=_line_only(f, top["max_rtp"], "max_rtp"),
        wording=tuple(_wording(f, w, f"wording[{i}]") for i, w in enumerate(wording)),
    )


def _word(f: Fields, value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise f.fail(where, "must be a non-empty string", value)
    return value


def _template(f: Fields, value: object, where: str) -> str:
    if not isinstance(value, str) or value.count("{n}") != 1:
        raise f.fail(where, "must be a string with one {n} where the number goes", value)
    return value


def _line(f: Fields, value: object, where: str) -> int:
    return f.whole(value, where, 1, 100_000)


def _cited(f: Fields, value: object, where: str, extra: tuple[str, ...] = ()) -> Cited:
    m = f.mapping(value, where, ("line", "text", *extra))
    return Cited(where, _line(f, m.get("line"), f"{where}.line"), _word(f, m.get("text"), f"{where}.text"))


def _line_only(f: Fields, value: object, where: str) -> int:
    m = f.mapping(value, where, ("line",))
    return _line(f, m.get("line"), f"{where}.line")


def _reds(f: Fields, value: object, where: str) -> CitedReds:
    cited = _cited(f, value, where, ("reds",))
    raw = value.get("reds") if isinstance(value, dict) else None
    if raw is None:
        return CitedReds(cited, None)
    if not isinstance(raw, list) or any(isinstance(r, bool) or r not in range(5) for r in raw):
        raise f.fail(f"{where}.reds", "must be a list of red counts 0..4", raw)
    return CitedReds(cited, frozenset(raw))


def _clause(f: Fields, value: object, clause: str) -> ClauseReading:
    where = f"clauses.{clause}"
    m = f.mapping(value, where, ("line", "text", "effect"))
    return ClauseReading(clause, _cited(f, {k: m.get(k) for k in ("line", "text")}, where), _effect(f, m, where))


def _effect(f: Fields, m: dict[str, Any], where: str) -> str:
    return f.choice(m.get("effect"), f"{where}.effect", EFFECTS)


def _bet(f: Fields, value: object, bet: BetType) -> BetReading:
    where = f"bets.{bet.value}"
    m = f.mapping(value, where, _BET)
    for key in ("label", "wins", "odds"):
        if key not in m:
            raise f.fail(f"{where}.{key}", "is required", None)
    return BetReading(
        bet=bet,
        label=_cited(f, m["label"], f"{where}.label"),
        wins=_reds(f, m["wins"], f"{where}.wins"),
        examples=_cited(f, m["examples"], f"{where}.examples") if "examples" in m else None,
        pushes=_reds(f, m["pushes"], f"{where}.pushes") if "pushes" in m else None,
        odds_line=_line_only(f, m["odds"], f"{where}.odds"),
    )


def _wording(f: Fields, value: object, where: str) -> Wording:
    m = f.mapping(value, where, ("clause", "line", "text", "english", "note"))
    cited = _cited(f, {k: m.get(k) for k in ("line", "text")}, where)
    return Wording(
        _word(f, m.get("clause"), f"{where}.clause"),
        cited,
        _word(f, m.get("english"), f"{where}.english"),
        _word(f, m.get("note"), f"{where}.note"),
    )
