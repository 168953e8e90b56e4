"""The shipped suite's version and its changelog of scenario behaviour: the digest stored with the version matches
every shipped step and scenario (a change of meaning without a new version and a changelog entry fails here, saying
what to do); the changelog is well formed and names only what exists; a lab's pin in its workspace; what certify
prints, one warning per change since the pin that touches what the lab runs; init writing the pin."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import harness.cert.steps.players as players
from harness.cert.suite_version import (
    CHANGELOG,
    DIGEST,
    WORKSPACE_FILE,
    Change,
    Digest,
    SuiteVersion,
    compare,
    current_digest,
    installed_version,
    read_changelog,
    read_digest,
    read_pin,
    shipped_scenarios,
    suite_changes,
    suite_notice,
    update_refusals,
)
from harness.cli.init import scaffold
from harness.errors import InputError
from harness.files import FEATURES

BALANCE_STEP = "player {player} has a balance of {money}"
WHAT_TO_DO = (
    "raise features/SUITE_VERSION, add an entry to features/CHANGELOG.md for each line, then run"
    " python -m harness.cert.suite_version update"
)


def test_the_stored_digest_matches_every_shipped_step_and_scenario() -> None:
    stored, now = read_digest(), current_digest()
    lines = compare(stored, now).lines()
    assert not lines, "the suite's steps or scenarios changed:\n  " + "\n  ".join(lines) + f"\n{WHAT_TO_DO}"
    assert stored.version == installed_version(), (
        f"features/SUITE_VERSION is {installed_version()}, the digest {stored.version}: run python -m"
        " harness.cert.suite_version update"
    )
    assert any(c.version == installed_version() for c in read_changelog()), "no changelog section for the version"


@pytest.fixture
def changed_step() -> Iterator[tuple[str, Digest]]:
    """The digest of the suite as it is, then the balance step's docstring changed in the step library itself (its
    meaning, as a lab reads it)."""
    stored = current_digest()
    func = players.player_balance
    before = func.__doc__
    func.__doc__ = (before or "") + "\n\nThe balance is now given in chips, not minor units."
    try:
        yield BALANCE_STEP, stored
    finally:
        func.__doc__ = before


def test_a_step_whose_meaning_changed_without_a_version_and_an_entry_is_caught(
    changed_step: tuple[str, Digest],
) -> None:
    pattern, stored = changed_step
    now = current_digest()
    assert compare(stored, now).lines() == [f'changed step "{pattern}"']
    refusals = update_refusals(stored, now, read_changelog())
    assert refusals[0].startswith(f"features/SUITE_VERSION is still {stored.version}: raise it")
    assert f'names no changed step "{pattern}" after {stored.version}' in refusals[-1]
    bumped = current_digest(version=SuiteVersion(stored.version.major, stored.version.minor + 1))
    entry = Change(bumped.version, "changed", "step", "", pattern, "balances in chips", 1)
    refusals = update_refusals(stored, bumped, read_changelog())
    assert [r.split(":")[0] for r in refusals] == [
        f"features/CHANGELOG.md has no '## {bumped.version}' section",
        f'features/CHANGELOG.md names no changed step "{pattern}" after {stored.version} (add \'- changed step "'
        f'{pattern}"',
    ]
    assert update_refusals(stored, bumped, [entry, *read_changelog()]) == []


def test_a_scenario_whose_text_changed_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "features"
    shutil.copytree(FEATURES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    stored = current_digest(copy)
    path = copy / "special_handling.feature"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("the supervisor needs 0.3 s", "the supervisor needs 0.4 s", 1), encoding="utf-8")
    (copy / "new.feature").write_text(
        "Feature: new\n  Scenario: brand new\n    Given player alice has a balance of 1,000\n", encoding="utf-8"
    )
    diff = compare(stored, current_digest(copy))
    assert diff.lines() == [
        'changed scenario features/special_handling.feature "Past the re-shake cap the supervisor clears the table'
        ' quickly: the round resumes and settles"',
        'added scenario features/new.feature "brand new"',
    ]


def test_comments_and_blank_lines_change_no_scenario(tmp_path: Path) -> None:
    copy = tmp_path / "features"
    shutil.copytree(FEATURES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    stored = current_digest(copy)
    path = copy / "rounds.feature"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(f"{ln}\n  # a comment" if ln.strip() else ln for ln in lines) + "\n", encoding="utf-8")
    assert compare(stored, current_digest(copy)).empty


def test_every_changelog_entry_names_a_shipped_step_or_scenario() -> None:
    from harness.cert.suite_version import _step_docs

    steps = set(_step_docs())
    scenarios = {(s.file, s.title) for s in shipped_scenarios()}
    files = {s.file for s in shipped_scenarios()}
    for change in read_changelog():
        where = f"{CHANGELOG.name}:{change.line}"
        if change.kind == "removed" or change.subject == "suite":
            continue
        if change.subject == "step":
            assert change.name in steps, f"{where}: no step of the library has the pattern {change.name!r}"
        elif change.subject == "scenario":
            assert (change.file, change.name) in scenarios, f"{where}: no scenario {change.file} {change.name!r}"
        else:
            assert change.file in files, f"{where}: no feature file {change.file}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- changed suite: before any heading\n", "CHANGELOG.md:1: an entry before any '## MAJOR.MINOR' heading"),
        ("## 1.x\n", 'CHANGELOG.md:1: heading: must be a suite version "MAJOR.MINOR", e.g. "1.1"; got \'1.x\''),
        ("## 1.1\n- altered suite: x\n", 'CHANGELOG.md:2: an entry must read "- KIND SUBJECT: TEXT", KIND one of'),
        ("## 1.1\n- changed scenario a.feature: no title\n", "CHANGELOG.md:2: an entry must read"),
    ],
)
def test_a_malformed_changelog_is_one_error_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "CHANGELOG.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_changelog(path)
    assert str(caught.value).startswith(message), caught.value


def test_versions_order_by_number() -> None:
    assert SuiteVersion.parse("1.10", "x") > SuiteVersion.parse("1.9", "x") > SuiteVersion.parse("0.12", "x")
    assert str(SuiteVersion.parse(" 2.0 ", "x")) == "2.0"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("suite: 1.10\n", 'xocdia-hil.yaml: suite: must be a quoted suite version "MAJOR.MINOR", e.g. "1.1"; got 1.1'),
        ('suite: "v1"\n', 'xocdia-hil.yaml: suite: must be a suite version "MAJOR.MINOR", e.g. "1.1"; got \'v1\''),
        ('suite: "1.1"\nsuit: "1.0"\n', "xocdia-hil.yaml: unknown field 'suit'; allowed: suite"),
        ("- 1.1\n", "xocdia-hil.yaml: must be a mapping"),
    ],
)
def test_a_bad_pin_is_one_error_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / WORKSPACE_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_pin(tmp_path)
    assert str(caught.value).startswith(message), caught.value


def test_no_workspace_file_is_no_pin(tmp_path: Path) -> None:
    assert read_pin(tmp_path) is None
    (tmp_path / WORKSPACE_FILE).write_text('suite: "1.0"\n', encoding="utf-8")
    assert read_pin(tmp_path) == SuiteVersion(1, 0)


LIMITS = (
    "features/limits.feature \"The table's own chip unit and limits decide: off the chip, below the minimum or above"
    ' the maximum is refused"'
)


def test_an_older_pin_warns_of_each_change_that_touches_the_selected_scenarios() -> None:
    lines = suite_notice(SuiteVersion(1, 0), [], "clause:LIM-2", shipped=True, installed=SuiteVersion(1, 1))
    assert lines[0].startswith("suite 1.1 (pinned 1.0 in xocdia-hil.yaml; ")
    warned = [line.removeprefix("warning: suite 1.1: ") for line in lines[1:-1]]
    assert f"added {LIMITS}" in [w.split(":  ")[0].split(": LIM-2")[0] for w in warned]
    assert any(w.startswith(f"balances {LIMITS}: alice opens with twice the table maximum") for w in warned)
    assert any(w.startswith('changed step "(?P<player>\\w+)\'s bet is refused"') for w in warned)
    assert not any("special_handling.feature" in w for w in warned), warned  # none of them is selected
    assert lines[-1].startswith("warning: read ") and lines[-1].endswith('then pin suite: "1.1" in xocdia-hil.yaml')


def test_an_unselected_scenario_and_an_unused_step_are_not_warned_of() -> None:
    lines = suite_notice(SuiteVersion(1, 0), [], "clause:PAY-1", shipped=True, installed=SuiteVersion(1, 1))
    assert [line.split(":")[1].strip() for line in lines[1:-1]] == ["suite 1.1"], lines  # the suite-wide entry only


def test_the_labs_own_features_are_warned_of_the_steps_they_use(tmp_path: Path) -> None:
    (tmp_path / "own.feature").write_text(
        "Feature: own\n  Scenario: four plate drops\n    Given player alice has a balance of 10,000\n"
        "    When alice tries to bet the table maximum plus one chip on big\n    Then alice's bet is refused\n",
        encoding="utf-8",
    )
    lines = suite_notice(SuiteVersion(1, 0), [tmp_path], "", shipped=False, installed=SuiteVersion(1, 1))
    steps = [line.split('"')[1] for line in lines if line.startswith("warning: suite 1.1: ") and " step " in line]
    assert steps == [
        "(?P<player>\\w+) tries to bet (?P<phrase>the table minimum less one chip|the table maximum plus one chip|the"
        " table minimum|the table maximum|one and a half chips) on (?P<bet>\\w+)",
        "(?P<player>\\w+)'s bet is refused",
    ]


def test_a_current_pin_is_one_line_and_a_newer_one_a_warning() -> None:
    installed = installed_version()
    assert suite_notice(installed, [], "", shipped=True) == [
        f"suite {installed} (pinned {installed} in xocdia-hil.yaml)"
    ]
    newer = SuiteVersion(installed.major + 1, 0)
    assert suite_notice(newer, [], "", shipped=True)[1] == (
        f"warning: the installed suite {installed} is older than the pinned {newer}: install the kit that ships it"
    )
    assert suite_notice(None, [], "", shipped=True)[0].startswith(f"suite {installed} (not pinned: write suite: ")


def test_init_writes_the_pin_of_the_installed_suite(tmp_path: Path) -> None:
    written = scaffold(tmp_path / "lab")
    assert written[-1] == Path(WORKSPACE_FILE)
    assert read_pin(tmp_path / "lab") == installed_version()


def test_certify_prints_the_suite_version_and_the_changes_since_the_pin(tmp_path: Path) -> None:
    (tmp_path / WORKSPACE_FILE).write_text('suite: "1.0"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "certify", "--tags", "clause:SH-3 and clause:ERR-3", "--workers", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = done.stdout.splitlines()
    assert out[0].startswith(f"xocdia-hil certify: suite {installed_version()} (pinned 1.0 in xocdia-hil.yaml; ")
    assert (
        'xocdia-hil certify: warning: suite 1.1: changed features/special_handling.feature "Tokens keep standing past'
        ' the re-shake cap: the round is paused, then cancelled and refunded": the token stands up to one past the'
        " bench's cap and the supervisor needs longer than its pause timeout (it was four shakes and 5 s)."
    ) in out, done.stdout
    assert DIGEST.is_file()


HANDWRITTEN = """## 1.3

- changed scenario features/limits.feature "A made-up title": written for this test
- added step "a step no feature uses": written for this test

## 1.2

- changed suite: every scenario, written for this test

## 1.1

- removed step "an old step": before the asked version
"""


def test_changes_since_a_version_lists_every_later_entry_newest_first(tmp_path: Path) -> None:
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text(HANDWRITTEN, encoding="utf-8")
    changes = read_changelog(changelog)
    lines = suite_changes(SuiteVersion(1, 1), [], "", shipped=True, installed=SuiteVersion(1, 3), changes=changes)
    assert lines[0] == "suite 1.3: 3 changelog entries after 1.1 (* touches this selection)"
    assert lines[1:] == [
        '  suite 1.3: changed features/limits.feature "A made-up title": written for this test',
        '  suite 1.3: added step "a step no feature uses": written for this test',
        "* suite 1.2: changed the whole suite: every scenario, written for this test",
    ]
    # an entry newer than the installed suite is not shown; none after the installed version is one line
    assert len(suite_changes(SuiteVersion(1, 1), [], "", True, SuiteVersion(1, 2), changes)) == 2
    assert suite_changes(SuiteVersion(1, 3), [], "", True, SuiteVersion(1, 3), changes) == [
        "suite 1.3: no changelog entries after 1.3"
    ]


def test_certify_changes_prints_the_changelog_and_runs_nothing(tmp_path: Path) -> None:
    def certify(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "harness.cli", "certify", "--report", str(tmp_path / "r"), *args]
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)

    done = certify("--changes", "1.0", "--tags", "clause:LIM-2")
    assert done.returncode == 0, done.stderr
    entries = [c for c in read_changelog() if c.version > SuiteVersion(1, 0)]
    assert done.stdout.splitlines()[0].startswith(f"suite {installed_version()}: {len(entries)} changelog entries")
    assert f"* suite 1.1: added {LIMITS}" in [line.split(": LIM-2")[0] for line in done.stdout.splitlines()]
    assert not (tmp_path / "r").exists()  # nothing ran, no report folder
    bad = certify("--changes", "one")
    assert bad.returncode == 2 and '--changes: must be a suite version "MAJOR.MINOR"' in bad.stderr
