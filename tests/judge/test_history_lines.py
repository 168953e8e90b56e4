"""A history op's canonical line is written by hand on the hot path (:func:`harness.judge.history.op_line`); it must be
``json.dumps`` of the op's fields with sorted keys and no whitespace, whatever the fields hold, because the history
hash that labs' manifests pin is the SHA-256 of these lines."""

from __future__ import annotations

import json
from dataclasses import asdict, fields

from hypothesis import given
from hypothesis import strategies as st

from harness.judge.history import Op, op_line
from harness.records import OpFunction, OpType

_text = st.text(max_size=12)  # every code point: quotes, backslashes, control characters, non-ASCII, surrogates
_odd = st.one_of(st.none(), st.booleans(), st.integers(), st.floats())  # values that are not the declared type


def _reference(op: Op) -> str:
    return json.dumps(asdict(op), sort_keys=True, separators=(",", ":"))


@given(
    index=st.integers(min_value=0),
    t=st.floats(allow_nan=True, allow_infinity=True),
    process=_text,
    type_=st.sampled_from(OpType),
    f=st.sampled_from(OpFunction),
    client_bet_id=_text,
    bet_type=_text,
    stake=st.integers(),
    round_id=_text,
    bet_id=_text,
    detail=st.one_of(_text, _odd),
)
def test_an_op_line_is_json_dumps_of_its_fields(
    index: int,
    t: float,
    process: str,
    type_: OpType,
    f: OpFunction,
    client_bet_id: str,
    bet_type: str,
    stake: int,
    round_id: str,
    bet_id: str,
    detail: object,
) -> None:
    op = Op(index, t, process, type_, f, client_bet_id, bet_type, stake, round_id, bet_id, detail)  # type: ignore[arg-type]
    assert op_line(op) == _reference(op)


@given(stake=st.one_of(st.booleans(), st.floats(allow_nan=False)), t=st.one_of(st.integers(), st.booleans()))
def test_values_of_another_type_are_written_as_json_dumps_writes_them(stake: object, t: object) -> None:
    op = Op(3, t, "p1", OpType.OK, OpFunction.BET, stake=stake)  # type: ignore[arg-type]
    assert op_line(op) == _reference(op)


def test_the_line_covers_every_field_of_an_op() -> None:
    """A field added to Op must appear in the hand-written line too (the reference writes every field)."""
    op = Op(1, 2.5, "p1", OpType.INVOKE, OpFunction.BET, "c", "odd", 100, "r1", "b1", "d")
    assert set(json.loads(op_line(op))) == {f.name for f in fields(Op)}
    assert op_line(op) == _reference(op)
