"""The explorer's state machine: Hypothesis draws whole tables, step by step, from the shipped step phrases, and
plays them live on a bench; the whole judge decides each table at its end.

A table (one Hypothesis example) has 1-3 players and incidents scripted for its first rounds (Given steps: a
result, overlapping or standing tokens, a drop, a forgotten shake, an early lift, a touch, a problem at the table,
a supervisor at the re-shake cap), then rules fire while their preconditions hold: a round opens; bets (also in the
last milliseconds of the betting period); retries and reused bet ids; disconnects and reconnects; supervisor pauses
with a resume or a cancel; server kills and crashes inside the write that ends a round (where the bench can restart
its server); lost, late, duplicated and foreign device reports (where it allows faults); time passing to the close,
the shake or beyond; and the round played to the end. Every line that ran is recorded: the recorded lines *are* the
scenario (:class:`Table`), and running them with ``certify`` replays it.

Preconditions read only what the bench did and what the server reported, both deterministic on the in-process
bench (virtual time), so a shrunk example replays exactly. An action the bench cannot do (not applicable there) or
the server refuses as a supervisor action is not recorded and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from harness.bench.config import Bench
from harness.cert.explore.runner import NotApplicable, StepLine, StepRunner
from harness.cert.steps.context import BET_NAMES, CertContext
from harness.cert.steps.devices import Injections
from harness.errors import AdapterError
from harness.judge.checks import Check, ClauseFailure
from harness.judge.findings import Finding
from harness.judge.oracle import failure_of
from harness.records import RoundEventKind

PLAYERS = ("alice", "bob", "carol")
MAX_ROUNDS = 3
STAKES = (100, 250, 1000, 2500)
BALANCES = (10_000, 3_000)
FACES = st.tuples(*[st.sampled_from("rw")] * 4).map(" ".join)
#: The device reports a round's table may lose, delay or repeat (device and timing steps), as step text.
ALTERATIONS = (
    "the reader's reads of this round reach the server only 0.2 seconds after it makes them",
    "the shaker's END report of this round is lost",
    "the reader's deciding read of this round is lost",
    "the bowl sensor's report of the lift of this round is lost",
    "the bowl sensor reports the lift of this round only 0.3 seconds after the bowl comes off",
    "3 noise frames arrive on the reader line as the bowl comes off",
    "3 noise frames arrive on the shaker line as the bowl comes off",
)


@dataclass
class Table:
    """One explored table as steps: the Given lines, then the When lines that ran, and the clause that failed."""

    given: list[StepLine] = field(default_factory=list)
    when: list[StepLine] = field(default_factory=list)
    failure: ClauseFailure | None = None
    error: str = ""  # a failure outside any clause check (a harness error the judge found no cause behind)

    @property
    def lines(self) -> list[StepLine]:
        return [*self.given, *self.when, StepLine("Then", "the oracle finds no difference")]


@dataclass
class Exploration:
    """What the machine saw over a run: every table's checks, the tables that failed, how many were played."""

    bench: Bench
    runner: StepRunner = field(default_factory=StepRunner)
    checks: list[Check] = field(default_factory=list)
    failing: list[Table] = field(default_factory=list)
    tables: int = 0

    def play(self, table: Table) -> CertContext:
        """Play ``table``'s lines on a fresh context of the bench (for a replay: all of them, judged)."""
        cert = CertContext(self.bench)
        try:
            self.runner.run(cert, table.lines, {"injections": Injections()})
        finally:
            if cert.rig is not None:
                cert.rig.close()
        return cert


def judged(cert: CertContext, exc: BaseException) -> ClauseFailure:
    """``exc`` as a clause failure: itself when it is one; else the judge's root cause behind it when the judge
    finds one; else a failure of no clause (``clause`` ""), carrying the error."""
    if isinstance(exc, ClauseFailure):
        return exc
    roots: tuple[Finding, ...] = ()
    if cert.rig is not None:
        try:
            roots = cert.verdict().roots
        except Exception:  # the server cannot be read: the error stands as it is
            roots = ()
    if roots:
        return failure_of(roots, f"{type(exc).__name__}: {exc}")
    return ClauseFailure("", f"{type(exc).__name__}: {exc}")


def machine_for(exploration: Exploration) -> type[RuleBasedStateMachine]:
    """A state machine class whose examples are tables on ``exploration``'s bench (its results go there)."""
    bench = exploration.bench
    realtime = bench.realtime

    class Tables(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.table = Table()
            self.cert = CertContext(bench)
            self.injections = Injections()
            self.players: list[str] = []
            self.connected: set[str] = set()
            self.in_play = False
            self.closed = False  # the current round's betting is known to have closed (a step waited for it)
            self.altered = 0  # device alterations in the current round
            self.alterations: set[str] = set()  # the current round's, each once (a second would double the first)
            self.fresh = False  # nothing but bets since the current round opened
            self.forgotten: set[int] = set()  # rounds whose dealer forgets to shake
            self.troubled: set[int] = set()  # rounds whose table's own supervisor resolves a problem (no second one)
            self.broken = False  # a step failed: nothing more is played
            self.corrected: set[int] = set()  # rounds corrected once already (a correction corrects a settlement)

        # ------------------------------------------------------------------ running lines
        def _run(self, *lines: StepLine, undo_on: Callable[[BaseException], bool] | None = None) -> bool:
            """Run ``lines`` and record them; False (nothing recorded) when the bench cannot do them or the
            server refused it as ``undo_on`` says. Raises the failure of a step, judged (:func:`judged`)."""
            try:
                exploration.runner.run(self.cert, lines, {"injections": self.injections})
            except NotApplicable:
                return False
            except Exception as exc:
                if undo_on is not None and undo_on(exc):
                    return False
                raise self._failed(lines, exc) from None
            self.table.when.extend(line for line in lines if line.keyword == "When")
            return True

        def _failed(self, lines: tuple[StepLine, ...], exc: BaseException) -> ClauseFailure:
            """Record the table as failing at ``lines`` (kept: the failing step is the scenario's last)."""
            self.table.when.extend(line for line in lines if line.keyword == "When")
            self.table.failure = judged(self.cert, exc)
            self.broken = True
            exploration.failing.append(self.table)
            return self.table.failure

        def _when(self, *texts: str, undo_on: Callable[[BaseException], bool] | None = None) -> bool:
            return self._run(*(StepLine("When", t) for t in texts), undo_on=undo_on)

        @property
        def round(self) -> int:
            return len(self.cert.rig.opened) if self.cert.rig is not None else 0

        def _server_paused(self) -> bool:
            rig = self.cert.rig
            if rig is None:
                return False
            rid = rig.current_round()
            state = False
            for event in rig.adapter.round_events():
                if event.round_id == rid and event.kind == RoundEventKind.PAUSED:
                    state = True
                elif event.round_id == rid and event.kind in (RoundEventKind.RESUMED, *_ENDS):
                    state = False
            return state

        def _ended(self) -> bool:
            rig = self.cert.rig
            return rig is None or rig.server_end(rig.current_round()) is not None

        # ------------------------------------------------------------------ the table's script
        @initialize(
            players=st.lists(st.tuples(st.sampled_from(PLAYERS), st.sampled_from(BALANCES)), min_size=1, max_size=3,
                             unique_by=lambda p: p[0]),
            incidents=st.lists(st.tuples(st.integers(1, MAX_ROUNDS), st.integers(0, 13), st.integers(0, 3), FACES),
                               max_size=4),
        )  # fmt: skip
        def script(self, players: list[tuple[str, int]], incidents: list[tuple[int, int, int, str]]) -> None:
            given = self.table.given
            for name, balance in players:
                given.append(StepLine("Given", f"player {name} has a balance of {balance:,}"))
                self.players.append(name)
            for n, kind, t, faces in sorted(incidents):
                given.extend(line for line in _incident(n, kind, t, faces) if line not in given)
                if kind == 5:
                    self.forgotten.add(n)
                if kind in (8, 9, 10):
                    self.troubled.add(n)
            self.connected = set(self.players)
            try:
                exploration.runner.run(self.cert, given)
            except Exception as exc:
                raise judged(self.cert, exc) from None

        # ------------------------------------------------------------------ rounds
        @precondition(lambda self: not self.in_play and self.round < MAX_ROUNDS)
        @rule()
        def open_round(self) -> None:
            if self._when(f"round {self.round + 1} opens"):
                self.in_play, self.closed, self.altered, self.fresh = True, False, 0, True
                self.alterations = set()

        @precondition(lambda self: self.in_play)
        @rule()
        def play_to_end(self) -> None:
            if self._when("the round is played to the end"):
                self.in_play = False

        @precondition(lambda self: self.in_play and not self.closed)
        @rule()
        def betting_closes(self) -> None:
            if not self._ended() and self._when("betting closes"):
                self.closed, self.fresh = True, False

        @precondition(lambda self: self.in_play and self.round not in self.forgotten)
        @rule()
        def shaking_done(self) -> None:
            if not self._ended() and self._when("the dealer has finished shaking"):
                self.fresh = False

        @precondition(lambda self: self.in_play)
        @rule(seconds=st.sampled_from((0.05, 0.3, 1.0)))
        def time_passes(self, seconds: float) -> None:
            if self._when(f"{seconds:g} seconds pass"):
                self.fresh = False

        # ------------------------------------------------------------------ players
        @precondition(lambda self: self.in_play)
        @rule(who=st.integers(0, 2), stake=st.sampled_from(STAKES), bet=st.sampled_from(BET_NAMES))
        def bet(self, who: int, stake: int, bet: str) -> None:
            player = self.players[who % len(self.players)]
            if player in self.connected:
                self._when(f"{player} tries to bet {stake:,} on {bet}")

        @precondition(lambda self: self.in_play and self.fresh and not realtime)
        @rule(who=st.integers(0, 2), stake=st.sampled_from(STAKES), bet=st.sampled_from(BET_NAMES),
              ms=st.sampled_from((1, 5, 20, 50)))  # fmt: skip
        def last_moment_bet(self, who: int, stake: int, bet: str, ms: int) -> None:
            player = self.players[who % len(self.players)]
            rig = self.cert.rig
            if player not in self.connected or rig is None or not rig.adapter.clock_is_sim_time:
                return
            rid = rig.current_round()
            opened = [e.at for e in rig.adapter.round_events() if e.round_id == rid and e.kind == RoundEventKind.OPENED]
            if opened and rig.now <= opened[0] + bench.timing.betting_s - ms / 1000:
                self._when(f"{player} tries to bet {stake:,} on {bet} {ms} ms before betting closes")

        @precondition(lambda self: self.in_play)
        @rule(who=st.integers(0, 2), conflict=st.booleans())
        def retry(self, who: int, conflict: bool) -> None:
            player = self.players[who % len(self.players)]
            confirmed = [r for r in self.cert.replies if r.player_id == player and r.accepted]
            if player not in self.connected or not confirmed:
                return
            if conflict:
                last = confirmed[-1]
                other = "small" if last.bet_type != "small" else "big"
                self._when(f"{player} sends that bet id again with {last.stake:,} on {other}")
            else:
                self._when(f"{player} sends that bet again")

        @precondition(lambda self: self.in_play)
        @rule(who=st.integers(0, 2))
        def connection(self, who: int) -> None:
            player = self.players[who % len(self.players)]
            if player in self.connected:
                if self._when(f"{player} disconnects"):
                    self.connected.discard(player)
            elif self._when(f"{player} reconnects"):
                self.connected.add(player)

        # ------------------------------------------------------------------ supervisor and server
        @precondition(lambda self: self.in_play)
        @rule(seconds=st.sampled_from((0.1, 0.3, 2.0)), cancel=st.booleans())
        def pause(self, seconds: float, cancel: bool) -> None:
            if self._ended() or self._server_paused() or self.round in self.troubled:
                return
            then = "the supervisor cancels the round" if cancel else "the supervisor resumes the round"
            lines = ("the supervisor pauses the round", f"{seconds:g} seconds pass", then)
            if self._when(lines[0], undo_on=_refusal):
                self.fresh = False
                if self._ended():  # the pause's own time ran the round out (a timeout cancelled it)
                    return
                if not self._when(lines[1]) or self._ended():
                    return
                self._when(lines[2], undo_on=_refusal)

        @precondition(lambda self: self.round > 0)
        @rule()
        def kill(self) -> None:
            if self._when("the server is killed and restarted"):
                self.fresh = False
                self.connected = set(self.players)

        @precondition(lambda self: self.in_play)
        @rule(after=st.integers(0, 12))
        def crash(self, after: int) -> None:
            if self._ended() or self._server_paused():
                return
            text = (
                f"the server dies after {after} statements of the write that ends round {self.round}, and is restarted"
            )
            if self._when(text):
                self.in_play = False
                self.connected = set(self.players)

        @precondition(lambda self: self.in_play and self.fresh and self.altered < 2)
        @rule(which=st.sampled_from(ALTERATIONS))
        def alter(self, which: str) -> None:
            if which not in self.alterations and self._when(which):
                self.altered += 1
                self.alterations.add(which)

        @precondition(lambda self: self.in_play and self.fresh and self.round > 1 and self.altered < 2)
        @rule(untagged=st.booleans(), back=st.integers(1, 2))
        def replay_result(self, untagged: bool, back: int) -> None:
            k = max(1, self.round - back)
            rig = self.cert.rig
            end = rig.server_end(rig.opened[k - 1]) if rig is not None else None
            if end is None or end.kind != RoundEventKind.SETTLED:
                return  # only a settled round's read can be sent again
            text = f"the reader sends round {k}'s result again{' untagged' if untagged else ''} as the bowl comes off"
            if self._when(text, undo_on=_no_read):
                self.altered += 1

        @precondition(lambda self: not self.in_play and self.round > 0)
        @rule(faces=FACES)
        def correct(self, faces: str) -> None:
            rig = self.cert.rig
            if rig is None:
                return
            rid = rig.current_round()
            if self.round in self.corrected:
                return
            end = rig.server_end(rid)
            if end is None or end.kind != RoundEventKind.SETTLED or (end.faces or "") == faces.replace(" ", "").upper():
                return  # only the last round, settled, to other faces can be corrected
            for player in self.players:  # no correction may take a balance below zero: room for the largest swing
                staked = sum(
                    r.stake for r in self.cert.replies if r.accepted and r.round_id == rid and r.player_id == player
                )
                if rig.adapter.balance(player) < 15 * staked:
                    return
            if self._when(f"the supervisor corrects round {self.round} to {faces}"):
                self.corrected.add(self.round)

        # ------------------------------------------------------------------ the judge
        def teardown(self) -> None:
            exploration.tables += 1
            try:
                if self.cert.rig is None or self.broken:
                    return
                if self.in_play:
                    self._when("the round is played to the end")
                self._run(StepLine("Then", "the oracle finds no difference"))
            finally:
                exploration.checks.extend(self.cert.checks.checks)
                if self.cert.rig is not None:
                    self.cert.rig.close()

    return Tables


_ENDS = (RoundEventKind.SETTLED, RoundEventKind.VOID, RoundEventKind.CANCELLED)


def _refusal(exc: BaseException) -> bool:
    """A supervisor action the server refused (nothing to pause, already paused, nothing paused)."""
    return isinstance(exc, AdapterError) and exc.code not in ("unreachable", "unavailable")


def _no_read(exc: BaseException) -> bool:
    """The round to replay left no read on the reader's line (its read was lost, or the server died first)."""
    return isinstance(exc, AssertionError) and "no read to replay" in str(exc)


def _incident(n: int, kind: int, t: int, faces: str) -> list[StepLine]:
    """The Given lines of incident ``kind`` (0-13) in round ``n``; ``t`` (0-3) picks a token, a shake or an item.
    Kinds 11-13 are two incidents in one round: a re-shake, then a standing token or a drop in the shake after it."""
    item = ("bowl", "plate", "token")[t % 3]
    texts: dict[int, tuple[str, ...]] = {
        0: (f"round {n} lands {faces}",),
        1: (f"in round {n} shake {1 + t % 2} lands {faces}",),
        2: (f"in round {n} the tokens overlap and land {faces}",),
        3: (f"in round {n} the {item} drops during shake {1 + t // 3 % 2}",),
        4: (f"in round {n} token {t} is left standing after shake {1 + t % 2}",),
        5: (f"in round {n} the dealer forgets to shake",),
        6: (f"in round {n} the bowl is lifted before betting closes",),
        7: (f"in round {n} the bowl touches token {t} when it is lifted",),
        8: (f"in round {n} a problem stops the table after {(0.1, 0.4, 0.7, 1.2)[t]:g} s and is solved after 0.3 s",),
        9: (f"in round {n} a problem stops the table after {(0.1, 0.4, 0.7, 1.2)[t]:g} s and is solved after 5 s",),
        10: (f"in round {n} the supervisor needs {(0.2, 5.0)[t % 2]:g} s to clear the re-shake cap",),
        11: (f"in round {n} the {item} drops during shake 1", f"in round {n} token {t} is left standing after shake 2"),
        12: (f"in round {n} token {t} is left standing after shake 1", f"in round {n} the {item} drops during shake 2"),
        13: (
            f"in round {n} token {t} is left standing after shake 1",
            f"in round {n} token {3 - t} is left standing after shake 2",
        ),
    }
    return [StepLine("Given", text) for text in texts.get(kind, ())]
