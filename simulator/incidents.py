"""Where every chance event of the table is decided: token faces, drops, touches, dealer mistakes, problems.

The model asks an :class:`IncidentSource` at fixed decision points (per round, per shake, per lift). The random
source draws from the seeded streams; a script (:mod:`simulator.script`) overrides some answers and otherwise
passes the random ones through. Both use this one path, so a scripted scenario exercises exactly the code that a
random incident does.

Every call consumes a fixed number of draws whatever the answer. Token and shaker draws are budgeted per round: each
round takes a fixed block from its stream, sized for two shakes and two lifts; a third shake or lift in a round
draws from an overflow stream of that round alone (seeded by the round number). So a script that adds re-shakes to
round 3 (a standing token, a drop) leaves the outcome of every other round unchanged; later rounds' timings shift
only because round 3 took longer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from simulator.events import DropItem
from simulator.fastinit import install_fast_init
from simulator.profile import Profile
from simulator.rng import Stream, Streams, Subsystem


@dataclass(frozen=True, slots=True)
class Problem:
    """An unexpected problem (ERR-1) ``after`` seconds into betting; the supervisor needs ``resolve`` seconds."""

    after: float
    resolve: float


@dataclass(frozen=True, slots=True)
class RoundPlan:
    """Per-round decisions, taken when betting opens."""

    forget_shake: bool  # SH-4a
    early_lift: float | None  # SH-4b: lift at this fraction of the time left between shake end and the deadline
    problem: Problem | None  # ERR-1
    supervisor: float | None  # seconds to clear a re-shake-cap pause (ERR-1); None: drawn from the profile


@dataclass(frozen=True, slots=True)
class ShakeFacts:
    """What one shake produced. ``faces`` uses R/W/S (S: standing on edge). ``drop_at`` is the fraction of the
    shake's duration at which the drop happened."""

    faces: str
    overlap: bool
    drop: DropItem | None
    drop_token: int | None
    drop_at: float


@dataclass(frozen=True, slots=True)
class LiftFacts:
    touched: bool  # SH-5
    token: int | None


# Built once per round, shake or lift.
for _cls in (Problem, RoundPlan, ShakeFacts, LiftFacts):
    install_fast_init(_cls)

# The answers of almost every round and lift; frozen, so one shared instance serves them all.
_QUIET_ROUND = RoundPlan(False, None, None, None)
_CLEAN_LIFT = LiftFacts(False, None)


class IncidentSource(Protocol):
    """Answers the model's chance questions. Implementations must be deterministic given their seed."""

    def round_plan(self, round_no: int) -> RoundPlan: ...

    def shake(self, round_no: int, shake_no: int) -> ShakeFacts: ...

    def lift(self, round_no: int, lift_no: int) -> LiftFacts: ...


_TOKEN_DRAWS = 13  # per shake: face, standing, fall for each of 4 tokens, then overlap
_SHAKER_DRAWS = 3  # per shake: bowl drop, plate drop, when in the shake
_LIFT_DRAWS = 2  # per lift: touch, which token


class RandomIncidents:
    """Draws every incident from the profile's rates, on the tokens, shaker, dealer and problems streams."""

    def __init__(self, profile: Profile, streams: Streams) -> None:
        self.profile = profile
        self._tokens = streams.stream(Subsystem.TOKENS).round_blocks(_TOKEN_DRAWS * 2)
        self._shaker = streams.stream(Subsystem.SHAKER).round_blocks(_SHAKER_DRAWS * 2 + _LIFT_DRAWS * 2)
        self._streams = streams
        self._round = -1
        # This round's blocks and how much of each is used; past the end, draws come from the overflow streams.
        self._token_block: list[float] = []  # the fetched blocks of several rounds; this round's start at *_used
        self._shaker_block: list[float] = []
        self._token_used = self._token_end = 0
        self._shaker_used = self._shaker_end = 0
        self._overflows: dict[Subsystem, Stream] = {}
        self._mistakes: Stream = streams.stream(Subsystem.DEALER, 1)
        self._problems: Stream = streams.stream(Subsystem.PROBLEMS)
        self._resolve = profile.problems.resolve.bind(self._problems)
        mu, mistake, _, _ = self._mistakes.buffers()
        pu, problem_u, _, _ = self._problems.buffers()
        self._draw_plan = (mu, mistake, pu, problem_u)
        self._p_forget, self._p_early = profile.mistakes.forget_shake, profile.mistakes.early_lift
        self._p_problem = profile.problems.rate
        tk, sh = profile.tokens, profile.shaker
        self._p_red = tk.p_red
        self._p_token = (tk.p_standing, tk.p_fall, tk.p_overlap)
        self._p_shaker = (sh.p_drop_bowl, sh.p_drop_plate, sh.p_touch)

    def round_plan(self, round_no: int) -> RoundPlan:
        # Five uniforms in a fixed order (forget, early, early's moment; problem, its moment) and the resolve time,
        # whatever the answer; buffer pops written out as the bound samplers do (Stream.buffers).
        mu, mistake, pu, problem_u = self._draw_plan
        forget = (mu.pop() if mu else mistake()) < self._p_forget
        early_u = mu.pop() if mu else mistake()
        early_at = mu.pop() if mu else mistake()
        has_problem = pu.pop() if pu else problem_u()
        after_u = pu.pop() if pu else problem_u()
        resolve = self._resolve()
        early = early_at if early_u < self._p_early else None
        if has_problem < self._p_problem:
            problem = Problem(after_u * self.profile.table.betting_period, resolve)
            return RoundPlan(forget, early, problem, None)
        if forget or early is not None:
            return RoundPlan(forget, early, None, None)
        return _QUIET_ROUND

    def _start(self, round_no: int) -> None:
        self._round = round_no
        self._token_block, self._token_used, self._token_end = self._tokens.take_span()
        self._shaker_block, self._shaker_used, self._shaker_end = self._shaker.take_span()
        self._overflows.clear()

    def _draws(self, round_no: int, tokens: int, shaker: int) -> tuple[list[float], int, list[float], int]:
        """The next ``tokens`` token draws and ``shaker`` shaker draws of this round, each as (list, offset): from
        the round's blocks while they last, then from the round's overflow streams (seeded by the round number)."""
        if round_no != self._round:
            self._start(round_no)
        t, ti = self._token_block, self._token_used
        if ti + tokens <= self._token_end:
            self._token_used = ti + tokens
        else:
            t, ti = self._overflow(Subsystem.TOKENS, round_no).block(tokens), 0
        b, bi = self._shaker_block, self._shaker_used
        if bi + shaker <= self._shaker_end:
            self._shaker_used = bi + shaker
        else:
            b, bi = self._overflow(Subsystem.SHAKER, round_no).block(shaker), 0
        return t, ti, b, bi

    def _overflow(self, subsystem: Subsystem, round_no: int) -> Stream:
        """The overflow stream of ``subsystem`` for this round (one per round, created on first use)."""
        stream = self._overflows.get(subsystem)
        if stream is None:
            stream = self._overflows[subsystem] = self._streams.stream(subsystem, 1, round_no)
        return stream

    def shake(self, round_no: int, shake_no: int) -> ShakeFacts:
        t, i, b, j = self._draws(round_no, _TOKEN_DRAWS, _SHAKER_DRAWS)
        # hot path: written out for the four tokens. Per token: face, standing, fall; then overlap.
        f0, s0, d0, f1, s1, d1, f2, s2, d2, f3, s3, d3, overlap_u = t[i : i + _TOKEN_DRAWS]
        r0, r1, r2, r3 = self._p_red
        p_standing, p_fall, p_overlap = self._p_token
        faces = (
            ("S" if s0 < p_standing else "R" if f0 < r0 else "W")
            + ("S" if s1 < p_standing else "R" if f1 < r1 else "W")
            + ("S" if s2 < p_standing else "R" if f2 < r2 else "W")
            + ("S" if s3 < p_standing else "R" if f3 < r3 else "W")
        )
        overlap = overlap_u < p_overlap
        p_bowl, p_plate, _ = self._p_shaker
        bowl_u, plate_u, at_u = b[j], b[j + 1], b[j + 2]
        if bowl_u < p_bowl:
            return ShakeFacts(faces, overlap, DropItem.BOWL, None, at_u)
        if plate_u < p_plate:
            return ShakeFacts(faces, overlap, DropItem.PLATE, None, at_u)
        if d0 < p_fall or d1 < p_fall or d2 < p_fall or d3 < p_fall:  # the first token that fell
            fell = 0 if d0 < p_fall else 1 if d1 < p_fall else 2 if d2 < p_fall else 3
            return ShakeFacts(faces, overlap, DropItem.TOKEN, fell, at_u)
        return ShakeFacts(faces, overlap, None, None, at_u)

    def lift(self, round_no: int, lift_no: int) -> LiftFacts:
        _, _, b, j = self._draws(round_no, 0, _LIFT_DRAWS)
        touch_u, which_u = b[j], b[j + 1]
        if touch_u < self._p_shaker[2]:
            return LiftFacts(True, min(int(which_u * 4), 3))
        return _CLEAN_LIFT
