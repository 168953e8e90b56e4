"""Typed step parameters: what each kind of parameter a step phrase holds looks like, and the value its step
function gets.

A step names the kinds of its parameters with :func:`typed`, as pytest-bdd's ``converters=``::

    @given(parsers.parse("player {player} has a balance of {money}"), converters=typed(player=PLAYER, money=MONEY))
    def player_balance(cert: CertContext, player: str, money: int) -> None: ...

The kinds never change which text a step matches (that is its parser's alone): a text the phrase matches but that
is not of the parameter's form fails the step with a :class:`StepParameterError` naming the parameter, the text and
the form it must take. Numbers the phrase itself types (``{n:d}``, ``{seconds:g}``) come as ``int`` and ``float``
from the parser and need no kind here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Generic, TypeVar

from harness.cert.steps.context import BET_NAMES
from harness.records import RoundStatus
from simulator.bets import BetType

T = TypeVar("T")
_PLAYER = re.compile(r"\w+")


class StepParameterError(ValueError):
    """A step parameter's text is not of its kind's form; the message names the parameter, the text and the form."""


@dataclass(frozen=True, slots=True)
class Kind(Generic[T]):
    """A kind of step parameter: its name, the form its text takes (as an error message states it), and how the
    text is read (``read`` raises ValueError for a text not of the form)."""

    name: str
    form: str
    read: Callable[[str], T]

    def __call__(self, text: str) -> T:
        """The value of ``text``.

        Raises:
            StepParameterError: ``text`` is not of this kind's form.
        """
        return _Converter("", self)(text)


@dataclass(frozen=True, slots=True)
class _Converter(Generic[T]):
    """The converter of step parameter ``param`` (pytest-bdd calls it with the parameter's text)."""

    param: str
    kind: Kind[T]

    def __call__(self, text: str) -> T:
        try:
            return self.kind.read(text)
        except ValueError:
            where = f"step parameter <{self.param}>: " if self.param else ""
            raise StepParameterError(f"{where}{text!r} is not {self.kind.name} (expected {self.kind.form})") from None


def typed(**kinds: Kind[Any]) -> dict[str, Callable[[str], object]]:
    """pytest-bdd ``converters=`` for a step whose parameters (by name) are of these kinds."""
    return {param: _Converter(param, kind) for param, kind in kinds.items()}


@dataclass(frozen=True, slots=True)
class NamedRound:
    """The round a bet names: the ``ordinal``-th round the scenario opened, or (``ordinal`` None) the round after
    the one in play. Shown as the step writes it."""

    ordinal: int | None

    def __str__(self) -> str:
        return "the round after it" if self.ordinal is None else f"round {self.ordinal}"


@dataclass(frozen=True, slots=True)
class Percent:
    """A percentage as the step writes it (``text``, how messages show it) and its exact ``value`` as a fraction of
    one (``98.75`` → 79/80)."""

    text: str
    value: Fraction

    def __str__(self) -> str:
        return self.text


def _money(text: str) -> int:
    cleaned = text.strip().replace(",", "")
    if not cleaned.isdigit():
        raise ValueError(text)
    return int(cleaned)


def _player(text: str) -> str:
    if not _PLAYER.fullmatch(text):
        raise ValueError(text)
    return text


def _bet(text: str) -> str:
    name = text.strip()
    if name not in BET_NAMES:
        raise ValueError(text)
    return name


def _other_bet(text: str) -> str:
    if text in BET_NAMES:
        raise ValueError(text)
    return text


def _faces(text: str) -> str:
    out = "".join(ch for ch in text.upper() if ch in "RW")
    if len(out) != 4 or len(out) != len([ch for ch in text if not ch.isspace() and ch != ","]):
        raise ValueError(text)
    return out


def _faces_or_none(text: str) -> str:
    return "" if text == "none" else _faces(text)


def _unchecked_faces(text: str) -> str:
    return "".join(text.upper().split())


def _reds_or_none(text: str) -> int | None:
    return None if text == "none" else int(text)


def _choice(words: dict[str, str]) -> Callable[[str], str]:
    def read(text: str) -> str:
        if text not in words:
            raise ValueError(text)
        return words[text]

    return read


def _named_round(text: str) -> NamedRound:
    if text == "the round after it":
        return NamedRound(None)
    return NamedRound(int(text.removeprefix("round ")))


def _counts(text: str) -> list[int]:
    return [int(k) for k in text.replace(" and ", ",").split(",") if k.strip()]


def _percent(text: str) -> Percent:
    return Percent(text, Fraction(text) / 100)


MONEY = Kind("an amount", "whole minor units such as 1000 or 1,000", _money)
PLAYER = Kind("a player name", "letters, digits and _ such as alice or p1", _player)
BET = Kind("a bet type", f"one of {', '.join(BET_NAMES)}", _bet)
OTHER_BET = Kind("a bet type the game does not have", f"a name that is none of {', '.join(BET_NAMES)}", _other_bet)
FACES = Kind("faces", "four of r (red) and w (white), token 0 first, such as r r w w", _faces)
FACES_OR_NONE = Kind("faces or none", "four of r and w such as r r w w, or none", _faces_or_none)
UNCHECKED_FACES = Kind("faces as written", "any text (upper-cased, spaces removed, sent unchecked)", _unchecked_faces)
REDS_OR_NONE = Kind("a number of reds or none", "0 to 4, or none", _reds_or_none)
ROUND = Kind("a round number", "1, 2, ... in the order the scenario opens the rounds", int)
NAMED_ROUND = Kind(
    "a round a bet names", "round 1, round 2, ... (a round the scenario opened) or the round after it", _named_round
)
ROUND_STATUS = Kind("a round status", f"one of {', '.join(RoundStatus)}", RoundStatus)
COUNT = Kind("a count", "a whole number such as 0 or 2", int)
COUNTS = Kind("counts", "whole numbers separated by commas or 'and', such as 4 or 4 and 8", _counts)
MILLISECONDS = Kind("a duration in milliseconds", "whole milliseconds such as 50", int)
ITEM = Kind("an item", "bowl, plate or token", _choice({"bowl": "bowl", "plate": "plate", "token": "token"}))
SUPERVISOR_ACTION = Kind(
    "a supervisor action",
    "pauses, resumes or cancels",
    _choice({"pauses": "pause", "resumes": "resume", "cancels": "cancel"}),
)
PERCENT = Kind("a percentage", "a decimal number of percent such as 97.5", _percent)
PROBABILITY = Kind("a probability", "a fraction or decimal between 0 and 1 such as 1/2 or 0.55", Fraction)
BET_TYPE = Kind("a bet type", f"one of {', '.join(BetType)}", BetType)

#: Every kind, in the order docs/steps.md lists their forms.
KINDS: tuple[Kind[Any], ...] = (
    MONEY,
    PLAYER,
    BET,
    OTHER_BET,
    FACES,
    FACES_OR_NONE,
    UNCHECKED_FACES,
    REDS_OR_NONE,
    ROUND,
    NAMED_ROUND,
    ROUND_STATUS,
    COUNT,
    COUNTS,
    MILLISECONDS,
    ITEM,
    SUPERVISOR_ACTION,
    PERCENT,
    PROBABILITY,
    BET_TYPE,
)
