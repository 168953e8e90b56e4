"""A strict linter for certification feature files: refuse, before anything runs, a file whose scenarios would
pass without checking what they say.

The Gherkin parser pytest-bdd uses reads a line it does not know as description text, so a mistyped first step
(``Gvien a player ...``) leaves a scenario with fewer steps, or none, that still passes and whose ``@clause:X``
tag still counts as coverage. This module reads each file line by line (its own reader: no pytest-bdd internals)
and refuses:

1. **An unknown keyword.** Inside a Background or Scenario (Outline, Template, Example) every line after the
   header must be a step (``Given``, ``When``, ``Then``, ``And``, ``But`` or ``*``, then a space), a table row
   (``|``), a doc string (``\"\"\"`` or `````` ``` ``````, whose content is not read), a ``#`` comment, a tag line
   before the next header, a blank line or the next section header. Under ``Examples:``/``Scenarios:`` only table
   rows (and comments, blanks, tags, headers) may follow. A line whose first word is within a case-insensitive
   Damerau-Levenshtein distance of 2 of a step keyword (``Gvien``, ``Whne``, ``THen``, ``Adn``) is named as a
   mistyped keyword, with the keyword meant; one like ``Scenaro:`` as a mistyped header. A first step that starts
   with ``And``, ``But`` or ``*`` is refused too (pytest-bdd refuses it when it collects the file).

   *Description text under a Background or Scenario header is refused, whatever its first word.* Gherkin allows
   it, but the shipped suite has none (every scenario states its purpose in its title; notes are ``#`` comments),
   the text is never run, and the "looks like a mistyped keyword" test alone would be arbitrary: at distance 2
   from ``And``, ``But`` and ``Then`` it already catches almost every English opening word (``A``, ``An``,
   ``The``, ``On``, ``It``) and still misses a first step whose keyword was lost altogether (``player alice has
   a balance ...``). Refusing it all means a broken first step is always refused. Description text under
   ``Feature:`` and ``Rule:`` is allowed (rule 2 below aside).
2. **A step outside a scenario.** A step line in the description of the Feature or of a Rule (above its first
   Background or Scenario) is description text, not run. Prose may start a line with a step keyword (the shipped
   ``refunds.feature`` opens its description with "When a round is cancelled ..."), so such a line is read as
   prose only when the next line continues it: not blank, not a step, comment, tag, table row or header, and
   indented the same. Any other is refused. A description line like ``Scenaro:`` or ``background:`` (a mistyped
   header, so the scenario under it would vanish) is refused as well.
3. **A scenario that asserts nothing**: no steps, or no ``Then`` step (``And``, ``But`` and ``*`` continue the
   step kind before them, as in pytest-bdd; a Background's ``Then`` does not count for its scenarios). An
   ``Examples:`` table without a row of values (the outline would run for none) is refused too.
4. **A scenario without a clause**: no ``@clause:ID`` tag on it, its Rule or its Feature (the tags on an
   ``Examples:`` line do not count: the clause matrix reads only the scenario's and the feature's). With
   ``known_clauses`` given, every ``@clause:X`` whose ``X`` is not one of them is refused, where it is written,
   naming ``clauses_from``. Callers that certify against the rules catalogue pass
   :func:`harness.cert.report.clauses.rule_clauses` (``fixtures/rules/RULES.md``).
5. **A file that cannot be read as UTF-8** (or not at all): one error at line 1. A leading byte-order mark is
   refused (pytest-bdd would not see the ``Feature:`` line behind it).

Also refused, since each hides or drops a scenario: two scenarios with the same title in one file (pytest-bdd
keeps only the last), text before ``Feature:``, a second ``Feature:``, a file with no ``Feature:``, tags not
followed by a Feature, Rule, Scenario or Examples header, an ``Examples:`` outside a scenario, a table row or doc
string that follows no step, a doc string never closed, and a ``# language:`` other than English (the reader
knows the English keywords only).

Errors come in file order, then line order; each says what is wrong and what to write instead.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

STEP_KEYWORDS = ("Given", "When", "Then", "And", "But")
"""The English step keywords (each is followed by a space; so is ``*``)."""

DEFAULT_CLAUSES_FROM = "the rules catalogue (fixtures/rules/RULES.md)"

_FEATURE = ("Feature", "Business Need", "Ability")
_RULE = ("Rule",)
_BACKGROUND = ("Background",)
_SCENARIO = ("Scenario Outline", "Scenario Template", "Scenario", "Example")
_EXAMPLES = ("Examples", "Scenarios")
_HEADERS = (
    *((k, "feature") for k in _FEATURE),
    *((k, "rule") for k in _RULE),
    *((k, "background") for k in _BACKGROUND),
    *((k, "scenario") for k in _SCENARIO),
    *((k, "examples") for k in _EXAMPLES),
)
# headers a description line may be a typo of: long enough that prose rarely comes this close ("Rule", "Feature"
# and "Ability" are left out: "Role:", "Note:" are prose)
_MISTYPED_HEADERS = (
    "Scenario Outline",
    "Scenario Template",
    "Scenario",
    "Scenarios",
    "Example",
    "Examples",
    "Background",
)
_LANGUAGE = re.compile(r"^\s*#\s*language\s*:\s*([a-zA-Z\-_]+)\s*$")
_DOC_STRINGS = ('"""', "```")
_CLAUSE = "@clause:"
_STEP_FIX = "start the step with Given, When, Then, And or But"


@dataclass(frozen=True, slots=True)
class LintError:
    """One refusal: the file, the line (1-based; 0 names the path itself, e.g. a folder with no feature file),
    what is wrong and what to write instead."""

    path: Path
    line: int
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.problem} ({self.fix})"


def edit_distance(a: str, b: str) -> int:
    """The Damerau-Levenshtein distance (optimal string alignment: insertions, deletions, substitutions and swaps
    of two adjacent characters, each 1) between ``a`` and ``b``, case-sensitive."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def mistyped_step_keyword(word: str) -> str | None:
    """The step keyword ``word`` looks like a typo of (case-insensitive distance at most 2, trailing ``:,.;``
    ignored; the closest, the first of Given, When, Then, And, But on a tie), or None."""
    text = word.rstrip(":,.;").lower()
    if not text:
        return None
    best = min(STEP_KEYWORDS, key=lambda k: edit_distance(text, k.lower()))  # the first of the closest
    return best if edit_distance(text, best.lower()) <= 2 else None


def _mistyped_header(stripped: str) -> str | None:
    """The header keyword a line like ``Scenaro: ...`` looks like a typo of (case-insensitive; distance 1, 2 for a
    keyword of 9 letters or more), or None."""
    if ":" not in stripped:
        return None
    prefix = stripped.split(":", 1)[0].strip().lower()
    if not prefix or len(prefix.split()) > 2:
        return None
    for keyword in _MISTYPED_HEADERS:
        if edit_distance(prefix, keyword.lower()) <= (1 if len(keyword) < 9 else 2):
            return keyword
    return None


def _header(stripped: str) -> tuple[str, str] | None:
    """(keyword, kind) when the line is a section header (``Scenario: ...``), as Gherkin matches it."""
    for keyword, kind in _HEADERS:
        if stripped.startswith(keyword + ":"):
            return keyword, kind
    return None


def _step_keyword(stripped: str) -> str | None:
    """The step keyword a line starts with (``Given``, ..., ``*``; followed by a space, as Gherkin wants), or None."""
    for keyword in (*STEP_KEYWORDS, "*"):
        if stripped.startswith(keyword + " "):
            return keyword
    return None


def _indent(raw: str) -> int:
    return len(raw) - len(raw.lstrip())


def _excerpt(stripped: str, width: int = 40) -> str:
    return stripped if len(stripped) <= width else stripped[: width - 3] + "..."


@dataclass
class _Scenario:
    """A scenario being read: where it starts, its steps' kinds and its clause tags."""

    line: int
    keyword: str
    tags: set[str]
    steps: int = 0
    then: bool = False
    kind: str = ""
    examples: list[tuple[int, int]] = field(default_factory=list)  # (Examples line, table rows)


@dataclass
class _Reader:
    """One file, read line by line (see the module docstring for what it refuses)."""

    path: Path
    lines: list[str]
    known: frozenset[str] | None
    clauses_from: str
    errors: list[LintError] = field(default_factory=list)
    state: str = "top"  # top, feature, rule, background, scenario, examples
    feature_tags: set[str] = field(default_factory=set)
    rule_tags: set[str] = field(default_factory=set)
    pending: list[str] = field(default_factory=list)
    pending_line: int = 0
    scenario: _Scenario | None = None
    seen_step: bool = False  # in the current Background or Scenario body
    last: str = ""  # what the last non-blank, non-comment line of a body was: step, table, docstring
    doc_string: tuple[str, int] | None = None  # (separator, opening line) while inside one
    titles: dict[str, int] = field(default_factory=dict)
    feature_line: int = 0
    header: str = ""
    told_top: bool = False  # text before Feature: was refused (once per file)

    def refuse(self, line: int, problem: str, fix: str) -> None:
        self.errors.append(LintError(self.path, line, problem, fix))

    def run(self) -> list[LintError]:
        for number, raw in enumerate(self.lines, 1):
            self.read(number, raw)
        if self.doc_string is not None:
            sep, opened = self.doc_string
            self.refuse(opened, f"doc string opened here is never closed with {sep}", f"close it with a {sep} line")
        self.end_scenario()
        if self.pending:
            self.orphan_tags()
        if not self.feature_line and not self.told_top:
            self.refuse(1, "no Feature: line", "start the file with tags, # comments and a Feature: line")
        return sorted(self.errors, key=lambda e: e.line)

    def read(self, number: int, raw: str) -> None:
        stripped = raw.strip()
        if self.doc_string is not None:
            if stripped.startswith(self.doc_string[0]):
                self.doc_string = None
                self.last = "docstring"
            return
        if number == 1 and raw.startswith("\ufeff"):
            self.refuse(1, "the file starts with a byte-order mark", "save it as UTF-8 without a BOM")
            stripped = stripped.lstrip("\ufeff").strip()
        if not stripped:
            return
        if stripped.startswith("#"):
            language = _LANGUAGE.match(raw)
            if language and language.group(1) != "en":
                self.refuse(
                    number,
                    f"# language: {language.group(1)}: only English Gherkin is linted",
                    "write the file with the English keywords (Feature, Scenario, Given, ...)",
                )
            return
        if stripped.startswith("@"):
            self.tags(number, stripped)
            return
        header = _header(stripped)
        if header is not None:
            self.section(number, stripped, *header)
            return
        if self.pending:
            self.orphan_tags()
        if self.state == "top":
            if not self.told_top:
                self.told_top = True
                self.refuse(
                    number,
                    f"text before Feature: {_excerpt(stripped)!r}",
                    "start the file with tags, # comments and a Feature: line",
                )
        elif self.state in ("feature", "rule"):
            self.description(number, raw, stripped)
        elif self.state == "examples":
            self.examples_line(number, stripped)
        else:
            self.body(number, stripped)

    # ------------------------------------------------------------------------------------------------ tags
    def tags(self, number: int, stripped: str) -> None:
        """A tag line, read as Gherkin reads it (``@a @b # comment``); kept for the next header."""
        text = re.split(r"\s#", stripped, maxsplit=1)[0].strip()
        if not self.pending:
            self.pending_line = number
        for item in text.split("@")[1:]:
            tag = "@" + item.strip()
            if re.search(r"\s", tag):
                self.refuse(number, f"tag {tag!r} contains whitespace", "write each tag as one word: @clause:SH-3")
                continue
            self.pending.append(tag)
            if tag.startswith(_CLAUSE):
                self.check_clause(number, tag[len(_CLAUSE) :])

    def check_clause(self, number: int, clause: str) -> None:
        if not clause:
            self.refuse(number, "@clause: tag with no clause ID", "write the clause ID after it: @clause:SH-3")
        elif self.known is not None and clause not in self.known:
            near = difflib.get_close_matches(clause, sorted(self.known), n=1)
            hint = f"did you mean @clause:{near[0]}?" if near else f"use an ID from {self.clauses_from}"
            self.refuse(number, f"unknown clause {clause!r}: not in {self.clauses_from}", hint)

    def orphan_tags(self) -> None:
        self.refuse(
            self.pending_line,
            "tags not followed by a Feature:, Rule:, Scenario: or Examples: line",
            "put the tags on the line right above the header they tag",
        )
        self.pending = []

    def take_tags(self) -> set[str]:
        tags, self.pending = set(self.pending), []
        return tags

    # ------------------------------------------------------------------------------------------------ headers
    def section(self, number: int, stripped: str, keyword: str, kind: str) -> None:
        if kind == "feature":
            if self.feature_line:
                self.refuse(number, f"a second Feature: (the first is at line {self.feature_line})", "one per file")
            else:
                self.feature_line = number
                self.feature_tags = self.take_tags()
                self.state = "feature"
            self.pending = []
            return
        if not self.feature_line and not self.told_top:
            self.refuse(number, f"{keyword}: before Feature:", "start the file with a Feature: line")
            self.told_top = True
        if kind == "examples":
            self.examples_header(number, keyword)
            return
        self.end_scenario()
        self.seen_step, self.last, self.header = False, "", keyword
        if kind == "rule":
            self.rule_tags = self.take_tags()
            self.state = "rule"
        elif kind == "background":
            if self.pending:
                self.orphan_tags()
            self.state = "background"
        else:
            self.scenario = _Scenario(number, keyword, self.take_tags() | self.rule_tags | self.feature_tags)
            self.state = "scenario"
            title = stripped[len(keyword) + 1 :].strip()
            if title in self.titles:
                self.refuse(
                    number,
                    f"a second scenario titled {_excerpt(title)!r} (the first is at line {self.titles[title]})",
                    "give each scenario of a file its own title: pytest-bdd keeps only the last of the same title",
                )
            else:
                self.titles[title] = number

    def examples_header(self, number: int, keyword: str) -> None:
        self.pending = []  # their clause tags were checked; they do not count as the scenario's clauses
        if self.scenario is None or self.state not in ("scenario", "examples"):
            self.refuse(
                number,
                f"{keyword}: outside a scenario",
                "put Examples: after the steps of a Scenario Outline",
            )
            return
        self.scenario.examples.append((number, 0))
        self.state = "examples"

    def end_scenario(self) -> None:
        scenario, self.scenario = self.scenario, None
        if scenario is None:
            return
        what = f"a scenario must assert something: this {scenario.keyword}"
        if not scenario.steps:
            self.refuse(scenario.line, f"{what} has no steps", "write its Given/When steps and a Then step")
        elif not scenario.then:
            self.refuse(scenario.line, f"{what} has no Then step", "add a Then step that checks the outcome")
        for line, rows in scenario.examples:
            if rows < 2:
                self.refuse(
                    line,
                    "Examples: table with no row of values: the outline runs for none",
                    "give it a header row and at least one row of values",
                )
        clauses = [t for t in scenario.tags if t.startswith(_CLAUSE) and len(t) > len(_CLAUSE)]
        if not clauses:
            near = sorted(t for t in scenario.tags if "clause" in t.lower() and not t.startswith(_CLAUSE))
            also = f" ({', '.join(near)} is not one)" if near else ""
            self.refuse(
                scenario.line,
                f"{scenario.keyword} has no @clause tag{also}",
                "tag it, its Rule or its Feature with @clause:ID (an ID of the rules catalogue, e.g. @clause:SH-3)",
            )

    # ------------------------------------------------------------------------------------------------ lines
    def description(self, number: int, raw: str, stripped: str) -> None:
        """A line of a Feature's or Rule's description: prose, unless it is a step or a mistyped header."""
        where = "Feature" if self.state == "feature" else "Rule"
        keyword = _step_keyword(stripped)
        if keyword is not None:
            if not self._continued(number, raw):
                self.refuse(
                    number,
                    f"a step outside a scenario ({where}: description text, not run): {_excerpt(stripped)!r}",
                    f"put it under a Background: or Scenario: header; if it is prose, reword it so the line "
                    f"does not start with {keyword!r}",
                )
            return
        header = _mistyped_header(stripped)
        if header is not None:
            self.refuse(
                number,
                f"unknown keyword {stripped.split(':', 1)[0]!r}: read as {where}: description text, so the lines "
                f"under it are no scenario",
                f"did you mean '{header}:'?",
            )

    def _continued(self, number: int, raw: str) -> bool:
        """Whether the line after ``number`` (1-based) continues it as prose: the same indent, not blank, and not
        a step, comment, tag, table row, doc string or header."""
        if number >= len(self.lines):
            return False
        following = self.lines[number]
        nxt = following.strip()
        return bool(
            nxt
            and _indent(following) == _indent(raw)
            and _step_keyword(nxt) is None
            and _header(nxt) is None
            and not nxt.startswith(("#", "@", "|", *_DOC_STRINGS))
        )

    def examples_line(self, number: int, stripped: str) -> None:
        assert self.scenario is not None
        if stripped.startswith("|"):
            line, rows = self.scenario.examples[-1]
            self.scenario.examples[-1] = (line, rows + 1)
        elif _step_keyword(stripped) is not None:
            self.refuse(
                number,
                "a step after Examples: belongs to no scenario",
                "put the steps above Examples:, or start a new Scenario: above them",
            )
        else:
            self.refuse(
                number,
                f"unknown keyword {stripped.split()[0]!r}: only table rows may follow Examples:",
                "write the examples as a table (| name | ... |), or make the line a # comment",
            )

    def body(self, number: int, stripped: str) -> None:
        """A line of a Background's or Scenario's body (after its header)."""
        keyword = _step_keyword(stripped)
        if keyword is not None:
            self.step(number, keyword)
            return
        if stripped.startswith("|") and self.last in ("step", "table"):
            self.last = "table"
            return
        separator = next((s for s in _DOC_STRINGS if stripped.startswith(s)), None)
        if separator is not None and self.last == "step":
            self.doc_string = (separator, number)
            self.last = "docstring"
            return
        if (stripped.startswith("|") or separator is not None) and self.seen_step:
            self.refuse(
                number,
                "a table row or doc string that follows no step",
                "put a step's data table or doc string right under the step (one of them per step)",
            )
            return
        self.unknown(number, stripped)

    def unknown(self, number: int, stripped: str) -> None:
        word = stripped.split()[0]
        if self.seen_step:
            problem = f"unknown keyword {word!r}: the line is not a step, so it is not run"
        else:
            problem = f"unknown keyword {word!r}: description text under {self.header}: is not run"
        header = _mistyped_header(stripped)
        meant = mistyped_step_keyword(word)
        if header is not None:
            fix = f"did you mean '{header}:'?"
        elif meant is not None:
            fix = f"{_STEP_FIX}: did you mean {meant!r}?"
        else:
            fix = f"{_STEP_FIX}, or make the line a # comment"
        self.refuse(number, problem, fix)

    def step(self, number: int, keyword: str) -> None:
        if not self.seen_step and keyword in ("And", "But", "*"):
            self.refuse(
                number,
                f"the first step of a {self.header} starts with {keyword!r}",
                "start the first step with Given, When or Then",
            )
        self.seen_step = True
        self.last = "step"
        scenario = self.scenario if self.state == "scenario" else None
        if scenario is None:
            return
        if keyword in ("Given", "When", "Then"):
            scenario.kind = keyword
        scenario.steps += 1
        scenario.then = scenario.then or scenario.kind == "Then"


def lint_text(
    text: str,
    path: Path,
    known_clauses: Collection[str] | None = None,
    *,
    clauses_from: str = DEFAULT_CLAUSES_FROM,
) -> list[LintError]:
    """Every refusal for one feature file's ``text`` (``path`` names it in the errors), in line order; empty when
    the file is clean. ``known_clauses``: when given, a ``@clause:X`` with ``X`` not in it is refused, the message
    naming ``clauses_from``. Lines are split as Gherkin splits them (``\\n``, ``\\r\\n``, ``\\r``). Raises nothing."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    known = frozenset(known_clauses) if known_clauses is not None else None
    return _Reader(path, lines, known, clauses_from).run()


def lint_files(
    paths: Iterable[Path],
    known_clauses: Collection[str] | None = None,
    *,
    clauses_from: str = DEFAULT_CLAUSES_FROM,
) -> list[LintError]:
    """Every refusal for the files ``paths``, in the order given, each file's in line order. A file that cannot
    be read, or not as UTF-8, gives one error at line 1 (and no other). Raises nothing."""
    errors: list[LintError] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            errors.append(LintError(path, 1, f"cannot be read as UTF-8: {exc}", "save the file as UTF-8"))
            continue
        except OSError as exc:
            errors.append(LintError(path, 1, f"cannot be read: {exc.strerror or exc}", "name a readable file"))
            continue
        errors += lint_text(text, path, known_clauses, clauses_from=clauses_from)
    return errors


def feature_files(folders: Iterable[Path]) -> list[Path]:
    """Every ``*.feature`` file under each folder (recursively), each folder's sorted, folders in the order
    given, each file once."""
    seen: dict[Path, None] = {}
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*.feature") if p.is_file()):
            seen.setdefault(path, None)
    return list(seen)


def lint_folders(
    folders: Iterable[Path],
    known_clauses: Collection[str] | None = None,
    *,
    clauses_from: str = DEFAULT_CLAUSES_FROM,
) -> list[LintError]:
    """Every refusal for the ``*.feature`` files under ``folders`` (:func:`feature_files`), as
    :func:`lint_files` gives them. A folder that does not exist or holds no feature file is refused too (one
    error, line 0, in the folder's place): a suite that lints nothing must not pass. Raises nothing."""
    errors: list[LintError] = []
    seen: set[Path] = set()
    for folder in folders:
        files = feature_files([folder])
        if not folder.is_dir():
            errors.append(LintError(folder, 0, "no such folder", "name a folder of .feature files"))
        elif not files:
            errors.append(LintError(folder, 0, "no .feature file under this folder", "name a folder that has some"))
        errors += lint_files([f for f in files if f not in seen], known_clauses, clauses_from=clauses_from)
        seen.update(files)
    return errors
