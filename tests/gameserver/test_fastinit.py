"""fast_init gives the server's frozen records the ``__init__`` their dataclass would have: same parameters and
defaults, a fresh default from each factory, still frozen; the stock dataclass is the reference it is held to."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field
from typing import Any

import pytest

from gameserver.events import Event, TableReport
from gameserver.fastinit import fast_init
from gameserver.ledger import BetRow, RoundRow
from gameserver.model import BetAck
from gameserver.protocol import Frame


@dataclass(frozen=True)
class Stock:
    a: int
    b: str = "b"
    c: dict[str, Any] = field(default_factory=dict)


@fast_init
@dataclass(frozen=True)
class Fast:
    a: int
    b: str = "b"
    c: dict[str, Any] = field(default_factory=dict)


def _values(obj: object) -> tuple[Any, ...]:
    return tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, "x"), {}), ((1,), {"c": {"k": 2}}), ((), {"a": 3, "b": "y", "c": None}), ((4, "z", {}), {})],
)
def test_the_generated_init_builds_what_the_dataclass_init_builds(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    fast, stock = Fast(*args, **kwargs), Stock(*args, **kwargs)
    assert _values(fast) == _values(stock)
    assert fast == Fast(*args, **kwargs)


def test_equal_records_hash_alike() -> None:
    assert hash(Fast(1, "x", None)) == hash(Fast(1, "x", None))  # type: ignore[arg-type]


def test_each_object_gets_its_own_default_and_stays_frozen() -> None:
    one, two = Fast(1), Fast(1)
    assert one.c == {} and one.c is not two.c
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Fast()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Fast(1, "b", {}, "extra")  # type: ignore[call-arg]


@pytest.mark.parametrize("cls", [Event, TableReport, RoundRow, BetRow, BetAck, Frame])
def test_the_server_records_keep_their_dataclass_signature(cls: type) -> None:
    expected = [
        (f.name, f.default if f.default is not dataclasses.MISSING else None)
        for f in dataclasses.fields(cls)
        if f.default_factory is dataclasses.MISSING
    ]
    params = list(inspect.signature(cls).parameters.values())
    assert [p.name for p in params] == [f.name for f in dataclasses.fields(cls)]
    assert [(p.name, None if p.default is inspect.Parameter.empty else p.default) for p in params
            if p.default is not dataclasses.MISSING] == expected  # fmt: skip


def test_classes_it_cannot_reproduce_are_refused() -> None:
    @dataclass
    class Mutable:
        a: int

    @dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    @dataclass(frozen=True)
    class Posted:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True)
    class Hidden:
        a: int
        b: int = field(default=0, init=False)

    for cls in (Mutable, Slotted, Posted, Hidden):
        with pytest.raises(TypeError):
            fast_init(cls)
