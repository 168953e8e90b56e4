"""The engine's data: configuration, round and bet records, acknowledgements, rejections and the snapshot a
restarted engine is rebuilt from. Pure data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gameserver.bets import STAKE_QUANTUM, BetResult, BetType
from gameserver.events import TableReport
from gameserver.fastinit import fast_init


class Phase(StrEnum):
    """Round phases, in the only order a round may go through them (a round ends in exactly one of the last
    three). A pause is an overlay on BETTING or CLOSED, not a phase."""

    BETTING = "betting"
    CLOSED = "closed"
    SETTLED = "settled"
    VOID = "void"
    CANCELLED = "cancelled"


PHASE_RANK: dict[Phase, int] = {
    Phase.BETTING: 0,
    Phase.CLOSED: 1,
    Phase.SETTLED: 2,
    Phase.VOID: 2,
    Phase.CANCELLED: 2,
}
ENDED: frozenset[Phase] = frozenset({Phase.SETTLED, Phase.VOID, Phase.CANCELLED})


@dataclass(frozen=True)
class EngineConfig:
    """Rules the RULES.md leaves open (see docs/server.md). Times in seconds, money in minor units."""

    betting_s: float = 15.0
    round_gap_s: float = 3.0
    auto_open: bool = True
    reshake_cap: int = 3
    pause_timeout_s: float = 60.0
    result_timeout_s: float = 30.0
    reorder_grace_s: float = 0.5
    chip_unit: int = 100
    min_stake: int = 100
    max_stake: int = 1_000_000

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.betting_s <= 0:
            problems.append("betting_s must be > 0")
        if self.round_gap_s < 0:
            problems.append("round_gap_s must be >= 0")
        if self.reshake_cap < 0:
            problems.append("reshake_cap must be >= 0")
        if self.pause_timeout_s <= 0:
            problems.append("pause_timeout_s must be > 0")
        if self.result_timeout_s <= 0:
            problems.append("result_timeout_s must be > 0")
        if self.reorder_grace_s < 0:
            problems.append("reorder_grace_s must be >= 0")
        if self.chip_unit <= 0 or self.chip_unit % STAKE_QUANTUM:
            problems.append(f"chip_unit must be a positive multiple of {STAKE_QUANTUM}, got {self.chip_unit}")
        if self.min_stake < self.chip_unit or self.min_stake % max(self.chip_unit, 1):
            problems.append("min_stake must be a multiple of chip_unit and at least chip_unit")
        if self.max_stake < self.min_stake:
            problems.append("max_stake must be >= min_stake")
        if problems:
            raise ValueError("; ".join(problems))

    def check_stake(self, stake: int) -> None:
        """Raises Rejection when ``stake`` is off the chip unit or outside the table limits."""
        if stake % self.chip_unit:
            raise Rejection(
                "stake_not_chip_multiple", f"stake {stake} is not a multiple of the chip unit {self.chip_unit}"
            )
        if stake < self.min_stake:
            raise Rejection("stake_below_minimum", f"stake {stake} is below the minimum {self.min_stake}")
        if stake > self.max_stake:
            raise Rejection("stake_above_maximum", f"stake {stake} is above the maximum {self.max_stake}")


class Rejection(Exception):
    """A refused request. ``code`` is stable (API error code); nothing was changed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@fast_init
@dataclass(frozen=True)
class BetAck:
    """The acknowledgement of a confirmed bet (also what an idempotent replay returns)."""

    bet_id: int
    client_bet_id: str
    player_id: str
    round_id: int
    bet_type: BetType
    stake: int
    placed_at: float
    balance_before: int
    balance_after: int

    def to_json(self) -> dict[str, Any]:
        """JSON-compatible form."""
        return {
            "bet_id": self.bet_id,
            "client_bet_id": self.client_bet_id,
            "player_id": self.player_id,
            "round_id": self.round_id,
            "bet_type": str(self.bet_type),
            "stake": self.stake,
            "placed_at": self.placed_at,
            "balance_before": self.balance_before,
            "balance_after": self.balance_after,
        }


@dataclass
class BetRecord:
    """A confirmed bet as the engine tracks it while its round can still change it."""

    ack: BetAck
    request_hash: str
    result: BetResult = BetResult.PENDING
    returned: int = 0


@dataclass(frozen=True)
class HeldReport:
    """A table report the engine keeps to apply later: ``why`` is ``paused`` (replayed on resume) or the
    report from another line it is waiting for (applied when that arrives, or when ``at`` + the reorder grace
    window has passed; see :mod:`gameserver.ordering`)."""

    report: TableReport
    at: float
    why: str


@dataclass
class RoundRecord:
    """The engine's working state of one round."""

    round_id: int
    opened_at: float
    closes_at: float
    phase: Phase = Phase.BETTING
    ever_shaken: bool = False  # a SHAKER START since OPEN (SH-4a is judged on this at close)
    shake_due: float | None = None  # closed unshaken: until then, a late SHAKER START dated before the close counts
    shaking: bool = False  # START seen, END not yet
    shaken: bool = False  # a complete shake since OPEN or the last re-shake
    lifted: bool = False
    covered: bool = False  # the bowl sensor reported the bowl on since the tokens were placed or the last lift (PROC-2)
    reshakes: int = 0
    reshakes_since_resume: int = 0
    paused_reason: str | None = None
    paused_at: float | None = None
    betting_left: float | None = None
    awaiting_since: float | None = None
    faces: str | None = None
    seen: str = ""  # faces an overlapped read of this shake showed (U: hidden); a later read must agree (PROC-1)
    ended_at: float | None = None
    bets: list[BetRecord] = field(default_factory=list)
    held: list[HeldReport] = field(default_factory=list)  # reports kept back, in arrival order


def read_problem(seen: str, faces: str, overlap: bool) -> str | None:
    """The ERR-1 pause reason for a read (no standing token) that cannot be used, or None: an unreadable read (not
    four of R/W/U, or a U without an overlap), or one that turns a token an earlier overlapped read of the same
    shake showed red or white (``seen``; a hidden U, or no such read, contradicts nothing): SH-1 spreads the tokens
    without turning any (RULES.md PROC-1)."""
    if len(faces) != 4 or any(c not in "RWU" for c in faces) or ("U" in faces and not overlap):
        return f"unreadable_result: {faces!r}"
    if any(s in "RW" and f in "RW" and s != f for s, f in zip(seen, faces, strict=False)):
        return f"contradicting_result: {seen!r} then {faces!r}"
    return None


@dataclass(frozen=True)
class EngineSnapshot:
    """What a (re)started engine needs from the ledger: committed wallets, id counters, idempotency keys,
    the round that was open (if any) with its confirmed bets, and the last settled round (for corrections)."""

    wallets: dict[str, int] = field(default_factory=dict)
    next_seq: int = 1
    next_round_id: int = 1
    next_bet_id: int = 1
    last_at: float = 0.0
    idempotency: dict[tuple[str, str], tuple[str, BetAck]] = field(default_factory=dict)
    open_round: RoundRecord | None = None
    last_settled: RoundRecord | None = None


def request_hash(bet_type: str, stake: int, round_id: int | None) -> str:
    """The body fingerprint compared when a client re-sends an idempotency id."""
    return f"{bet_type}|{stake}|{'' if round_id is None else round_id}"
