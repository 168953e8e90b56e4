"""The fault-kind catalogue (:data:`harness.faults.kinds.SPECS`) is the one description of each kind: validation,
the random plan, the shrinker, serialisation, the kind tuples and the docs table all follow it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from harness.faults import schedule_model
from harness.faults.kinds import (
    BEGIN,
    DOC,
    END,
    FAMILIES,
    PARAM_NAMES,
    SERIAL,
    SPECS,
    FaultKind,
    KindSpec,
    ParamSpec,
    ParamType,
    _catalogue,
    main,
    markdown_table,
    with_table,
)
from harness.faults.schedule import ScheduleError, parse_schedule
from harness.faults.schedule_model import Fault, plan
from harness.faults.shrink import _fault as explored_fault

KINDS = list(SPECS)


def _fault_doc(kind: FaultKind, **params: Any) -> dict[str, Any]:
    """The smallest valid fault of ``kind`` (a serial kind on the bowl's line) with ``params`` added."""
    doc: dict[str, Any] = {"kind": str(kind), "at": {"round": 1}}
    if SPECS[kind].family == SERIAL:
        doc["target"] = "bowl"
    return {**doc, **params}


def _parse(*faults: dict[str, Any]) -> tuple[Fault, ...]:
    return parse_schedule({"players": 2, "faults": list(faults)}, "test.yaml").faults


def _valid(param: ParamSpec) -> Any:
    """An allowed value of ``param`` other than its default."""
    if param.type is ParamType.CHOICE:
        return next(c for c in param.choices if c != param.default)
    return int(param.high) if param.type is ParamType.WHOLE else param.high


def _invalid(param: ParamSpec) -> Any:
    return "nonesuch" if param.type is ParamType.CHOICE else (int(param.high) + 1)


# ---------------------------------------------------------------------- the catalogue
def test_every_kind_has_one_spec_in_the_enum_s_order() -> None:
    assert tuple(SPECS) == tuple(FaultKind)
    assert all(spec.kind == kind for kind, spec in SPECS.items())
    assert {spec.family for spec in SPECS.values()} <= set(FAMILIES)


def test_the_catalogue_refuses_a_missing_or_repeated_kind() -> None:
    specs = list(SPECS.values())
    with pytest.raises(ValueError, match="missing"):
        _catalogue(*specs[:-1])
    with pytest.raises(ValueError, match="two specs"):
        _catalogue(*specs, specs[0])
    with pytest.raises(ValueError, match="enum's order"):
        _catalogue(*reversed(specs))


def test_a_parameter_s_default_must_be_allowed() -> None:
    with pytest.raises(ValueError, match="outside"):
        ParamSpec("rate", ParamType.NUMBER, 2.0, "probability", low=0.0, high=1.0)
    with pytest.raises(ValueError, match="not one of"):
        ParamSpec("item", ParamType.CHOICE, "cup", "what falls", choices=("bowl",))
    with pytest.raises(ValueError, match="not a whole"):
        ParamSpec("token", ParamType.WHOLE, 0.5, "which token", low=0, high=3)


def test_every_parameter_is_a_fault_field_of_its_type() -> None:
    fields = {f.name: f.type for f in dataclasses.fields(Fault)}
    want = {ParamType.NUMBER: "float", ParamType.WHOLE: "int", ParamType.CHOICE: "str"}
    for spec in SPECS.values():
        for param in spec.params:
            assert fields.get(param.name) == want[param.type], (spec.kind, param.name)


def test_the_kind_tuples_the_code_reads_are_those_it_had_before_the_catalogue() -> None:
    """The tuples other modules (and the random planner's order of draws) read, as they were written by hand before
    the catalogue: a wrong family, parameter or order in ``SPECS`` changes one of them."""
    K = FaultKind
    serial = (K.SERIAL_FLIP, K.SERIAL_DROP, K.SERIAL_DUPLICATE, K.SERIAL_REORDER, K.SERIAL_LINE_ERROR)
    serial += (K.SERIAL_LATENCY, K.SERIAL_UNPLUG)
    player = (K.PLAYER_DISCONNECT, K.PLAYER_LATENCY, K.PLAYER_BLACKHOLE, K.PLAYER_RESET)
    table = (K.TABLE_DROP, K.TABLE_STANDING, K.TABLE_OVERLAP, K.TABLE_TOUCH, K.TABLE_EARLY_LIFT, K.TABLE_NO_SHAKE)
    assert serial == schedule_model.SERIAL_KINDS
    assert serial[:5] == schedule_model.SERIAL_RATE_KINDS
    assert player == schedule_model.PLAYER_KINDS
    assert schedule_model.SERVER_KINDS == (K.SERVER_KILL,)
    assert table == schedule_model.TABLE_KINDS
    assert schedule_model.LATENCY_KINDS == (K.SERIAL_LATENCY, K.PLAYER_LATENCY)
    assert serial + player + (K.SERVER_KILL,) + table == schedule_model.KINDS
    assert {
        **{k: ("rate",) for k in serial[:5]},
        K.SERIAL_LATENCY: ("delay",),
        K.PLAYER_LATENCY: ("delay",),
        K.TABLE_DROP: ("item",),
        K.TABLE_STANDING: ("token",),
    } == schedule_model.KIND_PARAMS


# ---------------------------------------------------------------------- validation follows the spec
@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_rate_is_accepted_exactly_by_the_kinds_whose_spec_has_it(kind: FaultKind) -> None:
    spec = SPECS[kind]
    if spec.takes_rate:
        [fault] = _parse(_fault_doc(kind, rate=0.75))
        assert fault.rate == 0.75
        [default] = _parse(_fault_doc(kind))
        assert default.rate == spec.param("rate").default
    else:
        with pytest.raises(ScheduleError, match=rf"faults\[0\]\.rate: not a parameter of {kind}\b") as info:
            _parse(_fault_doc(kind, rate=0.75))
        if spec.params:  # the message says what the kind does take
            assert f"(it takes {', '.join(spec.param_names)})" in str(info.value)


@pytest.mark.parametrize("kind", KINDS, ids=str)
@pytest.mark.parametrize("name", PARAM_NAMES)
def test_each_parameter_is_accepted_exactly_where_the_spec_lists_it(kind: FaultKind, name: str) -> None:
    spec = SPECS[kind]
    if name not in spec.param_names:
        with pytest.raises(ScheduleError, match=rf"faults\[0\]\.{name}: not a parameter of {kind}"):
            _parse(_fault_doc(kind, **{name: 1}))
        return
    param = spec.param(name)
    [fault] = _parse(_fault_doc(kind, **{name: _valid(param)}))
    assert getattr(fault, name) == _valid(param)
    [default] = _parse(_fault_doc(kind))
    assert getattr(default, name) == param.default
    with pytest.raises(ScheduleError) as info:
        _parse(_fault_doc(kind, **{name: _invalid(param)}))
    message = str(info.value)
    assert f"faults[0].{name}: must be " in message  # the field, then the allowed values
    if param.type is ParamType.CHOICE:
        assert ", ".join(param.choices) in message
    else:
        assert f"[{param.low:g}, {param.high:g}]" in message


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_target_duration_and_trigger_follow_the_family(kind: FaultKind) -> None:
    family = SPECS[kind].family
    [fault] = _parse(_fault_doc(kind))
    if family.fixed_target:
        assert fault.target == family.fixed_target
        with pytest.raises(ScheduleError, match=rf"faults\[0\]\.target: {kind} takes no target"):
            _parse(_fault_doc(kind, target="p1"))
    if family.lasting:
        assert fault.duration == 1.0
    else:
        assert fault.duration == 0.0
        with pytest.raises(ScheduleError, match=rf"faults\[0\]\.duration: {family.noun} last one round"):
            _parse(_fault_doc(kind, duration=1.0))
    timed = {k: v for k, v in _fault_doc(kind).items() if k != "at"} | {"at": {"time": 2.0}}
    if family.timed:
        assert _parse(timed)[0].at.time == 2.0
    else:
        with pytest.raises(ScheduleError, match=rf"faults\[0\]\.at\.time: {family.noun} are triggered by round only"):
            _parse(timed)
    if family.switch:
        doc = {"players": 2, "targets": {family.switch: False}, "faults": [_fault_doc(kind)]}
        with pytest.raises(ScheduleError, match=rf"targets\.{family.switch} is false"):
            parse_schedule(doc, "test.yaml")


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_fault_serialises_to_its_spec_s_fields_and_reads_back(kind: FaultKind) -> None:
    spec = SPECS[kind]
    params = {p.name: _valid(p) for p in spec.params}
    [fault] = _parse(_fault_doc(kind, **params))
    data = fault.to_data()
    want = ["kind", "at"] + (["target"] if not spec.family.fixed_target else [])
    want += (["duration"] if spec.family.lasting else []) + list(spec.param_names)
    assert list(data) == want
    assert _parse(data) == (fault,)


def test_with_params_refuses_a_parameter_the_kind_does_not_take() -> None:
    [kill] = _parse(_fault_doc(FaultKind.SERVER_KILL))
    with pytest.raises(ValueError, match="server_kill takes no parameter 'rate'"):
        kill.with_params({"rate": 0.5})


# ---------------------------------------------------------------------- the random plan and the shrinker
def test_random_plans_draw_each_parameter_within_its_spec() -> None:
    schedule = parse_schedule(
        {"rounds": 60, "players": 3, "random": {"rate": 3.0, "kinds": [str(k) for k in KINDS]}}, "r.yaml"
    )
    seen: set[FaultKind] = set()
    for seed in range(5):
        for fault in plan(schedule, seed):
            spec = SPECS[fault.kind]
            seen.add(fault.kind)
            for param in spec.params:
                value = getattr(fault, param.name)
                if param.type is ParamType.CHOICE:
                    assert value in param.choices
                else:
                    low, high = param.draw or (param.low, param.high)
                    assert low <= value <= high, (fault.kind, param.name, value)
            for name in PARAM_NAMES:
                if name not in spec.param_names:
                    assert getattr(fault, name) == getattr(Fault(fault.kind, fault.at, fault.target), name)
            if not spec.family.lasting:
                assert (fault.at.phase, fault.duration) == ("betting_open", 0.0)
            if spec.family.fixed_target:
                assert fault.target == spec.family.fixed_target
    assert seen == set(FaultKind)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_explored_faults_take_the_spec_s_explored_values_and_are_valid(kind: FaultKind) -> None:
    spec = SPECS[kind]
    for who in ("all", "p1", "bowl"):
        fault = explored_fault(kind, who, 2, "shaking", 0.5)
        assert all(getattr(fault, p.name) == p.explored for p in spec.params)
        assert _parse(fault.to_data()) == (fault,)


# ---------------------------------------------------------------------- the docs table
def test_docs_faults_md_kinds_table_is_current() -> None:
    assert main(["--check"]) == 0, "docs/faults.md's kinds table is stale: run python -m harness.faults.kinds"
    text = DOC.read_text(encoding="utf-8")
    assert f"{BEGIN}\n\n{markdown_table()}\n\n{END}" in text


def test_the_table_has_one_row_per_kind_with_its_parameters() -> None:
    rows = markdown_table().splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| `{k}`" for k in SPECS]
    rate_row = rows[KINDS.index(FaultKind.SERIAL_FLIP)]
    assert "`rate` (0-1; default 0.3)" in rate_row


def test_a_stale_table_is_reported(tmp_path: Any) -> None:
    doc = tmp_path / "faults.md"
    doc.write_text(f"intro\n{BEGIN}\n| old |\n{END}\nrest\n", encoding="utf-8")
    assert main(["--check", "--doc", str(doc)]) == 1
    assert main(["--doc", str(doc)]) == 0
    assert main(["--check", "--doc", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8").startswith(f"intro\n{BEGIN}\n\n| kind |")
    with pytest.raises(ValueError, match="no"):
        with_table("no markers here")


def test_a_spec_s_rate_and_parameter_names_follow_its_parameters() -> None:
    spec = KindSpec(FaultKind.SERIAL_FLIP, SERIAL, "effect", (SPECS[FaultKind.SERIAL_FLIP].param("rate"),))
    assert spec.takes_rate and spec.name == "serial_flip" and spec.param_names == ("rate",)
    with pytest.raises(KeyError):
        spec.param("delay")
