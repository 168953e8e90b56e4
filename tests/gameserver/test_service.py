"""The engine thread: an acknowledgement always follows the commit; a failed commit stops the service."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait

import pytest

from gameserver.engine import RoundEngine
from gameserver.events import Event
from gameserver.ledger import InMemoryLedger
from gameserver.model import BetAck, EngineConfig, Rejection
from gameserver.service import GameService, ServiceStopped
from tests.gameserver.gs_helpers import ManualClock


class BrokenDisk(InMemoryLedger):
    """The in-memory ledger, except that appends fail once ``fail`` is set (a disk cannot be made to fail
    on demand in a test, so this fake keeps the Ledger interface and simulates the I/O error)."""

    fail = False

    def append(self, events: Sequence[Event]) -> None:
        if self.fail:
            raise OSError("disk I/O error")
        super().append(events)


def make(ledger: InMemoryLedger) -> GameService:
    service = GameService(EngineConfig(betting_s=600), ledger, ManualClock(), {f"p{i}": 10_000 for i in range(8)})
    service.start()
    return service


def test_every_acknowledged_bet_is_already_committed() -> None:
    ledger = InMemoryLedger()
    service = make(ledger)
    try:
        service.submit(lambda e: None).result(timeout=5)  # the first tick opens round 1
        seen_committed: list[bool] = []
        futures: list[Future[tuple[BetAck, bool]]] = []

        def on_done(fut: Future[tuple[BetAck, bool]]) -> None:
            ack, _ = fut.result()
            seen_committed.append(any(b.bet_id == ack.bet_id for b, _ in ledger.bets()))

        def bet_command(i: int, n: int) -> Callable[[RoundEngine], tuple[BetAck, bool]]:
            return lambda e: e.place_bet(f"p{i}", f"c{n}", "odd", 100)

        def player(i: int) -> None:
            for n in range(25):
                fut = service.submit(bet_command(i, n))
                fut.add_done_callback(on_done)
                futures.append(fut)

        threads = [threading.Thread(target=player, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        _, not_done = wait(futures, timeout=10)
        # a future is done before its callbacks have run (concurrent.futures sets the result, wakes the waiters,
        # then calls back): give the last callbacks their moment
        deadline = time.monotonic() + 5
        while len(seen_committed) < 200 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not not_done and len(seen_committed) == 200 and all(seen_committed)
        assert all(ledger.wallets[f"p{i}"] == 10_000 - 25 * 100 for i in range(8))
        with pytest.raises(Rejection):
            service.submit(lambda e: e.place_bet("p0", "c0", "even", 100)).result(timeout=5)
    finally:
        service.stop()


def test_a_failed_commit_fails_the_callers_and_stops_the_service() -> None:
    ledger = BrokenDisk()
    service = make(ledger)
    try:
        service.submit(lambda e: None).result(timeout=5)
        ledger.fail = True
        fut = service.submit(lambda e: e.place_bet("p1", "x", "odd", 100))
        with pytest.raises(OSError, match="disk I/O error"):
            fut.result(timeout=5)
        assert service.failure is not None and "disk I/O error" in service.failure
        with pytest.raises(ServiceStopped):
            service.submit(lambda e: None).result(timeout=5)
        assert ledger.wallets["p1"] == 10_000  # nothing unconfirmed reached the ledger
    finally:
        service.stop()
