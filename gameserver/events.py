"""The engine's append-only event log entries and the table reports it consumes.

Every state change of the round engine is one :class:`Event`; the ledger stores them in order and derives its
tables (wallets, rounds, bets) from them. ``data`` holds JSON-compatible values only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gameserver.fastinit import fast_init


class EventKind(StrEnum):
    """Every kind of event the engine emits. ``SIGNIFICANT`` lists the ones GLI 2.8.8 asks to be flagged."""

    WALLET_OPENED = "wallet_opened"
    ROUND_OPENED = "round_opened"
    BET_ACCEPTED = "bet_accepted"
    BETTING_CLOSED = "betting_closed"
    SHAKE_DETECTED = "shake_detected"
    BOWL_LIFTED = "bowl_lifted"
    READ_OVERLAP = "read_overlap"
    RESHAKE = "reshake"
    ROUND_PAUSED = "round_paused"
    ROUND_RESUMED = "round_resumed"
    ROUND_SETTLED = "round_settled"
    ROUND_VOIDED = "round_voided"
    ROUND_CANCELLED = "round_cancelled"
    ROUND_CORRECTED = "round_corrected"
    REPORT_IGNORED = "report_ignored"  # in older ledgers only: ignored reports are counted (gameserver/noise.py)
    REPORT_HELD = "report_held"  # kept back: during a pause, or waiting for a report from another line
    DEVICE_INCIDENT = "device_incident"  # a device line refused a frame or changed its role (gameserver/line_guard.py)


SIGNIFICANT: frozenset[EventKind] = frozenset(
    {
        EventKind.RESHAKE,
        EventKind.ROUND_PAUSED,
        EventKind.ROUND_RESUMED,
        EventKind.ROUND_VOIDED,
        EventKind.ROUND_CANCELLED,
        EventKind.ROUND_CORRECTED,
        EventKind.DEVICE_INCIDENT,
    }
)

#: Events that end a round (settled, voided or cancelled).
ROUND_ENDS: frozenset[EventKind] = frozenset(
    {EventKind.ROUND_SETTLED, EventKind.ROUND_VOIDED, EventKind.ROUND_CANCELLED}
)

#: Events that a player's stream receives (no other player's bets).
PUBLIC: frozenset[EventKind] = frozenset(EventKind) - {EventKind.BET_ACCEPTED, EventKind.WALLET_OPENED}


@fast_init
@dataclass(frozen=True)
class Event:
    """One entry of the append-only log: ``seq`` strictly increases, ``at`` never decreases."""

    seq: int
    at: float
    kind: EventKind
    round_id: int | None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def significant(self) -> bool:
        """True for voids, re-shakes, pauses, resumptions, cancellations and corrections."""
        return self.kind in SIGNIFICANT

    def to_json(self) -> dict[str, Any]:
        """A JSON-compatible dict of this event (the WebSocket and /v1/events representation)."""
        return {
            "seq": self.seq,
            "at": self.at,
            "kind": str(self.kind),
            "round_id": self.round_id,
            "significant": self.kind in SIGNIFICANT,  # hot path: :attr:`significant` without the property call
            "data": self.data,
        }


class ReportKind(StrEnum):
    """What the table's devices tell the engine (decoded from protocol frames by the device gateway)."""

    BOWL_ON = "bowl_on"  # BOWL ON: bowl seated on the plate (GP-2)
    SHAKE_START = "shake_start"  # SHAKER START
    SHAKE_END = "shake_end"  # SHAKER END: a shake is complete if no DROP came since its START
    DROP = "drop"  # SHAKER DROP: something fell during the shake (SH-2)
    BOWL_OFF = "bowl_off"  # BOWL OFF touch=0|1: bowl lifted (GP-3; SH-4b before close; SH-5 with touch)
    RESULT = "result"  # READER RESULT faces overlap (EQ-3, SH-1, SH-3)
    REARRANGED = "rearranged"  # READER REARRANGED faces: re-read after spreading overlapping tokens (SH-1)
    PROBLEM = "problem"  # CONSOLE PROBLEM, a device link down, a gateway error (ERR-1)
    RESOLVED = "resolved"  # CONSOLE RESOLVED (ERR-2)


@fast_init
@dataclass(frozen=True)
class TableReport:
    """One fact about the physical table.

    ``faces`` (RESULT/REARRANGED) is 4 characters of R/W/S/U, token 0 first (S standing, U unreadable);
    ``overlap`` flags an SH-1 read; ``touch`` flags a bowl that touched a token while lifted (SH-5);
    ``detail`` explains a PROBLEM or a DROP; ``round_tag`` is the round the device tagged its frame with
    (docs/protocol.md §6, "Round tag"; None: untagged, tied to a round by arrival time); ``happened_at`` is
    when the fact happened in the engine's clock, estimated from the frame's device time (protocol 1.2,
    :mod:`gameserver.device_clock`; None: the frame had no ``at``, only its arrival is known).
    """

    kind: ReportKind
    device: str = ""
    faces: str | None = None
    overlap: bool = False
    touch: bool = False
    detail: str = ""
    round_tag: str | None = None
    happened_at: float | None = None
