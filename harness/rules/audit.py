"""The rules-documents audit: every document read through its reading and compared with the English, and the
English with the certified rules.

:func:`run_audit` takes document paths (default: the five shipped in ``fixtures/rules/documents/``), finds each
one's reading by file name in the readings folder, and returns an :class:`AuditResult`: per language the rules
it states, the exact RTP of every bet its paytable implies, and its differences. The English reference is the
English document among those given, else the shipped one. An allow-list file (``--allow``; the shipped one is
``fixtures/rules/documents/allowed-findings.yaml``) names findings a lab accepts: they are still reported, as
allowed, and no longer fail the audit (nor the scenarios that check them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from harness.errors import InputError
from harness.files import Fields, parse_yaml, read_text
from harness.rules.compare import KINDS, Difference, compare_english, compare_translation, rtp_implied
from harness.rules.document import DocumentRules, document_script, read_document, read_lines
from harness.rules.reading import (
    DOCUMENTS_DIR,
    READINGS_DIR,
    Reading,
    ReadingError,
    available_readings,
    load_reading,
    shown,
)
from simulator.bets import BetType

ENGLISH = "en"
ALLOWED_FINDINGS = DOCUMENTS_DIR / "allowed-findings.yaml"


class AllowListError(InputError):
    """An allow-list file that cannot be used."""


@dataclass(frozen=True, slots=True)
class Allowance:
    """A failing finding a lab accepts: the document's language, the clause and the kind of difference."""

    lang: str
    clause: str
    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class LanguageAudit:
    """One document's result. ``reference`` is what it was compared with (the English or the certified rules)."""

    rules: DocumentRules
    reference: str
    rtp_implied: dict[BetType, Fraction]
    differences: tuple[Difference, ...]

    @property
    def lang(self) -> str:
        return self.rules.reading.language


@dataclass(frozen=True, slots=True)
class AuditResult:
    """``failing``: failing differences no allowance covers; ``allowed``: the differences an allowance covers
    (failing or not); ``unused``: allowances that matched nothing (the defect they accept is gone)."""

    english: DocumentRules
    languages: tuple[LanguageAudit, ...]
    failing: tuple[Difference, ...]
    allowed: tuple[Difference, ...]
    unused: tuple[Allowance, ...]

    @property
    def passed(self) -> bool:
        return not self.failing

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"


def shipped_documents() -> list[Path]:
    """The rules documents shipped in ``fixtures/rules/documents/``, by file name."""
    return sorted(DOCUMENTS_DIR.glob("*.txt"))


def load_readings(folder: Path = READINGS_DIR) -> dict[str, Reading]:
    """Every reading in ``folder``, by the file name of the document it reads.

    Raises:
        ReadingError: a reading that cannot be used, or two readings of one document.
    """
    out: dict[str, Reading] = {}
    for path in available_readings(folder):
        reading = load_reading(path)
        if reading.document in out:
            raise ReadingError(
                f"{path}: document: {reading.document} already has a reading ({out[reading.document].source})"
            )
        out[reading.document] = reading
    return out


def reading_for(path: Path, readings: dict[str, Reading], readings_dir: Path = READINGS_DIR) -> Reading:
    """The reading of the document at ``path`` (matched by file name).

    Raises:
        ReadingError: the file cannot be read, is in no language a reading covers, or has no reading.
    """
    lines = read_lines(path)
    reading = readings.get(path.name)
    if reading is not None:
        return reading
    script = document_script("\n".join(lines))
    langs = sorted({r.name for r in readings.values() if r.script == script})
    if not langs:
        known = ", ".join(sorted({r.script.title() for r in readings.values()}))
        raise ReadingError(f"{path}: unknown language: its letters are {script.title()}, no reading is ({known})")
    raise ReadingError(
        f"{path}: no reading for this document (its letters are {script.title()}, like the {' and '.join(langs)} "
        f"readings'): write one in {shown(readings_dir)}/"
    )


def load_allow_list(path: Path) -> tuple[Allowance, ...]:
    """Read an allow-list: ``allowed:`` a list of ``{language, clause, kind, reason}``.

    Raises:
        AllowListError: unreadable, malformed, or allowing a finding of the English document (it prevails).
    """
    source = str(path)
    data = parse_yaml(read_text(path, "allow-list", AllowListError), source, AllowListError)
    f = Fields(source, AllowListError, "the allow-list")
    top = f.mapping(data, "", ("allowed",))
    items = top.get("allowed")
    if not isinstance(items, list):
        raise f.fail("allowed", "must be a list of {language, clause, kind, reason}", items)
    out = []
    for i, item in enumerate(items):
        where = f"allowed[{i}]"
        m = f.mapping(item, where, ("language", "clause", "kind", "reason"))
        values = [m.get(k) for k in ("language", "clause", "kind", "reason")]
        for key, value in zip(("language", "clause", "kind", "reason"), values, strict=True):
            if not isinstance(value, str) or not value.strip():
                raise f.fail(f"{where}.{key}", "must be a non-empty string", value)
        f.choice(values[2], f"{where}.kind", KINDS)
        if values[0] == ENGLISH:
            raise f.fail(f"{where}.language", "the English document prevails: its findings cannot be allowed", "en")
        out.append(Allowance(*(str(v) for v in values)))
    return tuple(out)


def run_audit(
    documents: Sequence[Path] | None = None,
    readings_dir: Path = READINGS_DIR,
    allow: Sequence[Allowance] = (),
) -> AuditResult:
    """Audit ``documents`` (default: the shipped ones).

    Raises:
        ReadingError: a document that cannot be read or has no usable reading, or a citation that does not hold.
    """
    readings = load_readings(readings_dir)
    docs = [Path(p) for p in (documents if documents else shipped_documents())]
    pairs = [(path, reading_for(path, readings, readings_dir)) for path in docs]
    english = next((read_document(p, r) for p, r in pairs if r.language == ENGLISH), None)
    if english is None:
        reading = next((r for r in readings.values() if r.language == ENGLISH), None)
        if reading is None:
            raise ReadingError(f"{readings_dir}: no reading of the English document, which prevails")
        english = read_document(DOCUMENTS_DIR / reading.document, reading)
    languages = []
    for path, reading in pairs:
        if reading.language == ENGLISH:
            diffs = compare_english(english)
            languages.append(LanguageAudit(english, "certified rules", rtp_implied(english), tuple(diffs)))
            continue
        doc = read_document(path, reading)
        diffs = compare_translation(doc, english)
        languages.append(LanguageAudit(doc, "English", rtp_implied(doc), tuple(diffs)))
    languages.sort(key=lambda lang: lang.lang != ENGLISH)  # the English first, then as given
    failing, allowed, used = [], [], set()
    for lang in languages:
        for d in lang.differences:
            match = next((a for a in allow if (a.lang, a.clause, a.kind) == (d.lang, d.clause, d.kind)), None)
            if match is not None:
                allowed.append(d)
                used.add(match)
            elif d.failing:
                failing.append(d)
    unused = tuple(a for a in allow if a not in used)
    return AuditResult(english, tuple(languages), tuple(failing), tuple(allowed), unused)
