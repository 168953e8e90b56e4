"""The fault schedule's data model and its per-seed plan: what to break, when, for how long.

:class:`Schedule` holds a validated schedule (the run's shape, the targets faults may touch, explicit faults,
random faults); :class:`Fault` is one concrete fault with its :class:`Trigger`. :func:`plan` expands a schedule,
for one seed, into the faults a run applies: a pure function of (schedule, seed). The file format and its
validation are :mod:`harness.faults.schedule`. See ``docs/faults.md``.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from typing import Any

import yaml

from harness.records import DeviceRole


class FaultKind(StrEnum):
    """What a fault breaks (``docs/faults.md``): a device's serial line, a player's connection, the server
    process, or the table (an incident the scripted table plays in its round)."""

    SERIAL_FLIP = "serial_flip"
    SERIAL_DROP = "serial_drop"
    SERIAL_DUPLICATE = "serial_duplicate"
    SERIAL_REORDER = "serial_reorder"
    SERIAL_LINE_ERROR = "serial_line_error"
    SERIAL_LATENCY = "serial_latency"
    SERIAL_UNPLUG = "serial_unplug"
    PLAYER_DISCONNECT = "player_disconnect"
    PLAYER_LATENCY = "player_latency"
    PLAYER_BLACKHOLE = "player_blackhole"
    PLAYER_RESET = "player_reset"
    SERVER_KILL = "server_kill"
    TABLE_DROP = "table_drop"
    TABLE_STANDING = "table_standing"
    TABLE_OVERLAP = "table_overlap"
    TABLE_TOUCH = "table_touch"
    TABLE_EARLY_LIFT = "table_early_lift"
    TABLE_NO_SHAKE = "table_no_shake"


PHASES = ("betting_open", "shaking", "betting_closed", "reveal", "settling")
DEVICES = tuple(DeviceRole)
SERIAL_KINDS = (
    FaultKind.SERIAL_FLIP,
    FaultKind.SERIAL_DROP,
    FaultKind.SERIAL_DUPLICATE,
    FaultKind.SERIAL_REORDER,
    FaultKind.SERIAL_LINE_ERROR,
    FaultKind.SERIAL_LATENCY,
    FaultKind.SERIAL_UNPLUG,
)
SERIAL_RATE_KINDS = SERIAL_KINDS[:5]  # the serial kinds that hit a share (rate) of the frames
PLAYER_KINDS = (
    FaultKind.PLAYER_DISCONNECT,
    FaultKind.PLAYER_LATENCY,
    FaultKind.PLAYER_BLACKHOLE,
    FaultKind.PLAYER_RESET,
)
SERVER_KINDS = (FaultKind.SERVER_KILL,)
TABLE_KINDS = (
    FaultKind.TABLE_DROP,
    FaultKind.TABLE_STANDING,
    FaultKind.TABLE_OVERLAP,
    FaultKind.TABLE_TOUCH,
    FaultKind.TABLE_EARLY_LIFT,
    FaultKind.TABLE_NO_SHAKE,
)
LATENCY_KINDS = (FaultKind.SERIAL_LATENCY, FaultKind.PLAYER_LATENCY)  # they take a ``delay``
KINDS = SERIAL_KINDS + PLAYER_KINDS + SERVER_KINDS + TABLE_KINDS
DROP_ITEMS = ("bowl", "plate", "token")
STAKES = (100, 200, 500, 1000)

# Which optional parameters each kind takes (besides kind, at, target, duration).
KIND_PARAMS: dict[FaultKind, tuple[str, ...]] = {
    **{k: ("rate",) for k in SERIAL_RATE_KINDS},
    FaultKind.SERIAL_LATENCY: ("delay",),
    FaultKind.PLAYER_LATENCY: ("delay",),
    FaultKind.TABLE_DROP: ("item",),
    FaultKind.TABLE_STANDING: ("token",),
}


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
        out: dict[str, Any] = {"kind": str(self.kind), "at": self.at.to_data()}  # plain text: YAML-safe
        if self.kind not in SERVER_KINDS and self.kind not in TABLE_KINDS:
            out["target"] = str(self.target)
        if self.kind not in TABLE_KINDS:
            out["duration"] = self.duration
        for name in KIND_PARAMS.get(self.kind, ()):
            out[name] = getattr(self, name)
        return out

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
                phase = rng.choice(PHASES)
                duration = round(rng.uniform(0.05, rf.max_duration), 3)
                target: str
                if kind in SERIAL_KINDS:
                    target = str(rng.choice(devices))
                elif kind in PLAYER_KINDS:
                    target = rng.choice(("all", *schedule.player_ids))
                else:
                    target = "server" if kind in SERVER_KINDS else "table"
                fault = Fault(kind, Trigger(rnd, phase), target, duration)
                if kind in TABLE_KINDS:
                    fault = replace(fault, at=Trigger(rnd, "betting_open"), duration=0.0)
                    fault = replace(fault, item=rng.choice(DROP_ITEMS) if kind == FaultKind.TABLE_DROP else "")
                    fault = replace(fault, token=rng.randrange(4) if kind == FaultKind.TABLE_STANDING else 0)
                elif kind in LATENCY_KINDS:
                    fault = replace(fault, delay=round(rng.uniform(0.01, 0.5), 3))
                elif kind in SERIAL_RATE_KINDS:
                    fault = replace(fault, rate=round(rng.uniform(0.05, 0.5), 3))
                out.append(fault)
    order = {p: i for i, p in enumerate(PHASES)}
    return tuple(sorted(out, key=lambda f: (f.at.time is not None, f.at.time or 0.0, f.at.round, order[f.at.phase])))


def _poisson(rng: random.Random, lam: float) -> int:
    """A Poisson draw by inversion (small rates), from ``rng`` only."""
    if lam <= 0:
        return 0
    threshold, k, p = pow(2.718281828459045, -lam), 0, rng.random()
    while p > threshold:
        k += 1
        p *= rng.random()
    return k
