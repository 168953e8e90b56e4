"""Hypothesis stateful test: random bets, table reports, clock steps and supervisor actions against the
engine, with every event also written to a real SQLite ledger and the in-memory projection.

A ``restart`` rule rebuilds the engine from the SQLite file alone (as after kill -9 between commands).
Checked after every step: no balance below zero; each confirmed bet settled/voided/cancelled at most once;
round phases only move forward; sum of balances + house result is constant. At the end: both ledgers and the
engine agree on every wallet, bet and round.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from gameserver.bets import BetType
from gameserver.engine import RoundEngine
from gameserver.events import EventKind, ReportKind, TableReport
from gameserver.ledger import InMemoryLedger
from gameserver.model import PHASE_RANK, EngineConfig, Phase, Rejection
from gameserver.sqlite_ledger import SqliteLedger
from tests.gameserver.gs_helpers import ManualClock

PLAYERS = ("p1", "p2", "p3")
OPENING = {"p1": 5_000, "p2": 20_000, "p3": 300}
FACES = st.text(alphabet="RWSU", min_size=4, max_size=4)
ENDINGS = {EventKind.ROUND_SETTLED, EventKind.ROUND_VOIDED, EventKind.ROUND_CANCELLED}
PHASE_OF = {
    EventKind.ROUND_OPENED: Phase.BETTING,
    EventKind.BETTING_CLOSED: Phase.CLOSED,
    EventKind.ROUND_SETTLED: Phase.SETTLED,
    EventKind.ROUND_VOIDED: Phase.VOID,
    EventKind.ROUND_CANCELLED: Phase.CANCELLED,
}


class EngineMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        shm = Path("/dev/shm")  # a real SQLite file; on tmpfs so that 1,600 fsyncs stay cheap
        self.dir = tempfile.mkdtemp(prefix="gs-stateful-", dir=shm if shm.is_dir() else None)
        self.sqlite = SqliteLedger(Path(self.dir) / "ledger.db")
        self.memory = InMemoryLedger()
        self.clock = ManualClock()
        config = EngineConfig(betting_s=10, round_gap_s=1, reshake_cap=2, pause_timeout_s=30, result_timeout_s=20)
        self.engine = RoundEngine(config, self.clock)
        for player, balance in OPENING.items():
            self.engine.open_wallet(player, balance)
        self.ended: dict[int, int] = {}  # bet_id -> times settled/refunded
        self.phase: dict[int, Phase] = {}
        self.house = 0
        self._commit()

    def _commit(self) -> None:
        events = self.engine.drain()
        self.sqlite.append(events)
        self.memory.append(events)
        for e in events:
            if e.kind is EventKind.BET_ACCEPTED:
                self.house += e.data["stake"]
            if e.kind in ENDINGS:
                for line in e.data["bets"]:
                    self.ended[line["bet_id"]] = self.ended.get(line["bet_id"], 0) + 1
                    self.house -= line["returned"]
            if e.kind is EventKind.ROUND_CORRECTED:
                self.house -= sum(line["delta"] for line in e.data["bets"])
            if e.kind in PHASE_OF:
                assert e.round_id is not None
                new = PHASE_OF[e.kind]
                old = self.phase.get(e.round_id)
                assert old is None or PHASE_RANK[new] > PHASE_RANK[old], (e.round_id, old, new)
                self.phase[e.round_id] = new

    @rule(
        player=st.sampled_from(PLAYERS),
        bet_type=st.sampled_from([*BetType, "nonsense"]),
        stake=st.sampled_from([0, 50, 100, 250, 300, 1_000, 5_000, 2_000_000]),
        client=st.integers(0, 6),
    )
    def bet(self, player: str, bet_type: str, stake: int, client: int) -> None:
        try:
            self.engine.place_bet(player, f"c{client}", str(bet_type), stake)
        except Rejection:
            assert self.engine.drain() == []
        self._commit()

    @rule(
        kind=st.sampled_from(list(ReportKind)),
        faces=FACES,
        overlap=st.booleans(),
        touch=st.booleans(),
    )
    def report(self, kind: ReportKind, faces: str, overlap: bool, touch: bool) -> None:
        self.engine.report(TableReport(kind, "h", faces=faces, overlap=overlap, touch=touch))
        self._commit()

    @rule(faces=st.text(alphabet="RW", min_size=4, max_size=4))
    def clean_round_end(self, faces: str) -> None:
        for kind in (ReportKind.BOWL_ON, ReportKind.SHAKE_START, ReportKind.SHAKE_END):
            self.engine.report(TableReport(kind))
        r = self.engine.active
        if r is not None and r.phase is Phase.BETTING:
            self.clock.t = max(self.clock.t, r.closes_at)
        self.engine.report(TableReport(ReportKind.BOWL_OFF))
        self.engine.report(TableReport(ReportKind.RESULT, faces=faces))
        self._commit()

    @rule(seconds=st.sampled_from([0.5, 3.0, 11.0, 31.0]))
    def advance(self, seconds: float) -> None:
        self.clock.t += seconds
        self.engine.tick()
        self._commit()

    @rule(action=st.sampled_from(["pause", "resume", "cancel"]))
    def supervise(self, action: str) -> None:
        try:
            if action == "resume":
                self.engine.resume()
            else:
                getattr(self.engine, action)("hypothesis")
        except Rejection:
            pass
        self._commit()

    @precondition(lambda self: self.engine.last_settled is not None)
    @rule(faces=st.text(alphabet="RW", min_size=4, max_size=4))
    def correct(self, faces: str) -> None:
        last = self.engine.last_settled
        assert last is not None
        with contextlib.suppress(Rejection):
            self.engine.correct(last.round_id, faces)
        self._commit()

    @rule()
    def restart(self) -> None:
        """The process dies between commands; a new engine is rebuilt from the SQLite file alone."""
        self.engine = RoundEngine(self.engine.config, self.clock, self.sqlite.snapshot())
        self.engine.recover_after_restart()
        self._commit()

    @invariant()
    def engine_and_projection_agree(self) -> None:
        assert self.engine.wallets == self.memory.wallets

    @invariant()
    def balances_never_negative(self) -> None:
        assert all(v >= 0 for v in self.engine.wallets.values())

    @invariant()
    def each_bet_ended_at_most_once(self) -> None:
        assert all(n == 1 for n in self.ended.values())

    @invariant()
    def money_is_conserved(self) -> None:
        assert sum(self.engine.wallets.values()) + self.house == sum(OPENING.values())

    def teardown(self) -> None:
        try:
            assert self.sqlite.snapshot().wallets == self.engine.wallets == self.memory.wallets
            assert self.sqlite.rounds() == self.memory.rounds()
            assert self.sqlite.bets() == self.memory.bets()
            assert self.sqlite.events() == self.memory.events()
        finally:
            self.sqlite.close()
            shutil.rmtree(self.dir, ignore_errors=True)


EngineMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestEngineStateful = EngineMachine.TestCase
