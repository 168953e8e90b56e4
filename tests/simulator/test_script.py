"""Script parsing: the step format, its normalisation, and an error naming ``source[index].field``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.files import load_script
from simulator import Script, ScriptError
from simulator.events import DropItem
from simulator.incidents import Problem
from simulator.script import parse_faces


@pytest.mark.parametrize(
    ("text", "faces"), [("r r w w", "RRWW"), ("RRWW", "RRWW"), ("r,w,s,w", "RWSW"), (" w W r R ", "WWRR")]
)
def test_faces_are_normalised(text: str, faces: str) -> None:
    assert parse_faces(text) == faces


@pytest.mark.parametrize("text", ["r r w", "r r w w w", "r r w x", "", "1 0 1 0"])
def test_bad_faces_are_refused(text: str) -> None:
    with pytest.raises(ScriptError, match=r"faces: expected four faces of r \(red\), w \(white\) or s"):
        parse_faces(text)


def test_a_full_script_parses_into_steps() -> None:
    script = Script.from_data(
        [
            {"round": 3, "shake": 2, "standing": [2]},
            {"round": 4, "faces": "r r w w", "overlap": True},
            {"round": 5, "touch": True, "touch_token": 3, "lift": 2},
            {"round": 6, "drop": "plate"},
            {"round": 7, "drop": "none"},
            {"round": 8, "forget_shake": True, "early_lift": False},
            {"round": 9, "problem": {"after": 2.0, "resolve": 90}},
            {"round": 9, "faces": "w w w w", "standing": [0, 3]},
        ]
    )
    r3, r4, r5, r6, r7, r8, r9a, r9b = script.steps
    assert (r3.round, r3.shake, r3.faces) == (3, 2, "RWSW")  # standing alone: the rest alternate R, W
    assert (r4.faces, r4.overlap, r4.forces_drop) == ("RRWW", True, False)
    assert (r5.touch, r5.touch_token, r5.lift) == (True, 3, 2)
    assert r6.drop is DropItem.PLATE and r6.forces_drop
    assert r7.drop is None and r7.forces_drop  # "none" forces a drop *not* to happen
    assert (r8.forget_shake, r8.early_lift) == (True, False)
    assert r9a.problem == Problem(after=2.0, resolve=90.0) and r9a.forces_problem
    assert r9b.faces == "SWWS"
    assert script.for_round(9) == [r9a, r9b]
    assert script.for_round(10) == []


def test_an_empty_script_file_has_no_steps(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert load_script(path).steps == ()


BAD_STEPS: list[tuple[Any, str]] = [
    ("round 3", "s[0]: expected a mapping, got 'round 3'"),
    ({"shake": 1}, "s[0].round: missing (required)"),
    ({"round": 0}, "s[0].round: must be a whole number in [1, 1000000000], got 0"),
    ({"round": "3"}, "s[0].round: must be a whole number"),
    ({"round": 1, "shake": 0}, "s[0].shake: must be a whole number in [1, 1000], got 0"),
    ({"round": 1, "lift": True}, "s[0].lift: must be a whole number"),
    ({"round": 1, "touch_token": 4}, "s[0].touch_token: must be a whole number in [0, 3], got 4"),
    ({"round": 1, "overlap": "yes"}, "s[0].overlap: must be true or false, got 'yes'"),
    ({"round": 1, "faces": 1010}, "s[0].faces: expected text like 'r r w w', got 1010"),
    ({"round": 1, "faces": "r r r"}, "s[0].faces: expected four faces"),
    ({"round": 1, "standing": [4]}, "s[0].standing: expected a list of token numbers 0-3, got [4]"),
    ({"round": 1, "standing": 2}, "s[0].standing: expected a list of token numbers 0-3, got 2"),
    ({"round": 1, "drop": "cup"}, "s[0].drop: must be one of bowl, plate, token, none, got 'cup'"),
    ({"round": 1, "problem": {"after": 1}}, "s[0].problem: expected {after: SECONDS, resolve: SECONDS} or false"),
    ({"round": 1, "problem": {"after": -1, "resolve": 1}}, "s[0].problem.after: must be a number of seconds >= 0"),
    ({"round": 1, "tokens": "rrww"}, "s[0].tokens: unknown field; allowed: round, shake, lift, faces"),
]


@pytest.mark.parametrize(
    ("step", "message"), BAD_STEPS, ids=[m.split(":")[0] + str(i) for i, (_, m) in enumerate(BAD_STEPS)]
)
def test_a_bad_step_is_named_by_index_and_field(step: Any, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        Script.from_data([step], "s")
    assert message in str(info.value)


def test_the_index_of_the_bad_step_is_given() -> None:
    with pytest.raises(ScriptError, match=r"^s\[2\]\.drop: "):
        Script.from_data([{"round": 1}, {"round": 2}, {"round": 3, "drop": 1}], "s")


def test_a_script_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(ScriptError, match=r"^s: expected a list of steps, got dict$"):
        Script.from_data({"round": 1}, "s")


def test_unreadable_and_invalid_script_files_are_script_errors(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match=r"cannot read script .*missing.yaml"):
        load_script(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("- {round: 1\n", encoding="utf-8")
    with pytest.raises(ScriptError, match=r"cannot read script .*broken.yaml: not valid YAML") as info:
        load_script(broken)
    # one line; the unclosed "{" runs into the end of the file, the start of line 2
    assert "\n" not in str(info.value) and str(info.value).endswith("at line 2, column 1")
    named = tmp_path / "named.yaml"
    named.write_text("- {round: 1, faces: rrwwx}\n", encoding="utf-8")
    with pytest.raises(ScriptError, match=rf"^{named}\[0\]\.faces: expected four faces"):
        load_script(named)
