"""Fault schedule files (``fixtures/faults/*.yaml``): the YAML format, validated field by field.

:func:`load_schedule`, :func:`schedule_from_text` and :func:`parse_schedule` turn a file, its text or a parsed
document into a :class:`harness.faults.schedule_model.Schedule`. Every error is a :class:`ScheduleError` naming
the file and the dotted field and the allowed values, e.g. ``chaos.yaml: faults[2].at.phase: must be one of
betting_open, ...; got 'open'``. The data model and :func:`plan` are :mod:`harness.faults.schedule_model`'s. See
``docs/faults.md``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from harness.errors import InputError
from harness.faults.kinds import PARAM_NAMES, PLAYER, SERIAL, SPECS, ParamSpec, ParamType, ParamValue
from harness.faults.schedule_model import (
    DEVICES,
    KINDS,
    PHASES,
    STAKES,
    Fault,
    FaultKind,
    RandomFaults,
    Schedule,
    Targets,
    Trigger,
)
from harness.files import SCHEDULE_DIR, Fields, parse_yaml, read_text, shipped_file, shipped_hint
from harness.records import DeviceRole

__all__ = ["ScheduleError", "load_schedule", "parse_schedule", "schedule_from_text"]

_FAULT_KEYS = ("kind", "at", "target", "duration", *PARAM_NAMES)
_TOP = ("seed", "rounds", "players", "balance", "bets_per_round", "stakes", "targets", "faults", "random",
        "probes", "description")  # fmt: skip


class ScheduleError(InputError):
    """A schedule that cannot be used; the message names the file and the field."""


def parse_schedule(raw: object, source: str = "schedule", text: str = "") -> Schedule:
    """Validate a parsed schedule document.

    Raises:
        ScheduleError: a missing, unknown or out-of-range field, or a fault against a target the schedule does
            not declare; the message names the field and the allowed values.
    """
    c = Fields(source, ScheduleError, top="(top level)")
    top = c.mapping(raw, "", _TOP)
    players = c.whole(top.get("players", 2), "players", 1, 100)
    targets = _targets(c, top.get("targets", {}))
    stakes_raw = top.get("stakes", list(STAKES))
    if not isinstance(stakes_raw, list) or not stakes_raw:
        raise c.fail("stakes", "must be a non-empty list of stakes (minor units, multiples of 50)", stakes_raw)
    stakes = tuple(c.whole(s, f"stakes[{i}]", 50, 10**9) for i, s in enumerate(stakes_raw))
    for i, s in enumerate(stakes):
        if s % 50:
            raise c.fail(f"stakes[{i}]", "must be a whole multiple of 50 minor units", s)
    rounds = c.whole(top.get("rounds", 10), "rounds", 1, 100_000)
    faults_raw = top.get("faults", [])
    if not isinstance(faults_raw, list):
        raise c.fail("faults", "must be a list of faults", faults_raw)
    pids = tuple(f"p{i + 1}" for i in range(players))
    faults = tuple(_fault(c, f, f"faults[{i}]", targets, pids) for i, f in enumerate(faults_raw))
    rnd = None if top.get("random") is None else _random(c, top["random"], targets)
    probes = c.mapping(top.get("probes", {}), "probes", ("abort_after_failed_probes",))
    return Schedule(
        seed=c.whole(top.get("seed", 1), "seed", 0, 2**63 - 1),
        rounds=rounds,
        players=players,
        balance=c.whole(top.get("balance", 100_000), "balance", 0, 10**12),
        bets_per_round=c.whole(top.get("bets_per_round", 1), "bets_per_round", 0, 20),
        stakes=stakes,
        targets=targets,
        faults=faults,
        random=rnd,
        abort_after_failed_probes=c.whole(
            probes.get("abort_after_failed_probes", 3), "probes.abort_after_failed_probes", 1, 10**6
        ),
        source=source,
        text=text,
    )


def _targets(c: Fields, raw: object) -> Targets:
    t = c.mapping(raw, "targets", ("devices", "players", "server", "table"))
    devices = t.get("devices", list(DEVICES))
    if not isinstance(devices, list):
        raise c.fail("targets.devices", f"must be a list of device names ({', '.join(DEVICES)})", devices)
    return Targets(
        devices=tuple(DeviceRole(c.choice(d, f"targets.devices[{i}]", DEVICES)) for i, d in enumerate(devices)),
        players=c.flag(t.get("players", True), "targets.players"),
        server=c.flag(t.get("server", True), "targets.server"),
        table=c.flag(t.get("table", True), "targets.table"),
    )


def _allowed(c: Fields, kind: FaultKind, where: str, targets: Targets) -> None:
    """Raises ScheduleError when the ``targets`` switch of ``kind``'s family is off."""
    switch = SPECS[kind].family.switch
    if switch and not getattr(targets, switch):
        raise c.fail(where, f"targets.{switch} is false: this schedule may not inject {kind}", str(kind))


def _param(c: Fields, param: ParamSpec, value: object, where: str) -> ParamValue:
    """``value`` checked against ``param``'s type and allowed values. Raises ScheduleError naming ``where``."""
    if param.type is ParamType.NUMBER:
        return c.number(value, where, param.low, param.high)
    if param.type is ParamType.WHOLE:
        return c.whole(value, where, int(param.low), int(param.high))
    return c.choice(value, where, param.choices)


def _fault(c: Fields, raw: object, where: str, targets: Targets, pids: tuple[str, ...]) -> Fault:
    f = c.mapping(raw, where, _FAULT_KEYS)
    kind = FaultKind(c.choice(f.get("kind"), f"{where}.kind", KINDS))
    spec = SPECS[kind]
    family = spec.family
    _allowed(c, kind, f"{where}.kind", targets)
    for key in PARAM_NAMES:
        if key in f and key not in spec.param_names:
            takes = f" (it takes {', '.join(spec.param_names)})" if spec.params else ""
            raise c.fail(f"{where}.{key}", f"not a parameter of {kind}{takes}", f[key])
    if "at" not in f:
        raise c.fail(f"{where}.at", "missing (required): {round: N, phase: P} or {time: SECONDS}", None)
    at = c.mapping(f["at"], f"{where}.at", ("round", "phase", "time"))
    if "time" in at:
        if "round" in at or "phase" in at:
            raise c.fail(f"{where}.at", "either time, or round and phase, not both", at)
        if not family.timed:
            raise c.fail(f"{where}.at.time", f"{family.noun} are triggered by round only", at["time"])
        trigger = Trigger(time=c.number(at["time"], f"{where}.at.time", 0.0, 1e6))
    else:
        rnd = c.whole(at.get("round"), f"{where}.at.round", 1, 100_000)
        trigger = Trigger(round=rnd, phase=c.choice(at.get("phase", "betting_open"), f"{where}.at.phase", PHASES))
    if family == SERIAL:
        target = c.choice(f.get("target"), f"{where}.target", targets.devices)
    elif family == PLAYER:
        target = c.choice(f.get("target", "all"), f"{where}.target", ("all", *pids))
    else:
        if "target" in f:
            raise c.fail(f"{where}.target", f"{kind} takes no target", f["target"])
        target = family.fixed_target
    if not family.lasting:
        if "duration" in f:
            raise c.fail(f"{where}.duration", f"{family.noun} last one round and take no duration", f["duration"])
        duration = 0.0
    else:
        duration = c.number(f.get("duration", 1.0), f"{where}.duration", 0.001, 3600.0)
    values = {p.name: _param(c, p, f.get(p.name, p.default), f"{where}.{p.name}") for p in spec.params}
    return Fault(kind=kind, at=trigger, target=target, duration=duration).with_params(values)


def _random(c: Fields, raw: object, targets: Targets) -> RandomFaults:
    r = c.mapping(raw, "random", ("rate", "kinds", "enabled", "max_duration"))
    kinds_raw = r.get("kinds", list(KINDS))
    if not isinstance(kinds_raw, list) or not kinds_raw:
        raise c.fail("random.kinds", f"must be a non-empty list of fault kinds ({', '.join(KINDS)})", kinds_raw)
    kinds = tuple(FaultKind(c.choice(k, f"random.kinds[{i}]", KINDS)) for i, k in enumerate(kinds_raw))
    for i, k in enumerate(kinds):
        _allowed(c, k, f"random.kinds[{i}]", targets)
    if any(SPECS[k].family == SERIAL for k in kinds) and not targets.devices:
        raise c.fail(
            "random.kinds", "serial kinds need at least one device in targets.devices", [str(k) for k in kinds]
        )
    return RandomFaults(
        rate=c.number(r.get("rate", 0.5), "random.rate", 0.0, 20.0),
        kinds=kinds,
        enabled=c.whole(r.get("enabled", len(kinds)), "random.enabled", 1, len(kinds)),
        max_duration=c.number(r.get("max_duration", 1.0), "random.max_duration", 0.01, 600.0),
    )


def load_schedule(path: str | Path) -> Schedule:
    """Read and validate a schedule: a lab's file by path, or a shipped one by name (``chaos``, ``chaos.yaml``) or
    by its repository path (``fixtures/faults/chaos.yaml``), as :func:`harness.files.shipped_file` resolves them.

    Raises:
        ScheduleError: unreadable file (the message lists the shipped schedules), invalid YAML, or an invalid field
            (named).
    """
    p = shipped_file(path, SCHEDULE_DIR)
    hint = shipped_hint(SCHEDULE_DIR, "schedules")
    return schedule_from_text(read_text(p, "schedule", ScheduleError, shown=path, hint=hint), p.name)


@lru_cache(maxsize=32)
def schedule_from_text(text: str, source: str = "schedule") -> Schedule:
    """Parse and validate schedule YAML text. Raises ScheduleError. The same text is parsed once per process (a
    campaign's workers receive it once per seed); schedules are frozen, so the cached value cannot be changed."""
    return parse_schedule(parse_yaml(text, source, ScheduleError), source, text)
