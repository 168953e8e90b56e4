"""The round engine: a pure state machine over one table, with the clock injected.

No I/O, no threads, no asyncio: callers feed it commands (bets, table reports, supervisor actions) and
:meth:`RoundEngine.tick` calls, and take the resulting :class:`~gameserver.events.Event` list with
:meth:`RoundEngine.drain`; persisting them (the ledger) and acknowledging is the caller's job. Every clause of
RULES.md that concerns a round is applied here (see docs/server.md for the decisions the rules leave open).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gameserver import ordering
from gameserver.bets import BetType, bet_type_of
from gameserver.corrections import apply_correction
from gameserver.deadlines import round_deadline
from gameserver.events import Event, EventKind, ReportKind, TableReport
from gameserver.lift import lift_void
from gameserver.model import (
    ENDED,
    BetAck,
    BetRecord,
    EngineConfig,
    EngineSnapshot,
    HeldReport,
    Phase,
    Rejection,
    RoundRecord,
    read_problem,
    request_hash,
)
from gameserver.noise import IgnoredReports
from gameserver.settlement import close_round

_RESHAKE_CLAUSE = {"drop": "SH-2", "standing": "SH-3"}
_SHAKER_REPORTS = frozenset({ReportKind.SHAKE_START, ReportKind.SHAKE_END, ReportKind.DROP})


class RoundEngine:
    """One table's rounds, wallets and event log.

    Guarantees: a balance never goes below zero; a confirmed bet is settled, refunded or (by a correction)
    re-settled only through an event; round phases only move forward; event ``at`` never decreases.
    """

    def __init__(
        self, config: EngineConfig, clock: Callable[[], float], snapshot: EngineSnapshot | None = None
    ) -> None:
        snap = snapshot or EngineSnapshot()
        self.config = config
        self._clock = clock
        self._last_at = snap.last_at
        self._seq = snap.next_seq
        self._next_round_id = snap.next_round_id
        self._next_bet_id = snap.next_bet_id
        self.wallets: dict[str, int] = dict(snap.wallets)
        self._idem: dict[tuple[str, str], tuple[str, BetAck]] = dict(snap.idempotency)
        self.round: RoundRecord | None = snap.open_round
        self.last_settled: RoundRecord | None = snap.last_settled
        self._next_open_at = self._last_at
        self._outbox: list[Event] = []
        self._shaker_timed = False  # the last shaker report carried device time (protocol 1.2)
        self.ignored = IgnoredReports()  # counted, not logged (gameserver/noise.py)
        self.failed: dict[str, str] = {}  # parts of the gateway that failed -> why (fail closed)

    # ---------------------------------------------------------------- plumbing
    def now(self) -> float:
        """The injected clock, clamped so that it never goes backwards."""
        at = float(self._clock())
        if at > self._last_at:  # hot path: max() as a test (the same value, NaN included)
            self._last_at = at
        return self._last_at

    def _emit(self, kind: EventKind, round_id: int | None, /, **data: Any) -> Event:
        event = Event(self._seq, self.now(), kind, round_id, data)
        self._seq += 1
        self._outbox.append(event)
        return event

    def drain(self) -> list[Event]:
        """Take the events emitted since the last call (in order)."""
        out, self._outbox = self._outbox, []
        return out

    @property
    def active(self) -> RoundRecord | None:
        """The round in progress (betting or closed), or None between rounds."""
        r = self.round
        return r if r is not None and r.phase not in ENDED else None

    # ---------------------------------------------------------------- wallets and bets
    def open_wallet(self, player_id: str, balance: int) -> None:
        """Create a wallet with an opening balance. Raises Rejection if it exists or is negative."""
        if player_id in self.wallets:
            raise Rejection("wallet_exists", f"player {player_id!r} already has a wallet")
        if balance < 0:
            raise Rejection("invalid_balance", "an opening balance must be >= 0")
        self.wallets[player_id] = balance
        self._emit(EventKind.WALLET_OPENED, None, player_id=player_id, balance=balance)

    def place_bet(
        self, player_id: str, client_bet_id: str, bet_type: str, stake: int, round_id: int | None = None
    ) -> tuple[BetAck, bool]:
        """Confirm a bet in the current round (once the caller has committed the events).

        Returns ``(ack, replayed)``; ``replayed`` is True when the same idempotency id with the same body was
        already confirmed (nothing changes). Raises Rejection (nothing changes) for an id reused with another
        body, an unknown bet type, a stake off the chip unit or the limits, a failed part (``gateway_failure``,
        :meth:`part_failed`), no round taking bets, a pause, a wrong round id, an unknown wallet or insufficient
        balance.
        """
        digest = request_hash(bet_type, stake, round_id)
        seen = self._idem.get((player_id, client_bet_id))
        if seen is not None:
            if seen[0] != digest:
                raise Rejection("idempotency_conflict", f"bet id {client_bet_id!r} was used with another body")
            return seen[1], True
        try:
            kind = bet_type_of(bet_type)
        except ValueError:
            allowed = ", ".join(t.value for t in BetType)
            raise Rejection("unknown_bet_type", f"unknown bet type {bet_type!r}; allowed: {allowed}") from None
        self.config.check_stake(stake)
        if self.failed:
            raise self._failure_rejection()
        r = self.round  # a round taking bets is active: BETTING is not an end phase
        if r is None or r.phase is not Phase.BETTING or self.now() >= r.closes_at:
            raise Rejection("betting_closed", "no round is taking bets")
        if r.paused_reason is not None:
            raise Rejection("round_paused", f"round {r.round_id} is paused ({r.paused_reason})")
        if round_id is not None and round_id != r.round_id:
            raise Rejection("wrong_round", f"round {round_id} is not taking bets (current round {r.round_id})")
        balance = self.wallets.get(player_id)
        if balance is None:
            raise Rejection("unknown_player", f"player {player_id!r} has no wallet")
        if stake > balance:
            raise Rejection("insufficient_balance", f"stake {stake} exceeds the balance {balance}")
        now, left = self.now(), balance - stake
        ack = BetAck(self._next_bet_id, client_bet_id, player_id, r.round_id, kind, stake, now, balance, left)
        self._next_bet_id += 1
        self.wallets[player_id] = ack.balance_after
        r.bets.append(BetRecord(ack, digest))
        self._idem[(player_id, client_bet_id)] = (digest, ack)
        self._emit(EventKind.BET_ACCEPTED, r.round_id, request_hash=digest, **ack.to_json())
        return ack, False

    # ---------------------------------------------------------------- round lifecycle
    def open_round(self) -> RoundRecord:
        """Open betting on a new round (lamp on). Raises Rejection if a round is still in progress."""
        if self.active is not None:
            raise Rejection("round_in_progress", f"round {self.active.round_id} has not ended")
        if self.failed:
            raise self._failure_rejection()
        now = self.now()
        r = RoundRecord(self._next_round_id, now, now + self.config.betting_s)
        self._next_round_id += 1
        self.round = r
        self._emit(EventKind.ROUND_OPENED, r.round_id, closes_at=r.closes_at, betting_s=self.config.betting_s)
        return r

    def tick(self) -> None:
        """Apply every deadline that has passed: the reorder grace window of held reports, close betting, pause
        on a missing result (ERR-1), cancel on a pause timeout (ERR-3), open the next round when auto-open is on."""
        now = self.now()
        r = self.round
        if r is None or r.phase in ENDED:
            if self.config.auto_open and now >= self._next_open_at and not self.failed:
                self.open_round()
            return
        if r.paused_reason is not None:
            assert r.paused_at is not None
            if now - r.paused_at >= self.config.pause_timeout_s:
                self._end(r, Phase.CANCELLED, "ERR-3", f"pause timeout ({r.paused_reason})")
            return
        if r.held:  # hot path: nothing to expire otherwise
            self._expire(r, now)
            if self.active is not r or r.paused_reason is not None:
                return
        if r.phase is Phase.BETTING and now >= r.closes_at:
            r.phase = Phase.CLOSED
            r.awaiting_since = r.closes_at
            self._emit(EventKind.BETTING_CLOSED, r.round_id, bets=len(r.bets))
            if not r.ever_shaken and self._shaker_timed and self.config.reorder_grace_s > 0:
                r.shake_due = r.closes_at + self.config.reorder_grace_s  # a START dated before the close may be late
            elif not r.ever_shaken:
                self._end(r, Phase.VOID, "SH-4a", "no shake started before betting closed")
                return
        if r.shake_due is not None and now >= r.shake_due:
            self._end(r, Phase.VOID, "SH-4a", "no shake started before betting closed")
            return
        waited = now - r.awaiting_since if r.awaiting_since is not None else 0.0
        if r.phase is Phase.CLOSED and waited >= self.config.result_timeout_s:
            self._pause(r, "no_result")

    def next_deadline(self) -> float | None:
        """The earliest time at which :meth:`tick` may change anything (open, close, void, pause, cancel, apply a
        held report); None when only a report or a call can. Before it, :meth:`tick` is a no-op."""
        r = self.round
        if r is None or r.phase in ENDED:
            return self._next_open_at if self.config.auto_open else None
        return round_deadline(r, self.config)

    def report(self, report: TableReport) -> None:
        """Apply one table report per docs/protocol.md §7 (GP-3, SH-1..SH-5, ERR-1/2). Reports for no round or
        tagged with another round are ignored (counted in ``ignored``: no event, no change); during a pause they
        are held and replayed on resume; one that must follow another line's report waits (gameserver/ordering.py)."""
        self.tick()
        r = self.active
        kind = report.kind
        if kind in _SHAKER_REPORTS:
            self._shaker_timed = report.happened_at is not None
        if r is None or (report.round_tag is not None and report.round_tag != str(r.round_id)):
            self._ignored(r, report, "no_round" if r is None else "other_round")
        elif r.paused_reason is not None and kind is ReportKind.RESOLVED:
            self.resume()
        elif r.paused_reason is not None:
            if kind in (ReportKind.PROBLEM, ReportKind.RESOLVED):
                self._ignored(r, report, "paused")
            else:
                self._hold(r, report, ordering.PAUSED)
        else:
            self._apply(r, report)
            self._release(r)

    def _apply(self, r: RoundRecord, report: TableReport, expired: bool = False) -> None:
        """Apply one report to the active, unpaused round ``r`` (or hold it, unless its window ``expired``).
        First of all rules: a ``BOWL OFF`` that arrives after the close but happened (device time, protocol
        1.2) during this round's betting voids SH-4b — it is never held and no later rule looks at it."""
        if r.phase is Phase.CLOSED and ordering.lifted_during_betting(r, report):
            self._end(r, Phase.VOID, "SH-4b", "bowl lifted before betting closed (device time)")
            return
        wait = None if expired else ordering.hold_reason(r, report)
        if wait is not None:
            self._hold(r, report, wait)
            return
        kind = report.kind
        if kind is ReportKind.SHAKE_START and r.shake_due is not None:
            r.shake_due = None
            if report.happened_at is None or report.happened_at >= r.closes_at:
                self._end(r, Phase.VOID, "SH-4a", "no shake started before betting closed (device time)")
                return
        if kind is ReportKind.PROBLEM:
            self._pause(r, f"device_problem: {report.device} {report.detail}".strip())
        elif kind is ReportKind.SHAKE_START and not r.lifted:
            r.ever_shaken = r.shaking = True
        elif kind is ReportKind.SHAKE_END and r.shaking:
            r.shaking = False
            r.shaken = True
            self._emit(EventKind.SHAKE_DETECTED, r.round_id)
        elif kind is ReportKind.DROP and not r.lifted:
            self._reshake(r, "drop")
        elif kind is ReportKind.BOWL_OFF:
            self._bowl_off(r, report)
        elif kind in (ReportKind.RESULT, ReportKind.REARRANGED) and r.lifted:
            self._read(r, report)
        elif kind is ReportKind.BOWL_ON:
            r.covered = True
        else:
            self._ignored(r, report, "not_applicable")

    def _hold(self, r: RoundRecord, report: TableReport, why: str) -> None:
        if ordering.hold_full(r, report):
            return self._ignored(r, report, "hold_full")
        r.held.append(HeldReport(report, self.now(), why))
        data = {"report": str(report.kind), "device": report.device, "faces": report.faces, "why": why}
        self._emit(EventKind.REPORT_HELD, r.round_id, **data)

    def _release(self, r: RoundRecord) -> None:
        """Apply, in arrival order, every held report whose wait is over, until none is (or ``r`` ended or
        paused: the rest stay held)."""
        progress = True
        while progress and r.held and self.active is r and r.paused_reason is None:  # hot path: r.held first
            progress = False
            for i, held in enumerate(r.held):
                if ordering.hold_reason(r, held.report) is None:
                    del r.held[i]
                    self._apply(r, held.report)
                    progress = True
                    break

    def _expire(self, r: RoundRecord, now: float) -> None:
        """Apply, as if never held, the held reports whose grace window has ended (earliest window first; a read
        waiting for a held lift has none: :func:`gameserver.ordering.expiry`)."""
        grace = self.config.reorder_grace_s
        while self.active is r and r.paused_reason is None and r.held:
            due = ordering.expiry(r, grace)
            if due is None or due[1] > now:
                return
            held = r.held.pop(due[0])
            self._apply(r, held.report, expired=True)
            self._release(r)

    def _bowl_off(self, r: RoundRecord, report: TableReport) -> None:
        if r.lifted:
            self._ignored(r, report, "already_lifted")
        elif (void := lift_void(r, report)) is not None:
            self._end(r, Phase.VOID, *void)
        else:
            r.lifted, r.covered = True, False
            self._emit(EventKind.BOWL_LIFTED, r.round_id)

    def _read(self, r: RoundRecord, report: TableReport) -> None:
        """SH-3 first: a standing token means a re-shake whatever else the read says; then a read that is
        unreadable or turns a token an overlapped read showed pauses (ERR-1, PROC-1); then SH-1 (overlap: wait)."""
        faces = report.faces or ""
        if len(faces) == 4 and "S" in faces and all(c in "RWSU" for c in faces):
            self._reshake(r, "standing")
        elif (problem := read_problem(r.seen, faces, report.overlap)) is not None:
            self._pause(r, problem)
        elif report.overlap:
            r.seen = faces
            self._emit(EventKind.READ_OVERLAP, r.round_id, faces=faces)
        else:
            r.faces = faces
            self._end(r, Phase.SETTLED, "", "")

    def _reshake(self, r: RoundRecord, reason: str) -> None:
        r.reshakes += 1
        r.reshakes_since_resume += 1
        r.shaken = r.shaking = r.lifted = False
        r.seen = ""
        if r.awaiting_since is not None:
            r.awaiting_since = self.now()
        self._emit(EventKind.RESHAKE, r.round_id, reason=reason, count=r.reshakes, clause=_RESHAKE_CLAUSE[reason])
        if r.reshakes_since_resume > self.config.reshake_cap:
            self._pause(r, "reshake_cap_exceeded")

    def _ignored(self, r: RoundRecord | None, report: TableReport, why: str) -> None:
        self.ignored.add(self.now(), report, why, None if r is None else r.round_id)

    def _pause(self, r: RoundRecord, reason: str) -> None:
        now = self.now()
        r.paused_reason = reason
        r.paused_at = now
        r.betting_left = max(0.0, r.closes_at - now) if r.phase is Phase.BETTING else None
        self._emit(EventKind.ROUND_PAUSED, r.round_id, reason=reason, phase=str(r.phase))

    def _end(self, r: RoundRecord, phase: Phase, clause: str, reason: str) -> None:
        """Settle (on ``r.faces``), void or cancel the round; every pending bet gets exactly one outcome
        (:func:`gameserver.settlement.close_round`)."""
        now = self.now()
        kind, data = close_round(r, phase, clause, reason, now, self.wallets)
        self._next_open_at = now + self.config.round_gap_s
        if phase is Phase.SETTLED:
            self.last_settled = r
        self._emit(kind, r.round_id, **data)

    # ---------------------------------------------------------------- supervisor
    def pause(self, reason: str) -> None:
        """Supervisor pause (ERR-1). Raises Rejection when no round is in progress or it is already paused."""
        r = self._require_active()
        if r.paused_reason is not None:
            raise Rejection("already_paused", f"round {r.round_id} is already paused")
        self._pause(r, f"supervisor: {reason}" if reason else "supervisor")

    def resume(self) -> None:
        """Resume a paused round (ERR-2): betting gets its remaining time back; the re-shake budget and the
        result timeout restart; the table reports held during the pause are then applied in arrival order.
        Raises Rejection when nothing is paused."""
        r = self._require_active()
        if r.paused_reason is None:
            raise Rejection("not_paused", f"round {r.round_id} is not paused")
        if self.failed:
            raise self._failure_rejection()
        now = self.now()
        if r.phase is Phase.BETTING and r.betting_left is not None:
            r.closes_at = now + r.betting_left
        r.paused_reason = None
        r.paused_at = None
        r.reshakes_since_resume = 0
        if r.phase is Phase.CLOSED:
            r.awaiting_since = now
        self._emit(EventKind.ROUND_RESUMED, r.round_id, phase=str(r.phase), closes_at=r.closes_at)
        held, r.held = r.held, []
        for i, item in enumerate(held):  # what the table did during the pause, in order
            if self.active is not r:
                return
            if r.paused_reason is not None:  # paused again (e.g. an unreadable read): keep the rest held
                r.held.extend(held[i:])
                return
            self._apply(r, item.report)
        self._release(r)

    def cancel(self, reason: str) -> None:
        """Cancel the round in progress and refund every bet (ERR-3). Raises Rejection when none is."""
        r = self._require_active()
        self._end(r, Phase.CANCELLED, "ERR-3", f"supervisor: {reason}" if reason else "supervisor")

    def recover_after_restart(self) -> None:
        """Cancel and refund a round found in progress at start-up (docs/server.md: restart policy)."""
        r = self.active
        if r is not None:
            self._end(r, Phase.CANCELLED, "ERR-3", "server restart")

    def correct(self, round_id: int, faces: str) -> None:
        """Correct a misread outcome of the most recently settled round and re-settle its bets
        (see :func:`gameserver.corrections.apply_correction`; raises Rejection, changing nothing)."""
        data = apply_correction(self.last_settled, round_id, faces, self.wallets)
        self._emit(EventKind.ROUND_CORRECTED, round_id, **data)

    def device_incident(self, device: str, why: str, frame: str) -> None:
        """Record that line ``device`` refused ``frame`` (or changed its role) for reason ``why``; nothing changes."""
        r = self.active
        self._emit(EventKind.DEVICE_INCIDENT, None if r is None else r.round_id, device=device, why=why, frame=frame)

    # ---------------------------------------------------------------- the gateway failing closed
    def part_failed(self, part: str, reason: str) -> None:
        """A part of the device gateway (a device line's thread, the trace, ...) failed: the round in play is paused
        (ERR-1, reason ``gateway_failure: PART: REASON``) and, until every failed part recovered
        (:meth:`part_recovered`), no bet is accepted, no round opens and no round resumes (``gateway_failure``).
        Bets already accepted keep their state: the paused round is resumed by the supervisor after recovery, or
        cancelled and refunded (ERR-3: supervisor cancel, pause timeout)."""
        self.failed[part] = reason
        r = self.active
        if r is not None and r.paused_reason is None:
            self._pause(r, f"gateway_failure: {part}: {reason}")

    def part_recovered(self, part: str) -> None:
        """``part`` works again; once no part is failed, bets, rounds and resumes are taken again."""
        self.failed.pop(part, None)

    def _failure_rejection(self) -> Rejection:
        parts = "; ".join(f"{p}: {why}" for p, why in sorted(self.failed.items()))
        why = f"a part of the server failed ({parts}); nothing is taken until it recovers"
        return Rejection("gateway_failure", why)

    def _require_active(self) -> RoundRecord:
        r = self.active
        if r is None:
            raise Rejection("no_active_round", "no round is in progress")
        return r
