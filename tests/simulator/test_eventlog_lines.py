"""The event log's JSON Lines are written field by field (:func:`simulator.eventlog.jsonl_line`); each line must be
byte for byte what the JSON encoder writes of ``{"seq": seq, **record_dict(...)}``, for every event class and every
value a field may hold, because seeded event logs are pinned by their bytes (test_golden_digest.py)."""

from __future__ import annotations

import json
import math
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.bets import BetType
from simulator.eventlog import _json_value, jsonl_line
from simulator.events import EVENT_TYPES, BetSent, DropItem, RoundStatus, field_names, record_dict
from simulator.jsonlines import _WRITERS

_ENCODE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode

_values = st.one_of(
    st.integers(),
    st.floats(),  # nan, inf, -0.0, subnormals
    st.text(max_size=8),  # quotes, backslashes, control characters, non-ASCII, lone surrogates
    st.none(),
    st.booleans(),
    st.sampled_from([*RoundStatus, *DropItem, *BetType]),
    st.lists(st.integers(0, 4), max_size=4).map(tuple),
)
_times = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(10**12), 10**12))


def _reference(seq: int, record: tuple[object, ...]) -> str:
    cls, *values = record
    if cls is BetSent and len(values) > 3 and type(values[3]) is int:  # a bet's number stands for its id
        values[3] = f"{values[2]}-{values[3]}"
    return _ENCODE({"seq": seq, **record_dict(cls, values)})  # type: ignore[arg-type]


@st.composite
def _records(draw: st.DrawFn) -> tuple[object, ...]:
    cls = draw(st.sampled_from(EVENT_TYPES))
    values = [draw(_times if name in ("t", "deadline", "arrives") else _values) for name in field_names(cls)]
    return (cls, *values)


def _declared(cls: type, name: str) -> st.SearchStrategy[object]:
    """Values of the type ``name`` is declared with in ``cls`` (what the model records)."""
    if name in ("t", "deadline", "arrives"):
        return _times
    hint = typing.get_type_hints(cls)[name]
    options = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    strategies: list[st.SearchStrategy[object]] = [st.none()] if len(typing.get_args(hint)) > 1 else []
    for option in options:
        if option is bool:
            strategies.append(st.booleans())
        elif option is int:
            strategies.append(st.integers())
        elif isinstance(option, type) and issubclass(option, str) and option is not str:
            strategies.append(st.sampled_from(list(option)))
        else:
            strategies.append(st.text(max_size=8))
    return st.one_of(strategies)


@st.composite
def _typed_records(draw: st.DrawFn) -> tuple[object, ...]:
    cls = draw(st.sampled_from(EVENT_TYPES))
    return (cls, *(draw(_declared(cls, name)) for name in field_names(cls)))


@given(seq=st.integers(0, 10**9), record=_records())
def test_a_line_is_what_the_encoder_writes(seq: int, record: tuple[object, ...]) -> None:
    assert jsonl_line(seq, record) == _reference(seq, record)


@given(seq=st.integers(0, 10**9), record=_typed_records())
def test_a_record_of_declared_types_is_written_by_its_class_s_writer_as_the_encoder_writes_it(
    seq: int, record: tuple[object, ...]
) -> None:
    cls, *values = record
    assert jsonl_line(seq, record) == _reference(seq, record)
    line = _WRITERS[cls][1](seq, *values)  # type: ignore[index]
    if not any(isinstance(v, float) and not math.isfinite(v) for v in values):
        assert line == _reference(seq, record)  # the generated path itself, not the field-by-field one


@given(player=st.text(max_size=6), number=st.integers(0, 10**6), t=_times)
def test_a_bet_numbered_in_its_record_is_written_with_its_id(player: str, number: int, t: float) -> None:
    record = (BetSent, t, 3, player, number, "odd", 100, 0.25)
    assert jsonl_line(7, record) == _reference(7, record)
    assert json.loads(jsonl_line(7, record))["bet_id"] == f"{player}-{number}"


def test_a_time_is_rounded_to_the_microsecond_and_non_finite_values_are_written_as_json_writes_them() -> None:
    cls = EVENT_TYPES[0]
    values = [1.23456789] + [math.inf] * (len(field_names(cls)) - 1)
    line = jsonl_line(0, (cls, *values))
    assert '"t":1.234568' in line and "Infinity" in line
    assert line == _reference(0, (cls, *values))


def test_a_record_with_the_wrong_number_of_values_is_refused() -> None:
    cls = EVENT_TYPES[0]
    with pytest.raises(ValueError):
        jsonl_line(0, (cls, 1.0))


@given(
    line=st.one_of(
        st.text(max_size=40),  # anything at all
        st.builds(lambda pad, body, tail: pad + body + tail, st.sampled_from(["", " ", "\t", "\ufeff", "\x0c"]),
                  st.sampled_from(['{"kind": "tokens_placed", "t": 1, "round": 2}', "[1, 2]", '"x"', "7", "{", "}"]),
                  st.sampled_from(["", " ", "\r\n", "\n", " x", "{}", "\x0b"])),
    )
)  # fmt: skip
def test_a_line_is_parsed_or_refused_as_json_loads_does(line: str) -> None:
    """The event log reader scans a line with the JSON scanner directly; what it gives or raises must be what
    ``json.loads`` gives or raises."""
    try:
        expected: object = json.loads(line)
    except ValueError as exc:
        with pytest.raises(ValueError) as info:
            _json_value(line)
        assert str(info.value) == str(exc)
        return
    assert repr(_json_value(line)) == repr(expected)  # NaN is not equal to itself
