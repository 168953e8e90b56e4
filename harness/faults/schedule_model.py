"""The fault schedule's data model and its per-seed plan: what to break, when, for how long.

:class:`Schedule` holds a validated schedule (the run's shape, the targets faults may touch, explicit faults,
random faults); :class:`Fault` is one concrete fault with its :class:`Trigger`. :func:`plan` expands a schedule,
for one seed, into the faults a run applies: a pure function of (schedule, seed). What each kind hits and which
parameters it takes is :data:`harness.faults.kinds.SPECS`; the kind tuples here (``SERIAL_KINDS`` ...,
``KIND_PARAMS``) are views of it. The file format and its validation are :mod:`harness.faults.schedule`. See
``docs/faults.md``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import yaml

from harness.faults.kinds import (
    DROP_ITEMS,
    PLAYER,
    SERIAL,
    SERVER,
    SPECS,
    TABLE,
    FaultKind,
    ParamSpec,
    ParamType,
    ParamValue,
    kinds_of,
    kinds_with,
)
from harness.records import DeviceRole

__all__ = [
    "DEVICES",
    "DROP_ITEMS",
    "KINDS",
    "KIND_PARAMS",
    "LATENCY_KINDS",
    "PHASES",
    "PLAYER_KINDS",
    "SERIAL_KINDS",
    "SERIAL_RATE_KINDS",
    "SERVER_KINDS",
    "STAKES",
    "TABLE_KINDS",
    "Fault",
    "FaultKind",
    "RandomFaults",
    "Schedule",
    "Targets",
    "Trigger",
    "plan",
]


PHASES = ("betting_open", "shaking", "betting_closed", "reveal", "settling")
DEVICES = tuple(DeviceRole)
SERIAL_KINDS = kinds_of(SERIAL)
SERIAL_RATE_KINDS = kinds_with("rate")  # the kinds that hit a share (rate) of the frames
PLAYER_KINDS = kinds_of(PLAYER)
SERVER_KINDS = kinds_of(SERVER)
TABLE_KINDS = kinds_of(TABLE)
LATENCY_KINDS = kinds_with("delay")
KINDS = tuple(SPECS)
STAKES = (100, 200, 500, 1000)

#: Which optional parameters each kind takes (besides kind, at, target, duration); kinds that take none are absent.
KIND_PARAMS: dict[FaultKind, tuple[str, ...]] = {k: s.param_names for k, s in SPECS.items() if s.params}


@dataclass(frozen=True, slots=True)
class Trigger:
    """When a fault starts: on entering ``phase`` of round ``round`` (1-based, in the order rounds open), or at
    ``time`` bench seconds after the run starts. Exactly one of the two forms is set."""

    round: int = 0
    phase: str = "betting_open"
    time: float | None = None

    def to_data(self) -> dict[str, Any]:
        return {"time": self.time} if self.time is not None else {"round": self.round, "phase": self.phase}


@dataclass(frozen=True, slots=True)
class Fault:
    """One concrete fault: ``kind``, what it hits (a device, a player id or ``all``, ``server``, ``table``),
    when it starts, how long it lasts (seconds; 0 for table incidents) and its parameters."""

    kind: FaultKind
    at: Trigger
    target: str
    duration: float = 0.0
    rate: float = 0.0
    delay: float = 0.0
    item: str = ""
    token: int = 0

    def to_data(self) -> dict[str, Any]:
        """The YAML mapping that :func:`harness.faults.schedule.parse_schedule` reads back as this fault."""
        spec = SPECS[self.kind]
        out: dict[str, Any] = {"kind": str(self.kind), "at": self.at.to_data()}  # plain text: YAML-safe
        if not spec.family.fixed_target:
            out["target"] = str(self.target)
        if spec.family.lasting:
            out["duration"] = self.duration
        for p in spec.params:
            out[p.name] = getattr(self, p.name)
        return out

    def with_params(self, values: Mapping[str, ParamValue]) -> Fault:
        """This fault with the parameters in ``values`` (name → value) set; the others keep theirs.

        Raises:
            ValueError: a name in ``values`` that is not a parameter of this fault's kind.
        """
        names = SPECS[self.kind].param_names
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ValueError(f"{self.kind} takes no parameter {unknown[0]!r} (its parameters: {names or 'none'})")
        changes: dict[str, Any] = dict(values)
        return replace(self, **changes)

    def describe(self) -> str:
        when = f"t={self.at.time:g}s" if self.at.time is not None else f"round {self.at.round} {self.at.phase}"
        return f"{self.kind}({self.target}) at {when}" + (f" for {self.duration:g}s" if self.duration else "")


@dataclass(frozen=True, slots=True)
class RandomFaults:
    """``rate`` faults per round on average, of ``enabled`` kinds drawn per seed from ``kinds``."""

    rate: float
    kinds: tuple[FaultKind, ...]
    enabled: int
    max_duration: float = 1.0


@dataclass(frozen=True, slots=True)
class Targets:
    """What the schedule's faults may touch: these device lines, the players, the server, the table."""

    devices: tuple[DeviceRole, ...] = DEVICES
    players: bool = True
    server: bool = True
    table: bool = True


@dataclass(frozen=True, slots=True)
class Schedule:
    """A validated schedule (see ``docs/faults.md``): the run's shape, its targets, explicit and random faults,
    the abort rule. ``source`` names the file in messages; ``text`` is the file as read (not compared)."""

    seed: int
    rounds: int
    players: int
    balance: int
    bets_per_round: int
    stakes: tuple[int, ...]
    targets: Targets
    faults: tuple[Fault, ...]
    random: RandomFaults | None = None
    abort_after_failed_probes: int = 3
    source: str = "schedule"
    text: str = field(default="", compare=False)

    @property
    def player_ids(self) -> tuple[str, ...]:
        return tuple(f"p{i + 1}" for i in range(self.players))

    def to_data(self) -> dict[str, Any]:
        """A YAML-ready mapping that :func:`harness.faults.schedule.parse_schedule` reads back as this schedule."""
        out: dict[str, Any] = {
            "seed": self.seed,
            "rounds": self.rounds,
            "players": self.players,
            "balance": self.balance,
            "bets_per_round": self.bets_per_round,
            "stakes": list(self.stakes),
            "targets": {
                "devices": [str(d) for d in self.targets.devices],  # plain text: YAML-safe
                "players": self.targets.players,
                "server": self.targets.server,
                "table": self.targets.table,
            },
            "faults": [f.to_data() for f in self.faults],
            "probes": {"abort_after_failed_probes": self.abort_after_failed_probes},
        }
        if self.random is not None:
            out["random"] = {
                "rate": self.random.rate,
                "kinds": [str(k) for k in self.random.kinds],
                "enabled": self.random.enabled,
                "max_duration": self.random.max_duration,
            }
        return out

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_data(), sort_keys=False)

    def digest(self) -> str:
        """SHA-256 of the schedule's canonical YAML (independent of comments and key order in the file). Computed
        once per distinct schedule in a process: a campaign asks for it once per seed."""
        try:
            return _digest(self)
        except TypeError:  # a schedule built in code with a list where the model has a tuple: not hashable
            return hashlib.sha256(self.to_yaml().encode()).hexdigest()


@lru_cache(maxsize=64)
def _digest(schedule: Schedule) -> str:
    """:meth:`Schedule.digest` of a hashable schedule (frozen values: equal schedules have the same digest)."""
    return hashlib.sha256(schedule.to_yaml().encode()).hexdigest()


def plan(schedule: Schedule, seed: int | None = None) -> tuple[Fault, ...]:
    """The concrete faults of one run: the explicit ones, plus random ones drawn from ``seed`` (default: the
    schedule's). The per-seed subset of enabled kinds, the rounds, phases, targets and durations all come from
    one ``random.Random`` seeded with ``(seed, "faults")``, so the same seed gives the same plan. Sorted by
    trigger (time-triggered last), stable."""
    root = schedule.seed if seed is None else seed
    out = list(schedule.faults)
    rf = schedule.random
    if rf is not None:
        rng = random.Random(f"{root}/faults")
        enabled = sorted(rng.sample(list(rf.kinds), rf.enabled))
        devices = schedule.targets.devices
        for rnd in range(1, schedule.rounds + 1):
            count = _poisson(rng, rf.rate)
            for _ in range(count):
                kind = rng.choice(enabled)
                family = SPECS[kind].family
                phase = rng.choice(PHASES)
                duration = round(rng.uniform(0.05, rf.max_duration), 3)
                target: str
                if family == SERIAL:
                    target = str(rng.choice(devices))
                elif family == PLAYER:
                    target = rng.choice(("all", *schedule.player_ids))
                else:
                    target = family.fixed_target
                fault = Fault(kind, Trigger(rnd, phase), target, duration)
                if not family.lasting:
                    fault = replace(fault, at=Trigger(rnd, "betting_open"), duration=0.0)
                if SPECS[kind].params:
                    fault = fault.with_params({p.name: _draw(rng, p) for p in SPECS[kind].params})
                out.append(fault)
    order = {p: i for i, p in enumerate(PHASES)}
    return tuple(sorted(out, key=lambda f: (f.at.time is not None, f.at.time or 0.0, f.at.round, order[f.at.phase])))


def _draw(rng: random.Random, param: ParamSpec) -> ParamValue:
    """A random plan's value of ``param``, from ``rng`` only: a number uniform in its ``draw`` range (rounded to 3
    places), a whole number in ``low``..``high``, one of its choices."""
    if param.type is ParamType.NUMBER:
        low, high = param.draw or (param.low, param.high)
        return round(rng.uniform(low, high), 3)
    if param.type is ParamType.WHOLE:
        return rng.randrange(int(param.low), int(param.high) + 1)
    return rng.choice(param.choices)


def _poisson(rng: random.Random, lam: float) -> int:
    """A Poisson draw by inversion (small rates), from ``rng`` only."""
    if lam <= 0:
        return 0
    threshold, k, p = pow(2.718281828459045, -lam), 0, rng.random()
    while p > threshold:
        k += 1
        p *= rng.random()
    return k
