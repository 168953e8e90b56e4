"""The step library: one module per area, every one registered, and typed step parameters whose bad values fail
naming the parameter and the form it must take, without changing which text a step matches."""

from __future__ import annotations

import importlib
import pkgutil
from fractions import Fraction
from typing import Any

import pytest
from pytest_bdd.steps import step_function_context_registry

import harness.cert.steps
from harness.cert.explore.runner import StepLine, StepRunner
from harness.cert.steps import STEP_MODULES
from harness.cert.steps.params import (
    BET,
    COUNTS,
    FACES,
    FACES_OR_NONE,
    ITEM,
    KINDS,
    MONEY,
    NAMED_ROUND,
    OTHER_BET,
    PERCENT,
    PLAYER,
    REDS_OR_NONE,
    ROUND_STATUS,
    SUPERVISOR_ACTION,
    UNCHECKED_FACES,
    Kind,
    NamedRound,
    StepParameterError,
    typed,
)
from harness.records import RoundStatus


def test_every_module_with_step_definitions_is_registered_and_none_is_by_keyword() -> None:
    names = [f"harness.cert.steps.{m.name}" for m in pkgutil.iter_modules(harness.cert.steps.__path__)]
    for name in names:
        importlib.import_module(name)
    defining = {getattr(c.step_func, "__module__", "") for c in list(step_function_context_registry.values())}
    defining = {m for m in defining if m.startswith("harness.cert.steps.")}
    assert defining == set(STEP_MODULES)
    assert not {"given", "when", "then"} & {name.rsplit(".", 1)[1] for name in names}


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (MONEY, "1,000", 1000),
        (MONEY, "1000", 1000),
        (MONEY, "0", 0),
        (PLAYER, "p1", "p1"),
        (BET, "four_of_a_kind", "four_of_a_kind"),
        (OTHER_BET, "seven_red", "seven_red"),
        (FACES, "r r w w", "RRWW"),
        (FACES, "RWRW", "RWRW"),
        (FACES_OR_NONE, "none", ""),
        (FACES_OR_NONE, "w w w r", "WWWR"),
        (UNCHECKED_FACES, "r r x", "RRX"),
        (REDS_OR_NONE, "none", None),
        (REDS_OR_NONE, "3", 3),
        (NAMED_ROUND, "round 2", NamedRound(2)),
        (NAMED_ROUND, "the round after it", NamedRound(None)),
        (ROUND_STATUS, "void", RoundStatus.VOID),
        (COUNTS, "4 and 8", [4, 8]),
        (COUNTS, "2, 5 and 9", [2, 5, 9]),
        (ITEM, "plate", "plate"),
        (SUPERVISOR_ACTION, "resumes", "resume"),
    ],
)
def test_a_kind_reads_its_form(kind: Kind[Any], text: str, value: object) -> None:
    assert kind(text) == value


def test_a_percentage_keeps_its_text_and_its_exact_value() -> None:
    percent = PERCENT("98.75")
    assert (str(percent), percent.value) == ("98.75", Fraction(79, 80))
    assert str(NAMED_ROUND("round 3")) == "round 3" and str(NAMED_ROUND("the round after it")) == "the round after it"


@pytest.mark.parametrize(
    ("param", "kind", "text", "form"),
    [
        ("money", MONEY, "1.5", "whole minor units"),
        ("player", PLAYER, "Mr X", "letters, digits and _"),
        ("bet", BET, "seven_red", "four_red, three_red"),
        ("bet", OTHER_BET, "big", "none of four_red"),
        ("result", FACES, "r r w", "four of r (red) and w (white)"),
        ("item", ITEM, "dice", "bowl, plate or token"),
        ("action", SUPERVISOR_ACTION, "stops", "pauses, resumes or cancels"),
        ("which", COUNTS, "4 or 8", "whole numbers"),
        ("status", ROUND_STATUS, "done", "in_progress, settled, void, cancelled"),
    ],
)
def test_a_bad_value_names_the_parameter_the_text_and_the_form(
    param: str, kind: Kind[Any], text: str, form: str
) -> None:
    convert = typed(**{param: kind})[param]
    with pytest.raises(StepParameterError) as caught:
        convert(text)
    message = str(caught.value)
    assert message.startswith(f"step parameter <{param}>: {text!r} is not ")
    assert form in message


def test_every_kind_states_its_form() -> None:
    assert all(kind.name and kind.form for kind in KINDS)


def test_steps_get_typed_values_and_a_bad_value_fails_the_step_not_the_match() -> None:
    runner = StepRunner()
    func, args = runner.match(StepLine("When", "alice bets 1,000 on big naming round 2"))
    assert func.__module__ == "harness.cert.steps.bets"
    assert args == {"player": "alice", "money": 1000, "bet": "big", "which": NamedRound(2)}
    _, args = runner.match(StepLine("Then", "the server asks for 2 re-shakes in round 1"))
    assert args == {"k": 2, "n": 1}
    with pytest.raises(StepParameterError, match=r"step parameter <money>: '1\.5' is not an amount"):
        runner.match(StepLine("Given", "player alice has a balance of 1.5"))
    with pytest.raises(StepParameterError, match=r"step parameter <result>: 'r r w' is not faces"):
        runner.match(StepLine("Given", "round 1 lands r r w"))
