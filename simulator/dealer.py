"""The dealer: follows the lamp, handles the tokens, shaker and bowl, and applies the table rules physically.

Per round (GP-1..3): tokens and bowl on, shake, wait for *betting closed*, lift, reveal. The dealer applies the
rules as a real table does: overlap → spread with the stick, outcome unchanged (SH-1); a drop → reassemble and shake
again (SH-2); a standing token → shake again (SH-3); forgot to shake, early lift, touch on lift → void (SH-4a,
SH-4b, SH-5); when several void causes meet, the first established decides (RULES.md, "Precedence of void causes").
A round that needs more re-shakes than ``table.max_reshakes`` since its last resume is an unexpected problem (ERR-1):
the table pauses and the supervisor comes; if he resolves it within ``table.pause_timeout`` the round resumes with
the re-shake it needed (ERR-2), otherwise it is cancelled (ERR-3). While the round is paused (by the table's own
problem, or by the system: the lamp shows *paused*) the dealer neither lifts the bowl nor reads the tokens.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from simulator.events import (
    BowlLifted,
    BowlPlaced,
    Dropped,
    PauseReason,
    Rearranged,
    Reassembled,
    Reshake,
    ReshakeReason,
    Revealed,
    RoundStatus,
    ShakeEnded,
    ShakeSkipped,
    ShakeStarted,
    TokensPlaced,
)
from simulator.incidents import ShakeFacts
from simulator.lamp import LampState
from simulator.rng import RoundStream

if TYPE_CHECKING:
    from simulator.seams import DealerTable, RoundBook

Proc = Generator[Any, Any, Any]
_DEALABLE = (LampState.BETTING_OPEN, LampState.PAUSED)
# hot path: enum members read on every round, as module constants (why: simulator.lamp).
_OPEN, _CLOSED, _VOID = LampState.BETTING_OPEN, LampState.BETTING_CLOSED, LampState.VOID
_PAUSED = LampState.PAUSED
_SETTLED = RoundStatus.SETTLED


class Dealer:
    """The dealer process of one table."""

    def __init__(self, table: DealerTable, stream: RoundStream) -> None:
        self.table = table
        self.stream = stream
        timing = table.profile.timing
        self.place = timing.place.bind(stream)
        self.shake_time = timing.shake.bind(stream)
        self.react = timing.react.bind(stream)
        self.lift_time = timing.lift.bind(stream)
        self.rearrange = timing.rearrange.bind(stream)
        self.reassemble = timing.reassemble.bind(stream)
        self.cap = table.profile.table.max_reshakes
        self._timeout = table.env.timeout  # bound once: each ``env.timeout`` read builds a new bound method

    def run(self) -> Proc:
        """Deal every round the lamp opens. A round that opened while the dealer was still busy with the previous
        one (e.g. reassembling after a drop in a round already cancelled) is dealt as soon as the dealer is free."""
        lamp = self.table.lamp
        dealt = 0
        while True:
            signal = lamp.signal
            if not (signal.round > dealt and signal.state in _DEALABLE):
                signal = yield lamp.opened
            dealt = signal.round
            book = self.table.book_for(signal.round)
            self.stream.start_round(book.round)
            yield from self._round(book)
            book.cleared.succeed()

    def _round(self, book: RoundBook) -> Proc:
        table, env, emit, timeout = self.table, self.table.env, self.table.emit, self._timeout
        r = book.round
        emit((TokensPlaced, env.now, r))
        yield timeout(self.place())
        emit((BowlPlaced, env.now, r))
        if book.ended:
            return
        if book.plan.forget_shake:
            emit((ShakeSkipped, env.now, r))
            facts = table.incidents.shake(r, 1)
            faces = facts.faces.replace("S", "W")  # tokens laid by hand lie flat
            overlap = False
        else:
            shaken = yield from self._shake(book)
            if shaken is None:
                return
            faces, overlap = shaken.faces, shaken.overlap

        lifting_early = False
        lamp = table.lamp
        deadline = lamp.signal.deadline
        if book.plan.early_lift is not None and lamp.state is _OPEN and deadline is not None:
            yield timeout(book.plan.early_lift * max(deadline - env.now, 0.0))
            lifting_early = True
        else:
            while (closed := self._betting_closed(book)) is None:
                yield lamp.changed
            if not closed:
                return
            yield timeout(self.react())
        if book.ended:
            return

        lift_no = 0
        while True:
            lift_no += 1
            yield timeout(self.lift_time())
            lifted = table.incidents.lift(r, lift_no)
            if (book.pause_depth or lamp.signal.state is _PAUSED) and not (yield from self._unpaused(book)):
                return  # ERR-1: the bowl stays on while the round is paused; the round ended meanwhile
            # SH-4b is about the outcome being revealed early: judged when the bowl is off, not when the lift began.
            early = lifting_early and lamp.signal.state is not _CLOSED
            now = env.now
            emit((BowlLifted, now, r, early, lifted.touched, lifted.token))
            emit((Revealed, now, r, faces, overlap))
            if book.ended:
                return
            # The first void cause established decides: an early lift (during betting), then a forgotten shake
            # (established when betting closed, before this lift), then a touch on this lift.
            if early:
                table.end_round(book, RoundStatus.VOID, "SH-4b")
                return
            if book.plan.forget_shake:
                table.end_round(book, RoundStatus.VOID, "SH-4a")
                return
            if lifted.touched:
                table.end_round(book, RoundStatus.VOID, "SH-5")
                return
            if "S" not in faces:
                break
            budget = yield from self._may_reshake(book)
            if budget is None:
                return
            book.reshakes += 1
            book.since_resume += budget
            emit((Reshake, env.now, r, ReshakeReason.STANDING, book.reshakes))
            yield timeout(self.place())
            emit((BowlPlaced, env.now, r))
            shaken = yield from self._shake(book)
            if shaken is None:
                return
            faces, overlap = shaken.faces, shaken.overlap
        if overlap:
            yield timeout(self.rearrange())
            if (book.pause_depth or lamp.signal.state is _PAUSED) and not (yield from self._unpaused(book)):
                return  # ERR-1: no read of the spread tokens while the round is paused
            emit((Rearranged, env.now, r, faces))
        if not book.ended:
            table.end_round(book, _SETTLED, None, faces)

    def _betting_closed(self, book: RoundBook) -> bool | None:
        """What the lamp says about this round now: True once it shows *betting closed*; False if the round ended
        or was voided, or the lamp moved on to another round (the table is cleared without a lift); None while
        betting is still open (the dealer waits for the lamp's next change)."""
        signal = self.table.lamp.signal
        if book.ended or signal.round != book.round or signal.state is _VOID:
            return False
        if signal.state is _CLOSED:
            return True
        return None

    def _shake(self, book: RoundBook) -> Proc:
        """Shake until a shake ends without a drop; returns its facts, or None if the round ended meanwhile."""
        table, env, emit, timeout = self.table, self.table.env, self.table.emit, self._timeout
        r = book.round
        while True:
            book.shakes += 1
            facts: ShakeFacts = table.incidents.shake(r, book.shakes)
            emit((ShakeStarted, env.now, r, book.shakes))
            duration = self.shake_time()
            if facts.drop is None:
                yield timeout(duration)
                emit((ShakeEnded, env.now, r, book.shakes))
                return None if book.ended else facts
            yield timeout(duration * facts.drop_at)
            emit((Dropped, env.now, r, book.shakes, facts.drop, facts.drop_token))
            if book.ended:
                return None
            budget = yield from self._may_reshake(book)
            if budget is None:
                return None
            yield timeout(self.reassemble())
            emit((Reassembled, env.now, r))
            if book.ended:
                return None
            book.reshakes += 1
            # counted when it happens: a resume during the reassembly (another problem's pause) starts a new budget
            book.since_resume += budget
            emit((Reshake, env.now, r, ReshakeReason.DROP, book.reshakes))
            emit((BowlPlaced, env.now, r))
            if book.ended:
                return None

    def _may_reshake(self, book: RoundBook) -> Generator[Any, Any, int | None]:
        """Whether the round goes on with the re-shake it needs (SH-2, SH-3): None if not, else what the re-shake
        adds to ``since_resume`` when it happens. Within ``max_reshakes`` re-shakes since the last resume: 1. Past
        them, ERR-1: the table pauses and the supervisor comes; he resolves it in a time drawn from
        ``problems.resolve`` (or the script's ``supervisor``): within ``pause_timeout`` the round resumes (ERR-2)
        and this re-shake belongs to the budget before the resume (a game server counts it when the report arrives,
        before its pause): 0; otherwise the round is cancelled (ERR-3): None."""
        if book.since_resume < self.cap:
            return 1
        table = self.table
        table.pause(book, PauseReason.RESHAKE_CAP)
        settings = table.profile
        resolve = settings.problems.resolve.sample(self.stream)  # drawn even when scripted: later draws stay put
        if book.plan.supervisor is not None:
            resolve = book.plan.supervisor
        limit = settings.table.pause_timeout
        yield self._timeout(min(resolve, limit))
        if book.ended:
            return None
        if resolve <= limit:
            table.resume(book)  # the budget starts again: ``since_resume`` is 0
            return 0
        table.end_round(book, RoundStatus.CANCELLED, "ERR-3")
        return None

    def _unpaused(self, book: RoundBook) -> Proc:
        """ERR-1: wait while the round is paused, by the table (its own problem) or by the system (the lamp shows
        *paused* for this round). True once neither is paused; False if the round ended meanwhile (a pause the
        system ends without resuming is the table's ERR-3: :meth:`simulator.table.Table.lamp_changed`)."""
        lamp, r = self.table.lamp, book.round
        while not book.ended:
            signal = lamp.signal
            lamp_paused = signal.state is _PAUSED and signal.round == r
            if not lamp_paused and not book.pause_depth:
                return True
            resumed = book.resumed
            yield lamp.changed | resumed if book.pause_depth and resumed is not None else lamp.changed
        return False
