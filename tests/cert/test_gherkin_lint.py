"""The certification feature linter: each rule refused at the right line, valid Gherkin (as pytest-bdd parses it)
accepted, and the shipped suite clean."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from pytest_bdd.parser import FeatureParser

from harness.cert.gherkin_lint import (
    LintError,
    edit_distance,
    feature_files,
    lint_files,
    lint_folders,
    lint_text,
    mistyped_step_keyword,
)
from harness.cert.report.clauses import rule_clauses
from harness.files import FEATURES


def _write(folder: Path, text: str, name: str = "x.feature") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _lint(tmp_path: Path, text: str, known: list[str] | None = None) -> list[LintError]:
    return lint_files([_write(tmp_path, text)], known)


def _only(errors: list[LintError]) -> LintError:
    assert len(errors) == 1, "\n".join(map(str, errors))
    return errors[0]


GOOD = """
    @clause:SH-3
    Feature: A clean file
      Some description of the feature.

      Scenario: One round
        Given a table
        When round 1 opens
        Then the round is settled
"""

# every form the linter must accept, and pytest-bdd must parse
VALID = '''
    # language: en
    # a comment before the tags
    @gli:4.16 @clause:SH-3 # a comment after the tags
    Feature: Every valid form
      Description text right under Feature:,
      When a line of prose starts with a step keyword and goes on
      on the next line, it is prose.

      Background:
        Given player alice has a balance of 10,000
        * player bob has a balance of 10,000

      Scenario: Steps with a doc string, a table and comments
        Given a doc string:
          """
          Gvien this line is content, not a step
          Scenario: nor is this
          # nor a comment
          """
        And a table:
          | name  | balance |
          | alice | 10,000  |
        # a comment between steps
        When round 1 opens
        Then the round is settled
        * the oracle finds no difference
        But nothing else changes

      @clause:SH-4a
      Scenario Outline: An outline with <n> examples
        Given a backtick doc string:
          ```json
          {"Whne": 1}
          ```
        When round <n> opens
        Then the round is settled

        @gli:4.18.5
        Examples: the first
          | n |
          | 1 |

        Scenarios:
          | n |
          | 2 |

      Example: An Example keyword
        Given a table
        Then the round is settled

      Scenario Template: A template
        Given round <n>
        Then the round is settled

        Examples:
          | n |
          | 3 |

      @clause:GP-3
      Rule: A rule with a description
        Rule description text.

        Background:
          Given a rule background

        Scenario: A scenario under the rule
          When round 1 opens
          Then the round is settled
'''


def test_valid_gherkin_is_accepted_and_pytest_bdd_parses_it(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID)
    assert lint_files([path]) == []
    assert lint_files([path], rule_clauses()) == []
    feature = FeatureParser(str(tmp_path), path.name).parse()
    assert len(feature.scenarios) == 5
    assert "When a line of prose" in feature.description


def test_a_clean_file_lints_clean(tmp_path: Path) -> None:
    assert _lint(tmp_path, GOOD) == []


def test_the_shipped_suite_lints_clean() -> None:
    files = feature_files([FEATURES])
    assert len(files) >= 20
    assert any(p.parent.name == "faults" for p in files)
    assert lint_folders([FEATURES]) == []
    assert lint_folders([FEATURES], rule_clauses()) == []


def test_lint_error_reads_path_line_problem_and_fix() -> None:
    error = LintError(Path("a.feature"), 7, "no Then", "add one")
    assert str(error) == "a.feature:7: no Then (add one)"


# ---------------------------------------------------------------------------------------------------- rule 1
def test_a_mistyped_first_step_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            Feature: F
              @clause:SH-3
              Scenario: S
                Gvien a player has a balance of 10,000
                When round 1 opens
                Then the round is settled
            """,
        )
    )
    assert error.line == 4
    assert "'Gvien'" in error.problem and "description" in error.problem
    assert "did you mean 'Given'?" in error.fix


@pytest.mark.parametrize(("word", "meant"), [("Whne", "When"), ("THen", "Then"), ("Adn", "And"), ("given", "Given")])
def test_a_mistyped_later_step_is_refused(tmp_path: Path, word: str, meant: str) -> None:
    error = _only(
        _lint(
            tmp_path,
            f"""
            Feature: F
              @clause:SH-3
              Scenario: S
                Given a table
                {word} round 1 opens
                Then the round is settled
            """,
        )
    )
    assert error.line == 5
    assert f"unknown keyword {word!r}" in error.problem and "not a step" in error.problem
    assert f"did you mean {meant!r}?" in error.fix


def test_any_description_under_a_scenario_header_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            Feature: F
              @clause:SH-3
              Scenario: S
                Checks that a bet after the close is rejected.
                Given a table
                Then the round is settled
            """,
        )
    )
    assert (error.line, "description text under Scenario:" in error.problem) == (4, True)
    assert "# comment" in error.fix


def test_description_under_a_background_header_is_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        """
        @clause:SH-3
        Feature: F
          Background:
            Gvien a table
            And a player

          Scenario: S
            When round 1 opens
            Then the round is settled
        """,
    )
    # Gherkin then reads the And as the first step, which pytest-bdd refuses too
    assert [(e.line, e.problem.split(":")[0]) for e in errors] == [
        (4, "unknown keyword 'Gvien'"),
        (5, "the first step of a Background starts with 'And'"),
    ]


def test_a_mistyped_header_inside_a_scenario_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Scenario: S
                Given a table
                Then the round is settled

              Scenaro: T
                Given a table
                Then the round is settled
            """,
        )
    )
    # its steps are read as the scenario above's: only the header is refused
    assert (error.line, "Scenaro:" in error.problem, error.fix) == (7, True, "did you mean 'Scenario:'?")


def test_text_under_examples_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Scenario Outline: S
                Given round <n>
                Then the round is settled

                Examples:
                  | n |
                  | 1 |
                  Gvien a table
            """,
        )
    )
    assert (error.line, "table rows" in error.problem) == (10, True)


def test_a_step_after_examples_is_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        """
        @clause:SH-3
        Feature: F
          Scenario Outline: S
            Given round <n>
            When it opens

            Examples:
              | n |
              | 1 |
            Then the round is settled
        """,
    )
    # the Then belongs to no scenario, so the outline has none
    assert [(e.line, e.problem) for e in errors] == [
        (3, "a scenario must assert something: this Scenario Outline has no Then step"),
        (10, "a step after Examples: belongs to no scenario"),
    ]


def test_a_table_row_or_doc_string_after_no_step_is_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        '''
        @clause:SH-3
        Feature: F
          Scenario: S
            Given a doc string
              """
              text
              """
              | a | table |
            Then the round is settled
        ''',
    )
    assert [(e.line, "follows no step" in e.problem) for e in errors] == [(8, True)]


def test_a_first_step_with_and_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Scenario: S
                And a table
                Then the round is settled
            """,
        )
    )
    assert (error.line, "first step" in error.problem, "'And'" in error.problem) == (4, True, True)


def test_an_unclosed_doc_string_is_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        '''
        @clause:SH-3
        Feature: F
          Scenario: S
            Given a doc string
              """
              text
            Then the round is settled
        ''',
    )
    # the Then is inside the doc string, so the scenario has none
    assert [(e.line, e.problem.split(":")[0]) for e in errors] == [
        (3, "a scenario must assert something"),
        (5, 'doc string opened here is never closed with """'),
    ]


# ---------------------------------------------------------------------------------------------------- rule 2
def test_a_step_in_the_feature_description_is_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        """
        @clause:SH-3
        Feature: F
          A description.

            Given player alice has a balance of 10,000
            And player bob has a balance of 10,000

          Scenario: S
            When round 1 opens
            Then the round is settled
        """,
    )
    assert [(e.line, "outside a scenario" in e.problem) for e in errors] == [(5, True), (6, True)]
    assert "Background:" in errors[0].fix


def test_a_step_right_under_the_feature_line_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Given player alice has a balance of 10,000
              Scenario: S
                When round 1 opens
                Then the round is settled
            """,
        )
    )
    assert (error.line, "outside a scenario" in error.problem) == (3, True)


def test_a_step_in_a_rule_description_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Rule: R
                Given player alice has a balance of 10,000

                Scenario: S
                  When round 1 opens
                  Then the round is settled
            """,
        )
    )
    assert (error.line, "Rule: description" in error.problem) == (4, True)


def test_a_mistyped_scenario_header_in_the_description_is_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        """
        @clause:SH-3
        Feature: F
          Scenaro: S
            Given a table
            Then the round is settled
        """,
    )
    assert [e.line for e in errors] == [3, 4, 5]
    assert "'Scenaro'" in errors[0].problem and errors[0].fix == "did you mean 'Scenario:'?"


# ---------------------------------------------------------------------------------------------------- rule 3
def test_a_scenario_without_steps_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Scenario: S
                # nothing yet

              Scenario: T
                Given a table
                Then the round is settled
            """,
        )
    )
    assert (error.line, "assert something" in error.problem, "no steps" in error.problem) == (3, True, True)


def test_a_scenario_without_then_is_refused_even_with_a_background_then(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Background:
                Given a table
                Then the table is ready

              Scenario: S
                Given a player
                When round 1 opens
                And the round is played
                * alice bets
            """,
        )
    )
    assert (error.line, "no Then" in error.problem) == (7, True)


def test_an_outline_without_example_rows_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Scenario Outline: S
                Given round <n>
                Then the round is settled

                Examples:
                  | n |
            """,
        )
    )
    assert (error.line, "no row of values" in error.problem) == (7, True)


# ---------------------------------------------------------------------------------------------------- rule 4
def test_a_scenario_without_a_clause_tag_is_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @gli:4.16
            Feature: F
              @clause:SH-3
              Scenario: S
                Given a table
                Then the round is settled

              @Clause:SH-3
              Scenario Outline: T <n>
                Given a table
                Then the round is settled

                @clause:SH-4a
                Examples:
                  | n |
                  | 1 |
            """,
        )
    )
    assert (error.line, "no @clause tag" in error.problem, "@Clause:SH-3" in error.problem) == (9, True, True)


def test_a_clause_tag_is_inherited_from_the_feature_and_the_rule(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        """
        Feature: F
          @clause:SH-3
          Rule: R
            Scenario: S
              Given a table
              Then the round is settled

          Rule: Q
            Scenario: T
              Given a table
              Then the round is settled
        """,
    )
    assert [(e.line, "no @clause" in e.problem) for e in errors] == [(9, True)]


def test_an_unknown_clause_is_refused_only_against_known_clauses(tmp_path: Path) -> None:
    text = """
        @clause:SH4a
        Feature: F
          @clause:SH-3 @clause:XX-1
          Scenario: S
            Given a table
            Then the round is settled
        """
    assert _lint(tmp_path, text) == []
    errors = _lint(tmp_path, text, rule_clauses())
    assert [(e.line, e.problem.split(":")[0]) for e in errors] == [
        (1, "unknown clause 'SH4a'"),
        (3, "unknown clause 'XX-1'"),
    ]
    assert "RULES.md" in errors[0].problem
    assert errors[0].fix == "did you mean @clause:SH-4a?"


def test_an_empty_clause_id_is_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        """
        Feature: F
          @clause:
          Scenario: S
            Given a table
            Then the round is settled
        """,
    )
    assert [(e.line, "no clause ID" in e.problem or "no @clause" in e.problem) for e in errors] == [
        (2, True),
        (3, True),
    ]


def test_tags_before_no_header_are_refused(tmp_path: Path) -> None:
    errors = _lint(
        tmp_path,
        """
        @clause:SH-3
        Feature: F
          Scenario: S
            Given a table
            @clause:SH-4a
            Then the round is settled
        """,
    )
    assert [(e.line, "not followed by" in e.problem) for e in errors] == [(5, True)]


# ---------------------------------------------------------------------------------------------------- rule 5
def test_a_file_that_is_not_utf8_is_one_error_at_line_1(tmp_path: Path) -> None:
    path = tmp_path / "latin.feature"
    path.write_bytes("Feature: Café\n  Scenario: S\n    Gvien x\n".encode("latin-1"))
    error = _only(lint_files([path]))
    assert (error.path, error.line, "UTF-8" in error.problem) == (path, 1, True)


def test_a_byte_order_mark_is_refused(tmp_path: Path) -> None:
    text = textwrap.dedent(GOOD).lstrip("\n")
    error = _only(lint_text("\ufeff" + text, tmp_path / "bom.feature"))
    assert (error.line, "byte-order mark" in error.problem) == (1, True)


# ---------------------------------------------------------------------------------------------------- the rest
def test_duplicate_scenario_titles_are_refused(tmp_path: Path) -> None:
    error = _only(
        _lint(
            tmp_path,
            """
            @clause:SH-3
            Feature: F
              Scenario: S
                Given a table
                Then the round is settled

              Scenario: S
                Given a table
                Then the round is settled
            """,
        )
    )
    assert (error.line, "second scenario" in error.problem, "line 3" in error.problem) == (7, True, True)


def test_text_before_the_feature_and_a_file_without_one_are_refused(tmp_path: Path) -> None:
    error = _only(_lint(tmp_path, "Gvien a table\nMore text\n" + textwrap.dedent(GOOD).lstrip("\n")))
    assert (error.line, "before Feature" in error.problem) == (1, True)
    error = _only(lint_text("# only a comment\n", tmp_path / "empty.feature"))
    assert (error.line, error.problem) == (1, "no Feature: line")


def test_another_language_is_refused(tmp_path: Path) -> None:
    error = _lint(tmp_path, "# language: fr\n" + textwrap.dedent(GOOD).lstrip("\n"))[0]
    assert (error.line, "English" in error.problem) == (1, True)


def test_errors_come_in_file_then_line_order(tmp_path: Path) -> None:
    bad = """
        Feature: F
          Scenario: S
            Gvien a table
            Then the round is settled
        """
    a = _write(tmp_path, bad, "b/a.feature")
    b = _write(tmp_path, bad, "a.feature")
    _write(tmp_path, GOOD, "b/c/good.feature")
    errors = lint_folders([tmp_path])
    assert [(e.path, e.line) for e in errors] == [(b, 2), (b, 3), (a, 2), (a, 3)]
    assert lint_files([a, b]) == errors[2:] + errors[:2]
    assert lint_folders([tmp_path, tmp_path / "b"]) == errors  # each file once


def test_a_folder_without_feature_files_is_refused(tmp_path: Path) -> None:
    errors = lint_folders([tmp_path, tmp_path / "missing"])
    assert [(e.path, e.line, e.problem) for e in errors] == [
        (tmp_path, 0, "no .feature file under this folder"),
        (tmp_path / "missing", 0, "no such folder"),
    ]


def test_crlf_line_numbers(tmp_path: Path) -> None:
    text = "@clause:SH-3\r\nFeature: F\r\n  Scenario: S\r\n    Gvien a table\r\n    Then x\r\n"
    assert [e.line for e in lint_text(text, tmp_path / "x.feature")] == [4]


def test_edit_distance_and_keyword_guess() -> None:
    assert edit_distance("gvien", "given") == 1  # a swap counts once
    assert edit_distance("whne", "when") == 1
    assert edit_distance("kitten", "sitting") == 3
    assert mistyped_step_keyword("Gvien") == "Given"
    assert mistyped_step_keyword("THen") == "Then"
    assert mistyped_step_keyword("Adn,") == "And"
    assert mistyped_step_keyword("Assuming") is None
