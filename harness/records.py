"""The vocabulary the bench and the judge share: what a server said about bets and rounds, and the players the
bench asks it to know. Frozen records only; nothing here does I/O or imports another harness layer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ROUND_END_KINDS = ("settled", "void", "cancelled")


@dataclass(frozen=True, slots=True)
class PlayerSpec:
    """A player the server must know, with its opening balance (minor units)."""

    player_id: str
    balance: int


@dataclass(frozen=True, slots=True)
class BetReply:
    """The server's answer to a bet: accepted (with its id and balances) or rejected (with an error code).
    ``confirmed`` is False when the player never saw an answer (disconnected before the confirmation)."""

    player_id: str
    client_bet_id: str
    bet_type: str
    stake: int
    accepted: bool
    confirmed: bool = True
    bet_id: str = ""
    round_id: str = ""
    code: str = ""
    balance_before: int | None = None
    balance_after: int | None = None


@dataclass(frozen=True, slots=True)
class RoundEvent:
    """A round event as the server published it, normalised.

    ``kind``: opened, closed, reshake, paused, resumed, settled, void, cancelled. ``clause`` for reshake, void
    and cancelled; ``faces`` (4 of R/W) for settled; ``at`` the server's own time stamp; ``raw`` what it sent.
    """

    round_id: str
    kind: str
    at: float
    clause: str = ""
    faces: str = ""
    reason: str = ""
    raw: Mapping[str, Any] | None = None

    @property
    def ends_round(self) -> bool:
        return self.kind in ROUND_END_KINDS


@dataclass(frozen=True, slots=True)
class BetRecordRow:
    """One row of a player's bet record (the BETS.csv columns of the shared formats)."""

    bet_id: str
    round_id: str
    player_id: str
    bet_type: str
    wagered: int
    result: str  # win | lose | push | refund | pending
    returned: int
    round_status: str  # in_progress | settled | void | cancelled
    outcome: str  # 4 of R/W, or empty
    balance_before: int
    balance_after: int
    client_bet_id: str = ""
