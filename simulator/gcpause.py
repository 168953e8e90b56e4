"""Pausing Python's cyclic garbage collector while the model builds millions of objects that all stay alive.

Every ground-truth event a run records stays alive in its log, so each collection during a run (or while a log's
typed events are built) re-scans a growing heap for cycles that are not there (the cost: docs/performance.md).
Reference counting still frees everything else at once.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration, restoring its previous state after.

    The event log keeps every event alive, so each collection re-scans a growing heap. The model makes no reference
    cycles in steady state (``gc.collect()`` after 20,000 chaotic rounds finds none), so nothing accumulates while
    paused; reference counting still frees everything else at once.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] > gc.get_threshold()[0] and gc.get_freeze_count() == 0:
                # hot path: everything allocated while paused sits in the youngest generation, so the first
                # collection after re-enabling would scan the whole event log at once. Moving it straight to the
                # oldest generation is where surviving objects end up anyway (freeze, then unfreeze, are list
                # splices); skipped when someone else keeps objects frozen, and when the pause allocated less
                # than one young collection's worth (gc.get_freeze_count walks every frozen object, so it is
                # asked only when the move is worth it).
                gc.freeze()
                gc.unfreeze()
            gc.enable()
