"""Scripted incidents: force what happens on chosen rounds, for certification scenarios.

A script is a list of steps; each names a round and the facts to force there. Everything not forced comes from the
random source, which is still consulted (so scripting round 3 leaves every other round exactly as it was)::

    - round: 3
      shake: 1            # the first shake of round 3 (default 1)
      standing: [2]       # token 2 is left standing on its edge (SH-3)
    - round: 4
      faces: r r w w      # tokens land red, red, white, white (token 0 first); 's' = standing
    - round: 5
      touch: true         # the bowl touches a token on lift (SH-5); 'lift: 2' for the second lift
    - round: 6
      drop: plate         # bowl | plate | token (SH-2)
    - {round: 7, overlap: true}           # SH-1
    - {round: 8, forget_shake: true}      # SH-4a
    - {round: 9, early_lift: true}        # SH-4b
    - {round: 10, problem: {after: 2.0, resolve: 90.0}}   # ERR-1, then ERR-2 or ERR-3
    - {round: 11, supervisor: 90.0}       # seconds the supervisor needs to clear a re-shake-cap pause

Use ``overlap: false`` / ``drop: none`` / ``touch: false`` to force an incident *not* to happen. Forcing ``faces``
on a shake also rules out a random drop on that shake (the forced faces are its outcome); ``drop`` in the same step
still applies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from simulator.errors import InputError
from simulator.events import DropItem
from simulator.incidents import IncidentSource, LiftFacts, Problem, RoundPlan, ShakeFacts
from simulator.validate import Section

_UNSET: Any = object()


class ScriptError(InputError):
    """A script step that cannot be applied; the message names the step and field."""


@dataclass(frozen=True, slots=True)
class ScriptStep:
    """Forced facts for one round. ``None`` means "not forced" for every optional field."""

    round: int
    shake: int = 1
    lift: int = 1
    faces: str | None = None
    overlap: bool | None = None
    drop: DropItem | None = _UNSET
    touch: bool | None = None
    touch_token: int = 0
    forget_shake: bool | None = None
    early_lift: bool | None = None
    problem: Problem | None = _UNSET
    supervisor: float | None = None

    @property
    def forces_drop(self) -> bool:
        return self.drop is not _UNSET

    @property
    def forces_problem(self) -> bool:
        return self.problem is not _UNSET


_STEP_KEYS = (
    "round",
    "shake",
    "lift",
    "faces",
    "standing",
    "overlap",
    "drop",
    "touch",
    "touch_token",
    "forget_shake",
    "early_lift",
    "problem",
    "supervisor",
)


def parse_faces(text: str, where: str = "faces") -> str:
    """Normalise ``"r r w w"`` / ``"RRWW"`` / ``"r,r,w,s"`` to ``"RRWW"``.

    Raises:
        ScriptError: not exactly four faces of r, w or s.
    """
    faces = "".join(ch for ch in text.upper() if not ch.isspace() and ch != ",")
    if len(faces) != 4 or any(ch not in "RWS" for ch in faces):
        raise ScriptError(f"{where}: expected four faces of r (red), w (white) or s (standing), got {text!r}")
    return faces


def step_from_mapping(data: Any, where: str) -> ScriptStep:
    """Validate one script step.

    Raises:
        ScriptError: unknown key, wrong type or out-of-range value; the message starts with ``where``.
    """
    if not isinstance(data, dict):
        raise ScriptError(f"{where}: expected a mapping, got {data!r}")
    fields = Section(data, where, ScriptError, allowed=_STEP_KEYS)
    step = ScriptStep(
        round=fields.whole("round", 1, 10**9),
        shake=fields.whole("shake", 1, 1000, default=1),
        lift=fields.whole("lift", 1, 1000, default=1),
        overlap=fields.flag("overlap"),
        touch=fields.flag("touch"),
        touch_token=fields.whole("touch_token", 0, 3, default=0),
        forget_shake=fields.flag("forget_shake"),
        early_lift=fields.flag("early_lift"),
    )
    faces = None
    if "faces" in data:
        if not isinstance(data["faces"], str):
            raise fields.fail("faces", f"expected text like 'r r w w', got {data['faces']!r}")
        faces = parse_faces(data["faces"], fields.path("faces"))
    if "standing" in data:
        standing = data["standing"]
        if not isinstance(standing, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= 3 for i in standing
        ):
            raise fields.fail("standing", f"expected a list of token numbers 0-3, got {standing!r}")
        base = list(faces or "RWRW")
        for i in standing:
            base[i] = "S"
        faces = "".join(base)
    if faces is not None:
        step = replace(step, faces=faces)
    if "drop" in data:
        value = data["drop"]
        allowed = ", ".join([*(d.value for d in DropItem), "none"])
        if value in (None, "none"):
            step = replace(step, drop=None)
        elif isinstance(value, str) and value in {d.value for d in DropItem}:
            step = replace(step, drop=DropItem(value))
        else:
            raise fields.fail("drop", f"must be one of {allowed}, got {value!r}")
    if "problem" in data:
        step = replace(step, problem=_problem(data["problem"], fields.path("problem")))
    if "supervisor" in data:
        v = data["supervisor"]
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
            raise fields.fail("supervisor", f"must be a number of seconds >= 0, got {v!r}")
        step = replace(step, supervisor=float(v))
    return step


def _problem(value: Any, where: str) -> Problem | None:
    if value is None or value is False:
        return None
    if not isinstance(value, dict) or set(value) != {"after", "resolve"}:
        raise ScriptError(f"{where}: expected {{after: SECONDS, resolve: SECONDS}} or false, got {value!r}")
    for key in ("after", "resolve"):
        v = value[key]
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
            raise ScriptError(f"{where}.{key}: must be a number of seconds >= 0, got {v!r}")
    return Problem(after=float(value["after"]), resolve=float(value["resolve"]))


class Script:
    """An ordered set of :class:`ScriptStep`, looked up by round."""

    def __init__(self, steps: Iterable[ScriptStep] = ()) -> None:
        self.steps = tuple(steps)
        self._by_round: dict[int, list[ScriptStep]] = {}
        for step in self.steps:
            self._by_round.setdefault(step.round, []).append(step)

    @classmethod
    def from_data(cls, data: Any, source: str = "script") -> Script:
        """Build from a parsed YAML list. Raises :class:`ScriptError` naming ``source[index].field``."""
        if data is None:
            return cls()
        if not isinstance(data, list):
            raise ScriptError(f"{source}: expected a list of steps, got {type(data).__name__}")
        return cls(step_from_mapping(item, f"{source}[{i}]") for i, item in enumerate(data))

    def for_round(self, round_no: int) -> list[ScriptStep]:
        return self._by_round.get(round_no, [])


class ScriptedIncidents:
    """An :class:`IncidentSource` that applies a :class:`Script` on top of another source (normally random)."""

    def __init__(self, base: IncidentSource, script: Script) -> None:
        self.base = base
        self.script = script

    def round_plan(self, round_no: int) -> RoundPlan:
        plan = self.base.round_plan(round_no)
        for step in self.script.for_round(round_no):
            if step.forget_shake is not None:
                plan = replace(plan, forget_shake=step.forget_shake)
            if step.early_lift is not None:
                plan = replace(plan, early_lift=0.5 if step.early_lift else None)
            if step.forces_problem:
                plan = replace(plan, problem=step.problem)
            if step.supervisor is not None:
                plan = replace(plan, supervisor=step.supervisor)
        return plan

    def shake(self, round_no: int, shake_no: int) -> ShakeFacts:
        facts = self.base.shake(round_no, shake_no)
        for step in self.script.for_round(round_no):
            if step.shake != shake_no:
                continue
            if step.faces is not None:
                # Forced faces are the outcome of this shake: no random drop may throw them away.
                facts = replace(facts, faces=step.faces, drop=None, drop_token=None)
            if step.overlap is not None:
                facts = replace(facts, overlap=step.overlap)
            if step.forces_drop:
                token = facts.drop_token if facts.drop_token is not None else 0
                facts = replace(facts, drop=step.drop, drop_token=token if step.drop is DropItem.TOKEN else None)
        return facts

    def lift(self, round_no: int, lift_no: int) -> LiftFacts:
        facts = self.base.lift(round_no, lift_no)
        for step in self.script.for_round(round_no):
            if step.lift == lift_no and step.touch is not None:
                facts = LiftFacts(step.touch, step.touch_token if step.touch else None)
        return facts
