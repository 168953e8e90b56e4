"""The engine thread: one thread owns the round engine and the ledger; everybody else submits commands.

Commands are drained in batches: every command of a batch runs on the engine, then the resulting events are
committed to the ledger in **one** durable transaction (group commit), and only then are the callers'
futures resolved and the events published. So an acknowledged bet is always a committed bet, and many
concurrent bets share one fsync.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from gameserver.engine import RoundEngine
from gameserver.events import Event
from gameserver.ledger import Ledger
from gameserver.model import EngineConfig, Rejection

T = TypeVar("T")
log = logging.getLogger("gameserver.service")
#: called on the engine thread with ``(value, None)`` or ``(None, exception)`` once a command is answered
Done = Callable[[Any, BaseException | None], None]
_Item = tuple[Callable[[RoundEngine], Any], Done]


class ServiceStopped(Exception):
    """The engine thread is not running (stopped, or stopped after a ledger failure)."""


class GameService:
    """Runs a :class:`RoundEngine` on its own thread with group commit to a :class:`Ledger`."""

    def __init__(
        self,
        config: EngineConfig,
        ledger: Ledger,
        clock: Callable[[], float],
        wallets: dict[str, int],
        tick_s: float = 0.02,
        max_batch: int = 1024,
    ) -> None:
        """Rebuild the engine from the ledger, cancel-and-refund a round left open by a previous process,
        and open a wallet for every configured player that has none (committed before returning).
        Raises LedgerError when the ledger cannot be written."""
        self.ledger = ledger
        self.engine = RoundEngine(config, clock, ledger.snapshot())
        self.engine.recover_after_restart()
        for player, balance in sorted(wallets.items()):
            if player not in self.engine.wallets:
                self.engine.open_wallet(player, balance)
        ledger.append(self.engine.drain())
        self._tick_s = tick_s
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._subscribers: list[Callable[[list[Event]], None]] = []
        self._thread = threading.Thread(target=self._run, name="engine", daemon=True)
        self._running = False
        self.failure: str | None = None

    def subscribe(self, callback: Callable[[list[Event]], None]) -> None:
        """Call ``callback(events)`` on the engine thread after each committed batch (must not block)."""
        self._subscribers.append(callback)

    def start(self) -> None:
        """Start the engine thread."""
        self._running = True
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the engine thread after the commands already queued; bounded by ``timeout_s``."""
        if self._running:
            self._running = False
            self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def submit(self, command: Callable[[RoundEngine], T]) -> Future[T]:
        """Queue ``command(engine)``; the future resolves after its events are committed. It fails with
        Rejection (nothing changed), ServiceStopped, or the ledger's error."""
        fut: Future[T] = Future()

        def done(value: Any, error: BaseException | None) -> None:
            if error is None:
                fut.set_result(value)
            else:
                fut.set_exception(error)

        self.submit_then(command, done)
        return fut

    def submit_then(self, command: Callable[[RoundEngine], Any], done: Done) -> None:
        """Queue ``command(engine)``; ``done(value, None)`` is called after its events are committed, or
        ``done(None, error)`` with Rejection (nothing changed), ServiceStopped or the ledger's error. ``done`` runs
        on the engine thread (or at once on the caller's when the engine is not running) and must not block."""
        if not self._running:
            done(None, ServiceStopped(self.failure or "the engine is not running"))
            return
        self._queue.put((command, done))

    def _run(self) -> None:
        while self._running:
            batch: list[_Item] = []
            try:
                item = self._queue.get(timeout=self._tick_s)
                while item is not None:
                    batch.append(item)
                    if len(batch) >= self._max_batch:
                        break
                    item = self._queue.get_nowait()
            except queue.Empty:
                pass
            self._step(batch)
        self._fail_pending(ServiceStopped(self.failure or "the engine stopped"))

    def _step(self, batch: list[_Item]) -> None:
        outcomes: list[tuple[Done, Any, BaseException | None]] = []
        for command, done in batch:
            try:
                outcomes.append((done, command(self.engine), None))
            except Rejection as exc:
                outcomes.append((done, None, exc))
            except Exception as exc:  # an engine bug: report it to the caller, keep the table running
                log.exception("command failed")
                outcomes.append((done, None, exc))
        self.engine.tick()
        events = self.engine.drain()
        if events:
            try:
                self.ledger.append(events)
            except Exception as exc:
                # Memory and disk now disagree: stop taking commands; a restart rebuilds from the ledger.
                self.failure = f"ledger write failed: {exc}"
                log.error(self.failure)
                self._running = False
                for done, _, _ in outcomes:
                    _answer(done, None, exc)
                return
        for done, value, error in outcomes:
            _answer(done, value, error)
        if events:
            for callback in self._subscribers:
                callback(events)

    def _fail_pending(self, exc: Exception) -> None:
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                _answer(item[1], None, exc)


def _answer(done: Done, value: Any, error: BaseException | None) -> None:
    try:
        done(value, error)
    except Exception:  # one caller's failing callback must not stop the engine or the other answers
        log.exception("answer callback failed")
