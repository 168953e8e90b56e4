"""The shipped suite's version, its changelog of scenario behaviour, a lab's pin, and the digest that keeps them true.

The certification suite (``features/`` and the step library :mod:`harness.cert.steps`) carries a version
``MAJOR.MINOR`` in ``features/SUITE_VERSION``. ``features/CHANGELOG.md`` says, per version, what changed meaning for a
lab: one entry a line under a ``## MAJOR.MINOR`` heading, in the form::

    - KIND SUBJECT: what changed, and what a lab's scenario needs now

KIND is one of :data:`KINDS` (``changed``, ``added``, ``removed``, ``balances``: needs new opening balances) and
SUBJECT one of ``scenario features/FILE.feature "TITLE"``, ``feature features/FILE.feature`` (every scenario of the
file), ``step "PATTERN"`` (the step's pytest-bdd pattern as written in the step library) or ``suite`` (everything);
an indented line continues the entry above it.

A lab pins the suite version it certified against in its workspace, ``xocdia-hil.yaml`` in the folder certify runs
from (``suite: "1.1"``; ``xocdia-hil init`` writes it). :func:`suite_notice` is what ``xocdia-hil certify`` prints:
the installed version, and with an older pin one warning line per changelog entry since the pin that touches the
run's selected shipped scenarios or a step its own features use.

``features/SUITE_DIGEST.json`` holds, with the version, a digest of each shipped step's pattern and docstring and of
each shipped scenario's text (its tags, Background and steps, tables and Examples). ``python -m
harness.cert.suite_version check`` fails on any difference and says what to do; ``update`` rewrites the digest only
when the version was raised and the changelog names every changed, added or removed scenario and step under a newer
version than the digest's.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import total_ordering
from pathlib import Path

from harness.errors import InputError
from harness.files import FEATURES

__all__ = [
    "CHANGELOG",
    "DIGEST",
    "KINDS",
    "SUBJECTS",
    "VERSION_FILE",
    "WORKSPACE_FILE",
    "Change",
    "Digest",
    "DigestDiff",
    "ShippedScenario",
    "SuiteVersion",
    "compare",
    "current_digest",
    "installed_version",
    "read_changelog",
    "read_pin",
    "shipped_scenarios",
    "suite_changes",
    "suite_notice",
    "update_refusals",
]

VERSION_FILE = FEATURES / "SUITE_VERSION"
CHANGELOG = FEATURES / "CHANGELOG.md"
DIGEST = FEATURES / "SUITE_DIGEST.json"
#: The lab's workspace file that pins the suite version, in the folder certify runs from.
WORKSPACE_FILE = "xocdia-hil.yaml"
#: What a changelog entry may say happened to its subject.
KINDS = ("changed", "added", "removed", "balances")
#: What a changelog entry may be about.
SUBJECTS = ("scenario", "feature", "step", "suite")
_WORKSPACE_KEYS = ("suite",)
_VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)")
_ENTRY = re.compile(
    r"-\s+(?P<kind>\w+)\s+(?:scenario\s+(?P<file>\S+\.feature)\s+\"(?P<title>[^\"]+)\""
    r"|feature\s+(?P<feature>\S+\.feature)|step\s+\"(?P<step>.+?)\"|(?P<suite>suite))\s*:\s*(?P<text>.*)"
)
_FORM = (
    f'"- KIND SUBJECT: TEXT", KIND one of {", ".join(KINDS)}, SUBJECT one of scenario features/FILE.feature "TITLE",'
    ' feature features/FILE.feature, step "PATTERN", suite'
)


@total_ordering
@dataclass(frozen=True, slots=True)
class SuiteVersion:
    """A suite version ``MAJOR.MINOR``, ordered by number (``1.10`` is after ``1.9``)."""

    major: int
    minor: int

    @classmethod
    def parse(cls, raw: object, where: str) -> SuiteVersion:
        """The version ``raw`` writes.

        Raises:
            InputError: ``raw`` is not text of the form ``MAJOR.MINOR`` (the message names ``where``; a YAML number
                such as ``suite: 1.10`` is refused, since YAML reads it as 1.1: it must be quoted).
        """
        if not isinstance(raw, str):
            raise InputError(f'{where}: must be a quoted suite version "MAJOR.MINOR", e.g. "1.1"; got {raw!r}')
        found = _VERSION.fullmatch(raw.strip())
        if found is None:
            raise InputError(f'{where}: must be a suite version "MAJOR.MINOR", e.g. "1.1"; got {raw!r}')
        return cls(int(found.group(1)), int(found.group(2)))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, SuiteVersion):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


@dataclass(frozen=True, slots=True)
class Change:
    """One changelog entry: the version that made it, its kind (:data:`KINDS`), its subject (:data:`SUBJECTS`) and
    what it names (``features/FILE.feature`` and a title for a scenario, the file for a feature, the pattern for a
    step, ``""`` for the suite), with the entry's text and its line in the changelog."""

    version: SuiteVersion
    kind: str
    subject: str
    file: str
    name: str
    text: str
    line: int

    def describe(self) -> str:
        """The entry in one line, as certify prints it."""
        what = {
            "scenario": f'{self.file} "{self.name}"',
            "feature": f"{self.file} (every scenario)",
            "step": f'step "{self.name}"',
            "suite": "the whole suite",
        }[self.subject]
        return f"suite {self.version}: {self.kind} {what}: {self.text}"


def installed_version(path: Path = VERSION_FILE) -> SuiteVersion:
    """The installed suite's version (``features/SUITE_VERSION``).

    Raises:
        InputError: the file is missing or does not hold one ``MAJOR.MINOR``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the suite version ({exc.strerror or exc})") from None
    return SuiteVersion.parse(text.strip(), path.name)


def read_changelog(path: Path = CHANGELOG) -> list[Change]:
    """Every entry of the changelog, newest version first as written.

    Raises:
        InputError: an unreadable file, a heading that is not ``## MAJOR.MINOR``, an entry before any heading or not
            of the form ``- KIND SUBJECT: TEXT`` (:data:`KINDS`, :data:`SUBJECTS`), naming the line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the changelog ({exc.strerror or exc})") from None
    changes: list[Change] = []
    version: SuiteVersion | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        where = f"{path.name}:{number}"
        if raw.startswith("## "):
            version = SuiteVersion.parse(raw[3:].strip(), f"{where}: heading")
            continue
        if raw.startswith("- "):
            found = _ENTRY.fullmatch(raw.strip())
            if found is None or found.group("kind") not in KINDS:
                raise InputError(f"{where}: an entry must read {_FORM}; got {raw.strip()!r}")
            if version is None:
                raise InputError(f"{where}: an entry before any '## MAJOR.MINOR' heading")
            subject = next(s for s in ("file", "feature", "step", "suite") if found.group(s))
            file = found.group("file") or found.group("feature") or ""
            name = found.group("title") or found.group("step") or ""
            kind = {"file": "scenario"}.get(subject, subject)
            changes.append(Change(version, found.group("kind"), kind, file, name, found.group("text").strip(), number))
        elif raw.startswith((" ", "\t")) and raw.strip() and changes and version is not None:
            last = changes[-1]
            text = f"{last.text} {raw.strip()}" if last.text else raw.strip()
            changes[-1] = Change(last.version, last.kind, last.subject, last.file, last.name, text, last.line)
    return changes


def read_pin(folder: Path) -> SuiteVersion | None:
    """The suite version the lab's workspace pins (``suite`` in ``folder/xocdia-hil.yaml``); None without the file.

    Raises:
        InputError: a file that is not YAML, not a mapping, has an unknown key, or a ``suite`` that is not a quoted
            ``"MAJOR.MINOR"`` (the message names the file and the field).
    """
    import yaml

    path = folder / WORKSPACE_FILE
    if not path.is_file():
        return None
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(f"{WORKSPACE_FILE}: cannot read it as YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise InputError(f'{WORKSPACE_FILE}: must be a mapping, e.g. suite: "1.1"; got {raw!r}')
    unknown = sorted(str(k) for k in raw if k not in _WORKSPACE_KEYS)
    if unknown:
        raise InputError(f"{WORKSPACE_FILE}: unknown field {unknown[0]!r}; allowed: {', '.join(_WORKSPACE_KEYS)}")
    if "suite" not in raw:
        return None
    return SuiteVersion.parse(raw["suite"], f"{WORKSPACE_FILE}: suite")


# --- the shipped scenarios and steps ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShippedScenario:
    """A scenario of the shipped suite: its file (``features/...``), title, tags (the feature's, its Rule's and its
    own, without ``@``), the step texts it runs (its Background's first), and its text as the digest reads it."""

    file: str
    title: str
    tags: frozenset[str]
    steps: tuple[str, ...]
    text: str

    @property
    def key(self) -> str:
        return f"{self.file}: {self.title}"


def shipped_scenarios(folder: Path = FEATURES) -> list[ShippedScenario]:
    """Every scenario of the ``.feature`` files under ``folder``, file by file in sorted order, with the prefix
    ``features/``; a title used twice in one file gets `` #2``, `` #3`` ... Raises whatever pytest-bdd's parser
    raises on a file it cannot parse."""
    from pytest_bdd.parser import FeatureParser

    out: list[ShippedScenario] = []
    for path in sorted(folder.rglob("*.feature")):
        rel = path.relative_to(folder).as_posix()
        feature = FeatureParser(str(folder), rel).parse()
        seen: dict[str, int] = {}
        for template in feature.scenarios.values():
            tags = set(feature.tags) | set(template.tags) | (set(template.rule.tags) if template.rule else set())
            count = seen[template.name] = seen.get(template.name, 0) + 1
            title = template.name if count == 1 else f"{template.name} #{count}"
            lines = [" ".join(sorted(tags)), template.keyword]
            for step in template.steps:
                lines.append(f"{step.keyword} {step.name}")
                if step.docstring is not None:
                    lines.append(repr(step.docstring))
                if step.datatable is not None:
                    lines.append(repr([[c.value for c in row.cells] for row in step.datatable.rows]))
            for examples in template.examples:
                lines.append(repr([sorted(ctx.items()) for ctx in examples.as_contexts()]))
            steps = tuple(step.name for step in template.steps)
            out.append(ShippedScenario(f"features/{rel}", title, frozenset(tags), steps, "\n".join(lines)))
    return out


def _step_docs() -> dict[str, str]:
    """Every step of the step library: its pytest-bdd pattern → the pattern, type and docstring the digest reads."""
    from pytest_bdd.steps import step_function_context_registry

    from harness.cert.steps import STEP_MODULES

    for name in STEP_MODULES:
        importlib.import_module(name)
    out: dict[str, str] = {}
    for context in list(step_function_context_registry.values()):
        if not context.step_func.__module__.startswith("harness.cert.steps."):
            continue
        pattern = str(context.parser.name)
        out[pattern] = f"{context.type}\n{pattern}\n{inspect.getdoc(context.step_func) or ''}"
    return out


@dataclass(frozen=True, slots=True)
class Digest:
    """The digest of the suite: its version, and a hash of each step (by pattern) and scenario (by file: title)."""

    version: SuiteVersion
    steps: dict[str, str]
    scenarios: dict[str, str]

    def as_json(self) -> str:
        return json.dumps(
            {"version": str(self.version), "steps": self.steps, "scenarios": self.scenarios}, indent=1, sort_keys=True
        )


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def current_digest(folder: Path = FEATURES, version: SuiteVersion | None = None) -> Digest:
    """The digest of the installed steps and of the scenarios under ``folder``, under ``version`` (default: the
    installed one, :func:`installed_version`)."""
    return Digest(
        version or installed_version(),
        {pattern: _hash(doc) for pattern, doc in sorted(_step_docs().items())},
        {s.key: _hash(s.text) for s in shipped_scenarios(folder)},
    )


def read_digest(path: Path = DIGEST) -> Digest:
    """The stored digest.

    Raises:
        InputError: a missing or malformed digest file (run ``python -m harness.cert.suite_version update``).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Digest(SuiteVersion.parse(raw["version"], f"{path.name}: version"), raw["steps"], raw["scenarios"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            f"{path}: cannot read the suite digest ({exc}); run python -m harness.cert.suite_version update"
        ) from None


@dataclass(frozen=True, slots=True)
class DigestDiff:
    """What differs between a stored digest and the suite as it is: per subject (``step``, ``scenario``), the names
    changed, added and removed."""

    changed: tuple[tuple[str, str], ...]
    added: tuple[tuple[str, str], ...]
    removed: tuple[tuple[str, str], ...]

    @property
    def empty(self) -> bool:
        return not (self.changed or self.added or self.removed)

    def lines(self) -> list[str]:
        """One line per difference, e.g. ``changed step "in round {n:d} ..."``."""
        out = []
        for kind, items in (("changed", self.changed), ("added", self.added), ("removed", self.removed)):
            out += [f"{kind} {subject} {_quoted(subject, name)}" for subject, name in items]
        return out


def _quoted(subject: str, name: str) -> str:
    if subject == "scenario":
        file, title = name.split(": ", 1)
        return f'{file} "{title}"'
    return f'"{name}"'


def compare(stored: Digest, now: Digest) -> DigestDiff:
    """The differences between ``stored`` and ``now``, steps first, each list in sorted order."""
    changed: list[tuple[str, str]] = []
    added: list[tuple[str, str]] = []
    removed: list[tuple[str, str]] = []
    for subject, old, new in (("step", stored.steps, now.steps), ("scenario", stored.scenarios, now.scenarios)):
        changed += [(subject, k) for k in sorted(old.keys() & new.keys()) if old[k] != new[k]]
        added += [(subject, k) for k in sorted(new.keys() - old.keys())]
        removed += [(subject, k) for k in sorted(old.keys() - new.keys())]
    return DigestDiff(tuple(changed), tuple(added), tuple(removed))


def _names(change: Change, subject: str, name: str) -> bool:
    """True when the changelog entry ``change`` names the step or scenario ``name``."""
    if subject == "step":
        return change.subject == "step" and change.name == name
    file, title = name.split(": ", 1)
    return (change.subject == "scenario" and change.file == file and change.name == title) or (
        change.subject == "feature" and change.file == file
    )


def update_refusals(stored: Digest, now: Digest, changes: Sequence[Change]) -> list[str]:
    """Why the digest may not be rewritten to ``now``: empty when it may. It may when nothing differs from
    ``stored``; otherwise only when ``now``'s version is above ``stored``'s, the changelog has a section for it, and
    every changed, added or removed step and scenario is named by an entry of a version above ``stored``'s."""
    diff = compare(stored, now)
    if diff.empty:
        return [] if now.version >= stored.version else [f"SUITE_VERSION {now.version} is below {stored.version}"]
    refusals: list[str] = []
    if not now.version > stored.version:
        refusals.append(
            f"features/SUITE_VERSION is still {now.version}: raise it (e.g. to {stored.version.major}."
            f"{stored.version.minor + 1}) for a change of the suite's behaviour"
        )
    if not any(c.version == now.version for c in changes):
        refusals.append(f"features/CHANGELOG.md has no '## {now.version}' section")
    newer = [c for c in changes if c.version > stored.version]
    for kind, items in (("changed", diff.changed), ("added", diff.added), ("removed", diff.removed)):
        for subject, name in items:
            if not any(_names(c, subject, name) for c in newer):
                refusals.append(
                    f"features/CHANGELOG.md names no {kind} {subject} {_quoted(subject, name)} after {stored.version}"
                    f" (add '- {kind} {subject} {_quoted(subject, name)}: what it means for a lab')"
                )
    return refusals


# --- what certify prints ----------------------------------------------------------------------------------------


def _selected(scenarios: Iterable[ShippedScenario], tags: str) -> list[ShippedScenario]:
    from harness.cert.report.clauses import matches

    return [s for s in scenarios if matches(tags, [f"@{t}" for t in s.tags])]


def _own_steps(folders: Sequence[Path]) -> list[str]:
    """The step texts of the lab's own features (the ``.feature`` files under ``folders``), outlines unrendered."""
    from harness.cert.gherkin_lint import feature_files

    steps = []
    keywords = ("Given ", "When ", "Then ", "And ", "But ", "* ")
    for path in feature_files(folders):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # the lint that runs before any scenario names such a file
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith(keywords):
                steps.append(line.split(" ", 1)[1].strip() if " " in line else "")
    return steps


def _uses(pattern: str, texts: Sequence[str]) -> bool:
    """True when a step text of ``texts`` is a use of the step ``pattern``: matched by the step library's own parser
    of that pattern where it has one (a ``parse`` or a regular-expression pattern), else read as a ``parse`` pattern
    (a removed step). An outline's ``<placeholder>`` stands for any value."""
    from pytest_bdd import parsers
    from pytest_bdd.steps import step_function_context_registry

    _step_docs()  # every step module imported, so the registry holds the library's parsers
    known = [c.parser for c in list(step_function_context_registry.values()) if str(c.parser.name) == pattern]
    if known:
        rendered = [re.sub(r"<\w+>", "0", t) for t in texts]
        return any(p.is_matching(t) for p in known for t in [*texts, *rendered])
    try:
        removed = parsers.parse(pattern)
    except (ValueError, re.error):
        return pattern in texts
    loose = re.compile(re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(pattern)) + r"\Z")
    return any(removed.is_matching(t) or ("<" in t and loose.match(t)) for t in texts)


def _touching(own_folders: Sequence[Path], tags: str, shipped: bool) -> Callable[[Change], bool]:
    """Whether a changelog entry touches the run: the whole suite; a scenario or feature among the selected shipped
    scenarios (``shipped``: the run includes the shipped suite; ``tags``: its tag expression), or any removed shipped
    scenario; a step that a selected shipped scenario or the lab's own features (``own_folders``) use."""
    selected = _selected(shipped_scenarios(), tags) if shipped else []
    keys = {(s.file, s.title) for s in selected}
    files = {s.file for s in selected}
    used = [text for s in selected for text in s.steps] + _own_steps(own_folders)

    def touches(change: Change) -> bool:
        return (
            change.subject == "suite"
            or (
                change.subject == "scenario"
                and ((change.file, change.name) in keys or (shipped and change.kind == "removed"))
            )
            or (change.subject == "feature" and change.file in files)
            or (change.subject == "step" and _uses(change.name, used))
        )

    return touches


def suite_notice(
    pin: SuiteVersion | None,
    own_folders: Sequence[Path],
    tags: str,
    shipped: bool,
    installed: SuiteVersion | None = None,
    changes: Sequence[Change] | None = None,
) -> list[str]:
    """What certify prints about the suite version: first ``suite X.Y`` and the pin, then, where ``pin`` is older
    than the installed suite, one warning line per changelog entry after ``pin`` that touches the run: a scenario or
    feature among the selected shipped scenarios (``shipped``: the run includes the shipped suite; ``tags``: its tag
    expression), a step that a selected shipped scenario or the lab's own features (``own_folders``) use, or the
    whole suite. A pin newer than the installed suite is one warning line too.

    Raises:
        InputError: an unreadable SUITE_VERSION or changelog (naming the file and line).
    """
    installed = installed or installed_version()
    if pin is None:
        return [
            f'suite {installed} (not pinned: write suite: "{installed}" in {WORKSPACE_FILE} to be told what changes'
            " in a newer suite)"
        ]
    if pin == installed:
        return [f"suite {installed} (pinned {pin} in {WORKSPACE_FILE})"]
    if pin > installed:
        return [
            f"suite {installed} (pinned {pin} in {WORKSPACE_FILE})",
            f"warning: the installed suite {installed} is older than the pinned {pin}: install the kit that ships it",
        ]
    changes = read_changelog() if changes is None else changes
    since = [c for c in changes if pin < c.version <= installed]
    touches = _touching(own_folders, tags, shipped)
    out = [f"suite {installed} (pinned {pin} in {WORKSPACE_FILE}; {len(since)} changelog entries since)"]
    out += [f"warning: {change.describe()}" for change in since if touches(change)]
    if len(out) > 1:
        out.append(f'warning: read {CHANGELOG}, then pin suite: "{installed}" in {WORKSPACE_FILE}')
    return out


def suite_changes(
    since: SuiteVersion,
    own_folders: Sequence[Path],
    tags: str,
    shipped: bool,
    installed: SuiteVersion | None = None,
    changes: Sequence[Change] | None = None,
) -> list[str]:
    """What ``xocdia-hil certify --changes SINCE`` prints: a heading line, then every changelog entry after ``since``
    up to the installed suite, one line each, newest first; an entry that touches the selected run (as
    :func:`suite_notice` decides: ``tags``, ``shipped``, ``own_folders``) is marked ``*``. ``since`` at or after the
    installed suite gives the heading alone.

    Raises:
        InputError: an unreadable SUITE_VERSION or changelog (naming the file and line).
    """
    installed = installed or installed_version()
    changes = read_changelog() if changes is None else changes
    between = [c for c in changes if since < c.version <= installed]
    if not between:
        return [f"suite {installed}: no changelog entries after {since}"]
    touches = _touching(own_folders, tags, shipped)
    out = [f"suite {installed}: {len(between)} changelog entries after {since} (* touches this selection)"]
    return out + [f"{'*' if touches(change) else ' '} {change.describe()}" for change in between]


# --- the developer's commands -----------------------------------------------------------------------------------


def _check() -> int:
    now = current_digest()
    stored = read_digest()
    diff = compare(stored, now)
    if diff.empty and stored.version == now.version:
        print(f"suite {now.version}: the digest matches every shipped step and scenario")
        return 0
    for line in diff.lines():
        print(line)
    if diff.empty:
        print(f"features/SUITE_VERSION is {now.version}, the digest {stored.version}")
    print(
        "the suite's steps or scenarios changed: raise features/SUITE_VERSION, add an entry to features/CHANGELOG.md"
        " for each line above under the new version, then run python -m harness.cert.suite_version update"
    )
    return 1


def _update() -> int:
    now = current_digest()
    refusals = update_refusals(read_digest(), now, read_changelog()) if DIGEST.exists() else []
    for refusal in refusals:
        print(refusal, file=sys.stderr)
    if refusals:
        return 1
    DIGEST.write_text(now.as_json() + "\n", encoding="utf-8")
    print(f"wrote {DIGEST} for suite {now.version}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``check``: exit 1 when the digest differs from the suite; ``update``: rewrite it where
    :func:`update_refusals` allows (exit 1 with one line per refusal otherwise)."""
    parser = argparse.ArgumentParser(prog="python -m harness.cert.suite_version", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("check", "update"))
    args = parser.parse_args(argv)
    try:
        return _check() if args.action == "check" else _update()
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
